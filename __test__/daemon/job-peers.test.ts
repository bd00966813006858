// A sandboxed job must not leave its sandbox through the daemon that runs it
// (src/daemon/peer.rs, tools/mcp/http.ts; SECURITY.md, "Sandboxed jobs"). The job is
// started as the Gemini extension starts its jobs: `native-shell-service mcp` with the
// manifest's own arguments (gemini-extension.json: --daemon --sandbox --sandbox-network
// --sandbox-caches), its daemon one that also listens on a loopback port without a token
// (`daemon --listen`, with the MCP server behind `/mcp` on its private unix socket).
// From inside, python3 and socat knock on each door (the daemon's unix socket, its TCP
// port, the MCP socket) and ask for a command that reports its own confinement. Every
// door must close unread; the same doors answer a client that is not a job.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';

import { eventually } from '../helpers';
import { BIN, ensureBuilt } from '../mcp/setup';
import { listen, type Listening, stopAll } from '../remote/listen';
import { ROOT, ShellExecutionService, stopDaemons } from './setup';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

/** The `mcp` command and flags of the extension's manifest (after the bundle's path). */
function extensionArgs(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8')) as {
    mcpServers: { shell: { args: string[] } };
  };
  return manifest.mcpServers.shell.args.slice(1);
}

async function extensionSession(project: string, socket: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...extensionArgs(), '--project-root', project, '--daemon-socket', socket],
    cwd: project,
    env: { ...process.env } as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'nss-job-peers-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    async run(command: string): Promise<string> {
      const r = await client.callTool({ name: 'run_shell_command', arguments: { command, ai_callback_delay: 100 } }, undefined, { timeout: 120_000 });
      const content = r.content as Array<{ type: string; text: string }>;
      return content.map((c) => c.text).join('\n');
    },
  };
}

/** /proc/PID/stat's state letter and parent pid of every process. */
function processes(): Array<{ pid: number; state: string; ppid: number }> {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(name), state: state!, ppid: Number(ppid) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The daemon binary serving `socket`. */
function daemonOf(socket: string): number | undefined {
  return processes().find((p) => {
    try {
      const argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0');
      return argv[0]!.endsWith('native-shell-daemon') && argv.includes(socket);
    } catch {
      return false;
    }
  })?.pid;
}

const zombieChildren = (pid: number) => processes().filter((p) => p.ppid === pid && p.state === 'Z').map((p) => p.pid);

/** A shell-quoted argument. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Bytes as a printf format that writes exactly them. */
const printfBytes = (b: Buffer) => [...b].map((x) => `\\x${x.toString(16).padStart(2, '0')}`).join('');

/** The daemon's protocol: hello, open (in `project`), run the confinement report. */
function daemonFrames(project: string): Buffer {
  const frame = (m: unknown) => {
    const body = Buffer.from(JSON.stringify(m));
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 1);
    return Buffer.concat([head, body]);
  };
  return Buffer.concat([
    frame({ id: 1, method: 'hello', params: { version: 'job', protocol: 1, pid: 0 } }),
    frame({ id: 2, method: 'open', params: { options: { projectRoot: project } } }),
    frame({ id: 3, method: 'run', params: { command: "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status", options: null } }),
  ]);
}

/** Run outside the sandbox, a command's report says so. */
const UNCONFINED = /NoNewPrivs:(\\t|\t)0/;

