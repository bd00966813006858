// The per-job sandbox (docs/sandbox.md), Linux: escapes tried with real processes and
// real sockets. Each escape runs twice, in the same service: once unconfined
// (`sandbox: false`), where it must succeed — the test's control, which shows the
// check can fail — and once sandboxed, where it must not. Whether a write happened is
// judged by the file, never by a program's message.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ConfirmationOutcome, createShellTools, MCP_SETTINGS, ToolErrorType } from '../tools/index';
import { sandboxFromFlags } from '../tools/sandbox-flags';
import { itIf } from './gates';
import { alive, eventually, type Scratch, scratch, ShellExecutionService } from './helpers';
import { connect } from './mcp/setup';

const linux = process.platform === 'linux';
const PY = '/usr/bin/python3';

let s: Scratch;
let outside: string;
beforeAll(() => {
  if (!linux) return;
  // Not under /tmp, which sandboxed jobs may write (docs/sandbox.md says why).
  const base = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  outside = realpathSync(mkdtempSync(join(base, 'nss-sandbox-outside-')));
  // The output folders outside /tmp too: under it, /tmp would not be writable for the
  // jobs (its rule would reach the service's files: docs/sandbox.md).
  s = scratch({ persistOutput: true, ioDir: join(outside, 'io') });
});
afterAll(async () => {
  if (!linux) return;
  await s.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

type Options = NonNullable<Parameters<Scratch['service']['run']>[1]>;
const run = (command: string, sandbox: Options['sandbox'], extra: Options = {}) =>
  s.service.run(command, { timeoutMs: 30_000, ...extra, sandbox });

/** Runs `command(tag)` unconfined (tag `plain`), then sandboxed (tag `boxed`). */
async function both(command: (tag: string) => string, sandbox: Options['sandbox'] = true) {
  const plain = await run(command('plain'), false);
  const boxed = await run(command('boxed'), sandbox);
  return { plain, boxed };
}

describe.skipIf(!linux)('what a sandboxed job may write', () => {
  it('writes in the project and its TMPDIR, not outside; the result says what is enforced', async () => {
    const { plain, boxed } = await both(
      (tag) => `echo in > in-${tag}; echo t > "$TMPDIR/t" && cat "$TMPDIR/t"; echo out > ${outside}/${tag}`,
    );
    expect(plain.sandbox).toBeNull();
    expect(existsSync(join(outside, 'plain'))).toBe(true);
    expect(existsSync(join(outside, 'boxed'))).toBe(false);
    expect(readFileSync(join(s.root, 'in-boxed'), 'utf8')).toBe('in\n');
    expect(boxed.output).toContain('t');
    const info = boxed.sandbox!;
    expect(info.mechanism).toBe('landlock');
    expect(info.write).toContain(s.root);
    expect(info.write).toContain(info.tmpdir);
    expect(info.write).toContain('/tmp');
    expect(info.network).toBe('none');
    expect(info.filesystem && info.seccomp).toBe(true);
    // The TMPDIR is the job's own, and goes when nothing of the job runs any more (on
    // a helper thread), though the job is still kept.
    expect(await eventually(() => !existsSync(info.tmpdir))).toBe(true);
    expect(s.service.getResult(boxed.handle).sandbox!.tmpdir).toBe(info.tmpdir);
  });

  it('a read-only project and extra write paths', async () => {
    // A project outside /tmp: under it, /tmp's rule would keep it writable.
    const project = join(outside, 'ro-project');
    const extra = join(outside, 'extra');
    mkdirSync(project);
    mkdirSync(extra);
    const svc = new ShellExecutionService({ projectRoot: project, persistOutput: false });
    try {
      const r = await svc.run(`echo a > ro; echo b > ${extra}/b`, { sandbox: { readOnly: true, write: [extra] } });
      expect(existsSync(join(project, 'ro'))).toBe(false);
      expect(readFileSync(join(extra, 'b'), 'utf8')).toBe('b\n');
      expect(r.sandbox!.write).not.toContain(project);
      expect(r.sandbox!.readOnly).toBe(true);
      expect(r.sandbox!.notes.join(' ')).not.toContain('readOnly cannot hold');
      const underTmp = await run('true', { readOnly: true });
      expect(underTmp.sandbox!.notes.join(' ')).toContain('readOnly cannot hold');
    } finally {
      await svc.shutdown();
    }
  });

  it('a symlink out of the project does not carry writes out', async () => {
    await both((tag) => `ln -s ${outside} link-${tag}; echo x > link-${tag}/via-symlink-${tag}`);
    expect(existsSync(join(outside, 'via-symlink-plain'))).toBe(true);
    expect(existsSync(join(outside, 'via-symlink-boxed'))).toBe(false);
  });

  it('a hard link to a file outside cannot be made, so it cannot be written through', async () => {
    for (const tag of ['plain', 'boxed']) writeFileSync(join(outside, `victim-${tag}`), 'intact\n');
    await both((tag) => `ln ${outside}/victim-${tag} hard-${tag}; echo changed >> hard-${tag}`);
    expect(readFileSync(join(outside, 'victim-plain'), 'utf8')).toBe('intact\nchanged\n');
    expect(readFileSync(join(outside, 'victim-boxed'), 'utf8')).toBe('intact\n');
  });

  it('/proc/self/fd of a read-only descriptor cannot be reopened for writing', async () => {
    for (const tag of ['plain', 'boxed']) writeFileSync(join(outside, `fd-${tag}`), 'intact\n');
    // The descriptor is inherited by the inner shell, which reopens it by its /proc path.
    await both((tag) => `exec 3< ${outside}/fd-${tag}; sh -c 'echo changed > /proc/self/fd/3'`);
    expect(readFileSync(join(outside, 'fd-plain'), 'utf8')).toBe('changed\n');
    expect(readFileSync(join(outside, 'fd-boxed'), 'utf8')).toBe('intact\n');
  });

  it('another terminal cannot be written through its device path; the job’s own can', async () => {
    const other = await run('tty; sleep 60', false, { callbackPattern: '/dev/pts/\\d+' });
    const device = other.matched!;
    const { boxed } = await both((tag) => `echo "injected-${tag}" > ${device}; echo own > $(tty) && echo wrote-own`);
    expect(boxed.output).toContain('wrote-own');
    await eventually(() => s.service.getProcessOutput(other.handle).includes('injected-plain'));
    expect(s.service.getProcessOutput(other.handle)).toContain('injected-plain');
    expect(s.service.getProcessOutput(other.handle)).not.toContain('injected-boxed');
    await s.service.kill(other.handle);
  });
});

describe.skipIf(!linux)('the jobs\' TMPDIRs: nothing left behind', () => {
  /** Runs `script` in a new Node process whose temporary directory is `tmp`. */
  function node(script: string, tmp: string): void {
    const r = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, TMPDIR: tmp },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
  }
  const ours = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('native-shell-'));

  it('finished sandboxed jobs kept in memory hold no descriptor of their TMPDIRs, failed ones none either', async () => {
    // Before: each kept job held its directory open (O_PATH) until it was forgotten, up
    // to keepFinishedJobs descriptors. Spares made ahead and the directories kept for
    // later jobs are a handful whatever the number of jobs.
    const open = () => readdirSync('/proc/self/fd').length;
    const svc = new ShellExecutionService({ projectRoot: outside, persistOutput: false, sandbox: true });
    try {
      await svc.run('true', { timeoutMs: 30_000 });
      const before = open();
      for (let i = 0; i < 40; i++) await svc.run('true', { timeoutMs: 30_000 });
      // Launches that fail after the sandbox is in place (the program is missing)
      // leave nothing either: without a cgroup, their filter's listener is closed.
      for (let i = 0; i < 30; i++) {
        const failed = await svc.run('/nonexistent/program', { args: [], timeoutMs: 30_000 });
        expect(failed.status).toBe('failed');
      }
      expect(await eventually(() => open() <= before + 10)).toBe(true);
    } finally {
      await svc.shutdown();
    }
  });

  it('a process that exits with jobs kept and running removes their TMPDIRs and its spares', () => {
    const tmp = realpathSync(mkdtempSync(join(outside, 'tmp-')));
    // Before: every kept job's TMPDIR and the spare stayed (a bench run left 202).
    node(
      `const { ShellExecutionService: S } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
       const s = new S({ projectRoot: ${JSON.stringify(s.root)}, sandbox: true, persistOutput: false });
       (async () => {
         for (let i = 0; i < 3; i++) await s.run('true');
         await s.run('echo x > "$TMPDIR/f"');
         const running = await s.run('echo x > "$TMPDIR/f"; echo ready; sleep 1000', { callbackPattern: 'ready' });
         if (!require('fs').existsSync(running.sandbox.tmpdir + '/f')) process.exit(3);
         process.exit(0);
       })();`,
      tmp,
    );
    expect(ours(tmp)).toEqual([]);
  });

  it('what a process killed outright left is removed by the next one; a live one\'s is kept', () => {
    const tmp = realpathSync(mkdtempSync(join(outside, 'tmp-')));
    const dead = spawnSync('true').pid!;
    const left = join(tmp, `native-shell-${dead}-7`);
    mkdirSync(left);
    writeFileSync(join(left, 'f'), 'x');
    const live = join(tmp, `native-shell-${process.pid}-9`);
    mkdirSync(live);
    const other = join(tmp, `native-shell-${dead}-x`);
    mkdirSync(other);
    node(
      `const { ShellExecutionService: S } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
       const s = new S({ projectRoot: ${JSON.stringify(s.root)}, sandbox: true, persistOutput: false });
       const fs = require('fs');
       s.run('true').then(async () => {
         // The sweep runs on the helper thread: waited for (at most 60 s), not assumed.
         for (let i = 0; i < 600 && fs.existsSync(${JSON.stringify(left)}); i++) await new Promise((r) => setTimeout(r, 100));
         process.exit(0);
       });`,
      tmp,
    );
    expect(existsSync(left)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
    expect(ours(tmp).sort()).toEqual([`native-shell-${dead}-x`, `native-shell-${process.pid}-9`].sort());
  });
});

describe.skipIf(!linux)('what leaves the job still confined', () => {
  // Each writes a file outside, then a marker in the project: once the marker is there
  // the attempt has been made.
  const attempt = (tag: string, name: string) =>
    `echo x > ${outside}/${name}-${tag}; echo done > ${name}-${tag}.done`;

  it.each([
    ['setsid -f', (tag: string) => `setsid -f sh -c '${attempt(tag, 'setsid')}'`, 'setsid'],
    ['env -i', (tag: string) => `env -i /bin/sh -c '${attempt(tag, 'envi')}'`, 'envi'],
    ['a double fork', (tag: string) => `( sh -c '${attempt(tag, 'fork2')}' & ) &`, 'fork2'],
  ])('%s', async (_, command, name) => {
    await both(command);
    for (const tag of ['plain', 'boxed']) {
      expect(await eventually(() => existsSync(join(s.root, `${name}-${tag}.done`)), 15_000)).toBe(true);
    }
    expect(existsSync(join(outside, `${name}-plain`))).toBe(true);
    expect(existsSync(join(outside, `${name}-boxed`))).toBe(false);
  });

  // The control (unconfined) needs user namespaces the machine allows.
  itIf('userns')('unshare is refused, and writes stay refused whatever it does', async () => {
    const { plain, boxed } = await both(
      (tag) => `unshare -r true; echo "unshare=$?"; unshare -r sh -c 'echo x > ${outside}/unshare-${tag}'`,
    );
    expect(plain.output).toContain('unshare=0');
    expect(existsSync(join(outside, 'unshare-plain'))).toBe(true);
    // Refused by the seccomp filter; the write would be refused by Landlock anyway.
    expect(boxed.output).toContain('unshare=1');
    expect(existsSync(join(outside, 'unshare-boxed'))).toBe(false);
  });

  it('a nested Landlock sandbox the job makes cannot loosen ours', async () => {
    // The job restricts itself with a ruleset that handles only EXECUTE (so it allows
    // every write), then writes outside: its own rules allow it, ours still refuse.
    const script = join(s.root, 'nest.py');
    writeFileSync(
      script,
      [
        'import ctypes, os, sys',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'attr = (ctypes.c_uint64 * 1)(1)  # handled_access_fs = EXECUTE',
        'fd = libc.syscall(444, attr, 8, 0)',
        'assert fd >= 0, os.strerror(ctypes.get_errno())',
        'libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS',
        'assert libc.syscall(446, fd, 0) == 0, os.strerror(ctypes.get_errno())',
        'print("nested sandbox on")',
        'open(sys.argv[1], "w").write("x")',
      ].join('\n'),
    );
    const { plain, boxed } = await both((tag) => `${PY} nest.py ${outside}/nested-${tag}`);
    expect(plain.output).toContain('nested sandbox on');
    expect(boxed.output).toContain('nested sandbox on');
    expect(existsSync(join(outside, 'nested-plain'))).toBe(true);
    expect(existsSync(join(outside, 'nested-boxed'))).toBe(false);
  });

  // Landlock's signal scoping (ABI 6); below it, signals are a documented gap.
  itIf('landlock:6')('a process outside cannot be signalled', async () => {
    const victims: ChildProcess[] = [spawn('sleep', ['60']), spawn('sleep', ['60'])];
    try {
      const [a, b] = victims.map((v) => v.pid!);
      await run(`kill -TERM ${a}`, false);
      await run(`kill -TERM ${b}`, true);
      expect(await eventually(() => !alive(a))).toBe(true);
      expect(alive(b)).toBe(true);
    } finally {
      for (const v of victims) v.kill('SIGKILL');
    }
  });

  it('io_uring is missing inside (it would open sockets past the filter)', async () => {
    const probe = `${PY} -c "import ctypes; l=ctypes.CDLL(None, use_errno=True); l.syscall(425, 1, None); print('errno', ctypes.get_errno())"`;
    const { plain, boxed } = await both(() => probe);
    expect(plain.output).toContain('errno 14'); // EFAULT: the call was made
    expect(boxed.output).toContain('errno 38'); // ENOSYS
  });
});

describe.skipIf(!linux)('the network', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((c) => {
      connections++;
      c.end('hello\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  const connect = (p: number) =>
    `${PY} -c "import socket; s=socket.create_connection(('127.0.0.1', ${p}), timeout=10); print('got', s.recv(10))"`;

  it('TCP to a listener on 127.0.0.1 outside is refused by default', async () => {
    const before = connections;
    const plain = await run(connect(port), false);
    expect(plain.output).toContain('got');
    expect(connections).toBe(before + 1);
    const boxed = await run(connect(port), true);
    expect(boxed.output).not.toContain('got');
    expect(boxed.exitCode).not.toBe(0);
    expect(connections).toBe(before + 1);
  });

  it('UDP to a socket on 127.0.0.1 outside is refused', async () => {
    const socket = createSocket('udp4');
    const got: string[] = [];
    socket.on('message', (m) => got.push(m.toString()));
    await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
    const udp = socket.address().port;
    const send = (text: string) =>
      `${PY} -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'${text}', ('127.0.0.1', ${udp}))"`;
    try {
      const boxed = await run(send('boxed'), true);
      expect(boxed.exitCode).not.toBe(0);
      await run(send('plain'), false);
      // Loopback delivers in order: once the later datagram is here, the earlier one
      // would have been too.
      expect(await eventually(() => got.includes('plain'))).toBe(true);
      expect(got).toEqual(['plain']);
    } finally {
      socket.close();
    }
  });

  // Landlock's TCP rules (ABI 4); below it every internet socket is refused instead.
  itIf('landlock:4')('{ tcpPorts } allows those ports only, for connect and for bind', async () => {
    const other = createServer((c) => c.end('other\n'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as { port: number }).port;
    try {
      const network = { tcpPorts: [port] };
      const allowed = await run(connect(port), { network });
      expect(allowed.output).toContain('got');
      expect(allowed.sandbox!.network).toBe('ports');
      expect(allowed.sandbox!.tcpPorts).toEqual([port]);
      const refused = await run(connect(otherPort), { network });
      expect(refused.output).not.toContain('got');
      // Bind: a dev server on an allowed port in one job, reached from another job.
      const free = await freePort();
      const bindOnly = { network: { tcpPorts: [free] } };
      const serverJob = await run(
        `${PY} -c "import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', ${free})); s.listen(); print('listening', flush=True); c,_=s.accept(); c.sendall(b'from-job')"`,
        bindOnly,
        { callbackPattern: 'listening' },
      );
      const client = await run(connect(free), bindOnly);
      expect(client.output).toContain('from-job');
      await s.service.kill(serverJob.handle);
      const refusedBind = await run(`${PY} -c "import socket; socket.socket().bind(('127.0.0.1', ${free}))"`, {
        network: { tcpPorts: [port] },
      });
      expect(refusedBind.output).toContain('PermissionError');
    } finally {
      other.close();
    }
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  return port;
}

describe.skipIf(!linux)('reads, with `read` set', () => {
  it('a secret in the home directory is unreadable; the project and `read` paths are', async () => {
    const secret = join(homedir(), `.nss-sandbox-secret-${process.pid}`);
    writeFileSync(secret, 'TOKEN-123\n', { mode: 0o600 });
    const shared = join(outside, 'shared');
    writeFileSync(shared, 'shared-ok\n');
    writeFileSync(join(s.root, 'mine'), 'mine-ok\n');
    try {
      const command = `cat ${secret}; cat mine; cat ${shared}; ls /usr/bin/env`;
      const plain = await run(command, false);
      expect(plain.output).toContain('TOKEN-123');
      const boxed = await run(command, { read: [shared] });
      expect(boxed.output).not.toContain('TOKEN-123');
      expect(boxed.output).toContain('mine-ok');
      expect(boxed.output).toContain('shared-ok');
      expect(boxed.output).toContain('/usr/bin/env');
      expect(boxed.sandbox!.read).toContain(shared);
    } finally {
      rmSync(secret, { force: true });
    }
  });
});

describe.skipIf(!linux)('what still works inside', () => {
  it('a Python REPL: waiting for input is detected, input answered', async () => {
    const r = await run(`${PY} -q`, true, { callbackPattern: '>>> ' });
    // The prompt matched; on a busy machine the wait for input may be seen by then too.
    expect(['running', 'awaiting_input']).toContain(r.status);
    const answer = await s.service.sendInput(r.handle, 'print(6 * 7)', { pattern: '42' });
    expect(answer.matched).toBe('42');
    await s.service.sendInput(r.handle, 'exit()', { timeoutMs: 10_000 });
    const waited = await s.service.run('read x', { sandbox: true, timeoutMs: 30_000 });
    expect(waited.status).toBe('awaiting_input');
    await s.service.kill(waited.handle);
  });

  it('ed and sqlite3 edit files in the project', async () => {
    const edit = await run("printf 'a\\nfrom ed\\n.\\nw notes.txt\\nq\\n' | ed -s", true);
    expect(edit.exitCode).toBe(0);
    expect(readFileSync(join(s.root, 'notes.txt'), 'utf8')).toBe('from ed\n');
    const db = await run(
      "sqlite3 app.db 'create table t(x); insert into t values (41 + 1);' && sqlite3 app.db 'select x from t'",
      true,
    );
    expect(db.output).toContain('42');
  });

  it('gdb runs and debugs a program of its own (ptrace inside the job)', async () => {
    const r = await run("gdb -q -batch -ex run -ex bt --args sh -c 'kill -SEGV $$'", true);
    expect(r.output).toContain('SIGSEGV');
  });

  it('kill ends everything the job started, detached or not', async () => {
    const r = await run('sleep 300 & setsid -f sleep 301; echo started; sleep 302', true, {
      callbackPattern: 'started',
    });
    const killed = await s.service.kill(r.handle);
    expect(killed.survivors).toEqual([]);
    const processes = s.service.getActiveProcesses().find((p) => p.handle === r.handle)!;
    expect(processes.sandbox!.mechanism).toBe('landlock');
    expect(processes.detachedPids.filter(alive)).toEqual([]);
  });

  it('output files are written by the service, not the job', async () => {
    const r = await run('echo persisted', true);
    expect(r.outputDir).toBeTruthy();
    const files = readdirSync(r.outputDir!);
    expect(files.some((f) => readFileSync(join(r.outputDir!, f), 'utf8').includes('persisted'))).toBe(true);
  });

  it('a service-wide sandbox applies to every job; `sandbox: false` lifts it for one', async () => {
    const svc = new ShellExecutionService({ projectRoot: s.root, persistOutput: false, sandbox: { write: [] } });
    try {
      const confined = await svc.run(`echo x > ${outside}/svc-default`);
      expect(confined.sandbox).not.toBeNull();
      expect(existsSync(join(outside, 'svc-default'))).toBe(false);
      const lifted = await svc.run(`echo x > ${outside}/svc-lifted`, { sandbox: false });
      expect(lifted.sandbox).toBeNull();
      expect(existsSync(join(outside, 'svc-lifted'))).toBe(true);
    } finally {
      await svc.shutdown();
    }
  });

  it('bad sandbox options are INVALID_ARGUMENT', async () => {
    await expect(run('true', { write: ['does/not/exist'] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(run('true', { network: { tcpPorts: [70000] } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe.skipIf(!linux)('the tools', () => {
  const never = new AbortController().signal;
  const text = (r: { llmContent: unknown }) => String(r.llmContent);

  it('say a command ran sandboxed, and that a refused write looks like the sandbox', async () => {
    const tools = createShellTools(s.service, { projectRoot: s.root, onAsk: 'allow', sandbox: true });
    const ok = await tools.run_shell_command.buildAndExecute({ command: 'echo fine' }, never);
    expect(text(ok)).toContain('Sandbox: on');
    expect(text(ok)).not.toContain('sandbox refusing');
    const refused = await tools.run_shell_command.buildAndExecute({ command: `echo x > ${outside}/tool-write` }, never);
    expect(existsSync(join(outside, 'tool-write'))).toBe(false);
    expect(text(refused)).toContain('looks like the sandbox refusing');
    expect(text(refused)).toContain('sandbox.write');
    const pipes = await tools.shell_cmd.buildAndExecute({ command: 'touch', parameters: [`${outside}/tool-touch`] }, never);
    expect(text(pipes)).toContain('looks like the sandbox refusing');
    const unconfined = createShellTools(s.service, { projectRoot: s.root, onAsk: 'allow' });
    const plain = await unconfined.run_shell_command.buildAndExecute({ command: 'echo fine' }, never);
    expect(text(plain)).not.toContain('Sandbox');
  });

  it('the MCP flags name themselves in the hint', async () => {
    const tools = createShellTools(s.service, { onAsk: 'allow', sandbox: true, sandboxSettings: MCP_SETTINGS });
    const r = await tools.run_shell_command.buildAndExecute(
      { command: `${PY} -c "import socket; socket.create_connection(('127.0.0.1', 9))"` },
      never,
    );
    expect(text(r)).toContain('--sandbox-network');
  });

  it('an unsandboxed run only after the user confirmed that very call', async () => {
    const config = { projectRoot: s.root, sandbox: true, allowUnsandboxedRequests: true };
    const tools = createShellTools(s.service, config);
    expect(JSON.stringify(tools.run_shell_command.declaration)).toContain('unsandboxed');
    expect(JSON.stringify(createShellTools(s.service, {}).run_shell_command.declaration)).not.toContain('unsandboxed');
    const command = `echo x > ${outside}/unsandboxed`;
    // Without a confirmation (a host that runs directly): refused, nothing ran.
    const direct = await tools.run_shell_command.buildAndExecute({ command, unsandboxed: true }, never);
    expect(direct.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    const allowAll = createShellTools(s.service, { ...config, onAsk: 'allow' });
    const autoAllowed = await allowAll.run_shell_command.buildAndExecute({ command, unsandboxed: true }, never);
    expect(autoAllowed.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(existsSync(join(outside, 'unsandboxed'))).toBe(false);
    // Cancelled: refused.
    const cancelled = tools.run_shell_command.build({ command, unsandboxed: true });
    const ask = await cancelled.shouldConfirmExecute(never);
    expect(ask && ask.title).toBe('Confirm Unsandboxed Shell Command');
    if (ask) await ask.onConfirm(ConfirmationOutcome.Cancel);
    expect((await cancelled.execute(never)).error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    // Confirmed: it runs unconfined.
    const confirmed = tools.run_shell_command.build({ command, unsandboxed: true });
    const details = await confirmed.shouldConfirmExecute(never);
    if (details) await details.onConfirm(ConfirmationOutcome.ProceedAlways);
    const ran = await confirmed.execute(never);
    expect(text(ran)).not.toContain('Sandbox: on');
    expect(existsSync(join(outside, 'unsandboxed'))).toBe(true);
    // "Proceed always" approved nothing for later unsandboxed calls.
    const again = tools.run_shell_command.build({ command, unsandboxed: true });
    expect(again.policy().decision).toBe('ask');
  });

  it('mcp flags become sandbox options', () => {
    const flags = (entries: [string, string[]][]) => new Map(entries);
    expect(sandboxFromFlags(flags([]))).toBeUndefined();
    expect(sandboxFromFlags(flags([['sandbox', ['true']]]))).toEqual({});
    expect(
      sandboxFromFlags(
        flags([
          ['sandbox-write', ['a', '/b']],
          ['sandbox-ports', ['3000,5173', '8080']],
          ['sandbox-private-home', ['true']],
        ]),
      ),
    ).toEqual({ write: ['a', '/b'], network: { tcpPorts: [3000, 5173, 8080] }, read: [] });
    expect(sandboxFromFlags(flags([['sandbox-network', ['true']]]))).toEqual({ network: true });
    expect(() => sandboxFromFlags(flags([['sandbox-ports', ['x']]]))).toThrow(/sandbox-ports/);
  });
});

describe.skipIf(!linux)('the MCP server with --sandbox', () => {
  // `--sandbox-ports` holds from Landlock ABI 4 (below it the network is refused whole).
  itIf('landlock:4')('confines every job, reports it, and names its own flags in a refusal', async () => {
    const session = await connect(['--sandbox', '--sandbox-ports', '3000']);
    try {
      const write = `echo x > ${outside}/mcp-write`;
      const refused = await session.call('run_shell_command', { command: write });
      expect(existsSync(join(outside, 'mcp-write'))).toBe(false);
      expect(refused.text).toContain('Sandbox: on');
      expect(refused.text).toContain('TCP ports 3000 only');
      expect(refused.text).toContain('--sandbox-write PATH');
      const inside = await session.call('shell_cmd', { command: 'touch', parameters: ['made-here'] });
      expect(inside.isError).toBe(false);
      expect(existsSync(join(session.root, 'made-here'))).toBe(true);
    } finally {
      await session.cleanup();
    }
  });
});
