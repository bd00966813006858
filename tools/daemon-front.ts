// `native-shell-service daemon --listen HOST:PORT ...`: the daemon with its HTTP port,
// and beside it, in this Node process, the MCP Streamable HTTP server that the daemon's
// `/mcp` forwards to (tools/mcp/http.ts). The two live and die together:
// - the daemon ends (its idle exit is off while it listens; a signal, `--stop`, a
//   crash): this process closes the MCP sessions and exits with its status;
// - this process ends, even by SIGKILL: the daemon's stdin (a pipe from here, read
//   with `--exit-with-stdin`) reaches its end and the daemon exits, ending its jobs;
// - SIGTERM, SIGINT, SIGHUP here are passed to the daemon, which exits first.
// The `mcp` command's tool options (`--allow`, `--sandbox`, ...) given here shape the
// `/mcp` sessions' tools; every other argument is the daemon's.
// The MCP server listens on a unix socket in a directory of its own (mkdtemp: mode
// 0700, this user's), so no other user can reach it past the daemon's token check.
import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { defaultSocket } from '../client/place.js';
import { loadAddon } from '../contract/addon.js';
import { parse, TOOL_BOOLEAN_FLAGS, TOOL_VALUED_FLAGS, toolOptions, UsageError } from './cli.js';
import { serveMcpHttp } from './mcp/http.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The value of `--name V` or `--name=V` in the daemon's arguments (the last one). */
function flag(args: string[], name: string): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === `--${name}`) found = args[++i];
    else if (a.startsWith(`--${name}=`)) found = a.slice(name.length + 3);
  }
  return found;
}

/**
 * The arguments split: the `mcp` command's tool options (`--allow`, `--deny`, `--format`,
 * `--on-ask`, `--io-dir`, `--sandbox*`), which shape the `/mcp` sessions' tools, and the
 * rest, the daemon's.
 */
function split(args: string[]): { tools: string[]; daemon: string[] } {
  const tools: string[] = [];
  const daemon: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const name = a.startsWith('--') ? a.slice(2).split('=', 1)[0]! : '';
    if (TOOL_BOOLEAN_FLAGS.includes(name)) tools.push(a);
    else if (TOOL_VALUED_FLAGS.includes(name)) {
      tools.push(a);
      if (!a.includes('=') && i + 1 < args.length) tools.push(args[++i] as string);
    } else daemon.push(a);
  }
  return { tools, daemon };
}

/** A fresh directory only this user can enter (mkdtemp makes it 0700; checked, failing closed). */
function privateDir(): string {
  const dir = mkdtempSync(join(process.env.XDG_RUNTIME_DIR || tmpdir(), 'native-shell-mcp-'));
  const st = lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private directory of this user (mode ${(st.mode & 0o777).toString(8)})`);
  }
  return dir;
}

/** Runs the daemon `bin` with `args` and the MCP server; resolves with the exit status. */
export async function runDaemonWithMcp(bin: string, all: string[]): Promise<number> {
  const { tools: toolArgs, daemon } = split(all);
  let args = daemon;
  let tools;
  try {
    tools = toolOptions(parse(toolArgs, TOOL_VALUED_FLAGS, TOOL_BOOLEAN_FLAGS));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(`native-shell-service daemon: ${e.message}`);
    return 2;
  }
  if (args.includes('--mcp-upstream') || args.some((a) => a.startsWith('--mcp-upstream='))) {
    log('native-shell-service daemon: --mcp-upstream is set here (the MCP server this command runs)');
    return 2;
  }
  // This command's own option: how long an idle /mcp session lives (not the daemon's).
  const idle = flag(args, 'mcp-session-idle-ms');
  if (idle !== undefined && !/^\d+$/.test(idle)) {
    log('native-shell-service daemon: --mcp-session-idle-ms is a whole number of milliseconds');
    return 2;
  }
  args = args.filter((a, i) => !(a === '--mcp-session-idle-ms' || a.startsWith('--mcp-session-idle-ms=') || args[i - 1] === '--mcp-session-idle-ms'));
  const socket = resolve(flag(args, 'socket') ?? defaultSocket());
  const projectRoot = resolve(flag(args, 'project-root') ?? process.cwd());
  const dir = privateDir();
  const upstream = join(dir, 'mcp.sock');
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  let mcp;
  // The daemon's pid once it runs: the only process the MCP server answers.
  let daemonPid: number | undefined;
  try {
    const { unixPeerPid } = loadAddon();
    mcp = await serveMcpHttp({
      listen: upstream,
      daemonSocket: socket,
      tools: { ...tools, projectRoot },
      onlyPeer: () => daemonPid,
      peerPid: (fd) => unixPeerPid(fd),
      log,
      ...(idle !== undefined ? { sessionIdleMs: Number(idle) } : {}),
    });
  } catch (e) {
    cleanup();
    log(`native-shell-service daemon: cannot serve MCP on ${upstream}: ${(e as Error).message}`);
    return 1;
  }
  const passed = [...args];
  if (flag(args, 'socket') === undefined) passed.push('--socket', socket); // the one the MCP sessions use
  // Sandboxed tools: the daemon checks at start that it can sandbox, and exits with the
  // cause if not, rather than reporting healthy and failing the first call
  // (src/daemon/startup.rs).
  if (tools.sandbox) passed.push('--require-sandbox');
  const child = spawn(bin, [...passed, '--mcp-upstream', upstream, '--exit-with-stdin'], {
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  daemonPid = child.pid;
  // Its pid may name another process once it has exited.
  child.once('exit', () => {
    daemonPid = undefined;
  });
  // Our end of the pipe is never written; it stays open while we live.
  child.stdin?.on('error', () => {});
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  const status = await new Promise<number>((done) => {
    child.once('error', (e) => {
      log(`native-shell-service daemon: ${e.message}`);
      done(1);
    });
    child.once('exit', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
  await mcp.close().catch(() => {});
  cleanup();
  return status;
}