describe('a sandboxed job and the daemon that runs it', () => {
  let l: Listening;
  let upstream: string;

  it('knocks on every door of the daemon and gets no answer', async () => {
    ensureBuilt();
    l = await listen({ token: false });
    const run = dirname(l.place.socket);
    const dir = readdirSync(run).find((n) => n.startsWith('native-shell-mcp-'));
    expect(dir, 'the MCP server beside the daemon').toBeDefined();
    upstream = join(run, dir!, 'mcp.sock');
    const port = new URL(l.url).host;
    const project = l.place.project;
    copyFileSync(join(__dirname, 'fixtures', 'job-attack.py'), join(project, 'job-attack.py'));

    const session = await extensionSession(project, l.place.socket);
    try {
      // The job is sandboxed (what it would escape).
      expect(await session.run("grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status")).toMatch(/NoNewPrivs:\t1/);

      const python = await session.run(
        [
          `python3 job-attack.py unix ${q(l.place.socket)} ${q(project)}`,
          `python3 job-attack.py tcp ${q(port)} ${q(project)}`,
          `python3 job-attack.py mcp ${q(upstream)}`,
        ].join('; '),
      );
      const frames = printfBytes(daemonFrames(project));
      const upgrade = printfBytes(Buffer.from(`GET /daemon HTTP/1.1\r\nHost: ${port}\r\nConnection: Upgrade\r\nUpgrade: native-shell-service/1\r\n\r\n`));
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'job', version: '1' } },
      });
      const post = printfBytes(
        Buffer.from(
          `POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(init)}\r\n\r\n${init}`,
        ),
      );
      // The connection is not half-closed when the bytes are sent (`shut-none`: a
      // half-closed connection ends the daemon's reading): a door that answers is read
      // for up to 10 s (`-t`), one that closes ends socat at once. (Holding stdin open
      // with a `sleep` instead cost the whole sleep even when the door closed at once:
      // the pipeline waits for it.) A script of its own: the tool's policy refuses
      // command substitution in a command.
      writeFileSync(
        join(project, 'socat-knock.sh'),
        [
          `echo "socat-unix: [$(printf '${frames}' | socat -t 10 - UNIX-CONNECT:${q(l.place.socket)},shut-none | tr -d '\\000-\\010')]"`,
          `echo "socat-tcp: [$(printf '${upgrade}${frames}' | socat -t 10 - TCP:${port},shut-none | tr -d '\\000-\\010')]"`,
          `echo "socat-mcp: [$(printf '${post}' | socat -t 10 - UNIX-CONNECT:${q(upstream)},shut-none)]"`,
          '',
        ].join('\n'),
      );
      const socat = await session.run('bash socat-knock.sh');

      expect(socat, socat).not.toMatch(UNCONFINED);
      expect(python, python).not.toMatch(UNCONFINED);
      for (const door of ['unix', 'tcp', 'mcp']) expect(python).toMatch(new RegExp(`(^|\\s)${door}: REFUSED$`, 'm'));
      // The TCP door is reached and closed, not unreachable. The unix doors (the daemon's
      // socket, the MCP socket) are not even reached: the sandbox refuses pathname unix
      // sockets outside the job's writable paths (docs/sandbox.md, "Unix sockets"), so
      // the daemon's own check is the second layer there.
      expect(python).not.toMatch(/ConnectionRefusedError|FileNotFoundError/);
      expect(python).toMatch(/(^|\s)unix: \(PermissionError/m);
      expect(socat).toMatch(/(^|\s)socat-unix: \[\]$/m);
      expect(socat).toMatch(/^socat-tcp: \[\]$/m);
      expect(socat).toMatch(/^socat-mcp: \[\]$/m);
      expect(socat).not.toMatch(/Connection refused|No such file/);
      // The TCP door's refusal said on stderr by the daemon (the unix doors were refused
      // by the sandbox before the daemon saw a connection).
      expect(l.stderr()).toMatch(/refused a connection on the TCP port: .* is a socket of one of the daemon's jobs/);

      // Our own client, in the job, says why it was turned away.
      const client = (daemon: string) =>
        `node -e ${q(
          `const { ShellExecutionService: S } = require(${JSON.stringify(join(ROOT, 'service.js'))});` +
            `new S({ projectRoot: process.cwd(), daemon: ${daemon} }).run('true')` +
            `.then(() => console.log('client: RAN'), (e) => console.log('client: ' + e.code + ': ' + e.message))`,
        )}`;
      const clients = await session.run(
        [client(JSON.stringify({ socket: l.place.socket })), client(JSON.stringify({ url: l.url }))].join('; '),
      );
      expect(clients).not.toMatch(/(^|\s)client: RAN$/m);
      // Over the port the daemon turns it away; the socket the sandbox refuses first.
      expect(clients.match(/client: DAEMON_REFUSED: .*runs in one of its jobs/g), clients).toHaveLength(1);
      expect(clients).toMatch(/client: DAEMON_UNAVAILABLE: .*EACCES/);

      // What a job leaves behind knocks after the job's own process has exited: an
      // orphan, re-parented (to the daemon, a subreaper) and, where no cgroup holds jobs,
      // told only by that ancestry.
      await session.run(
        `(echo $BASHPID > orphan.pid; sleep 2; python3 job-attack.py unix ${q(l.place.socket)} ${q(project)}; python3 job-attack.py tcp ${q(port)} ${q(project)}) > orphan.txt 2>&1 &`,
      );
      const orphanOut = join(project, 'orphan.txt');
      const orphan = () => (existsSync(orphanOut) ? readFileSync(orphanOut, 'utf8') : '');
      expect(await eventually(() => /tcp: (REFUSED|ANSWERED)/.test(orphan()), 120_000), orphan()).toBe(true);
      expect(orphan()).not.toMatch(UNCONFINED);
      expect(orphan()).toMatch(/^unix: REFUSED$/m);
      expect(orphan()).toMatch(/^tcp: REFUSED$/m);
      // The orphan was the daemon's (a subreaper) once the job's process had gone, and
      // is reaped when it exits: no zombie of it is left.
      const orphanPid = Number(readFileSync(join(project, 'orphan.pid'), 'utf8'));
      const daemonPid = daemonOf(l.place.socket);
      expect(daemonPid).toBeGreaterThan(0);
      expect(await eventually(() => !existsSync(`/proc/${orphanPid}`), 60_000), `orphan ${orphanPid}: zombies of the daemon ${String(zombieChildren(daemonPid!))}`).toBe(true);
      expect(zombieChildren(daemonPid!)).toEqual([]);
    } finally {
      await session.client.close();
    }
  }, 300_000);

  it('the same doors answer a client that is not a job', () => {
    const script = join(l.place.project, 'job-attack.py');
    for (const [door, target] of [
      ['unix', l.place.socket],
      ['tcp', new URL(l.url).host],
    ] as const) {
      const out = spawnSync('python3', [script, door, target, l.place.project], { encoding: 'utf8', timeout: 120_000 });
      // This test is no job: the daemon runs the command, unconfined, as asked.
      expect(out.stdout, out.stderr).toMatch(new RegExp(`^${door}: ANSWERED .*NoNewPrivs:\\\\t0`, 'm'));
    }
  }, 300_000);

  it('a job given the daemon socket as an allowed unix socket is still refused: the supervisor connects as the daemon', async () => {
    // The sandbox's supervisor makes an allowed connect itself (src/platform/linux/sandbox/
    // supervise/), so the kernel names the daemon as the peer: that is a job's connection.
    // With Landlock ABI 9 the job connects itself and is refused as a job.
    const service = new ShellExecutionService({ projectRoot: l.place.project, daemon: { socket: l.place.socket } });
    try {
      const r = await service.run(`python3 job-attack.py unix ${q(l.place.socket)} ${q(l.place.project)}`, {
        sandbox: { unixSockets: [l.place.socket] },
        timeoutMs: 100_000,
      });
      // Landlock (ABI 9) or the supervisor lets the job reach the socket; the daemon must not answer.
      expect(r.output).toMatch(/^unix: /m);
      expect(r.output).not.toMatch(/ANSWERED/);
    } finally {
      await service.shutdown();
    }
  }, 300_000);

  it("refuses the default daemon directory's sockets as a sandbox's allowed unix socket", async () => {
    const uid = process.getuid?.() ?? 0;
    const dir = process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, 'native-shell-service') : join(tmpdir(), `native-shell-service-${uid}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `job-peers-${process.pid}.sock`);
    const server = createServer();
    await new Promise<void>((ok) => server.listen(path, ok));
    const service = new ShellExecutionService({ projectRoot: l.place.project });
    try {
      await expect(service.run('true', { sandbox: { unixSockets: [path] } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      await service.shutdown();
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  }, 120_000);
});
