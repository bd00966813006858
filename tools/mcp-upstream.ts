// `native-shell-service mcp-upstream --listen SOCKET --daemon-socket DAEMON
// [--project-root DIR] [tool options]`: the MCP Streamable HTTP server that the daemon's
// `/mcp` forwards to, run BY the daemon as its child (`native-shell-daemon --mcp-server`,
// src/daemon/mcp_child.rs). This is the container's layout: the Rust daemon is PID 1 and
// reaps every orphan; Node, which reaps nobody it did not start, is below it.
// (`native-shell-service daemon --listen` is the other layout, for a workstation: Node
// starts the daemon: tools/daemon-front.ts.)
// - Only the parent's connections are served (`onlyPeer`: the daemon's pid, asked of the
//   kernel per connection), as a job of the daemon runs as the same user.
// - The daemon holds our stdin: when it ends, even by SIGKILL, stdin reaches its end and
//   this process exits; the daemon starts a new one if this one dies.
import { loadAddon } from '../contract/addon.js';
import { parse, TOOL_BOOLEAN_FLAGS, TOOL_VALUED_FLAGS, toolOptions, UsageError } from './cli.js';
import { serveMcpHttp } from './mcp/http.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Serves until stdin ends or a signal; resolves with the exit status. */
export async function runMcpUpstream(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(args, ['listen', 'daemon-socket', 'project-root', 'mcp-session-idle-ms', ...TOOL_VALUED_FLAGS], TOOL_BOOLEAN_FLAGS);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(`native-shell-service mcp-upstream: ${e.message}`);
    return 2;
  }
  const one = (name: string): string | undefined => parsed.flags.get(name)?.at(-1);
  const listen = one('listen');
  const daemonSocket = one('daemon-socket');
  const idle = one('mcp-session-idle-ms');
  if (!listen || !daemonSocket || (idle !== undefined && !/^\d+$/.test(idle))) {
    log('native-shell-service mcp-upstream: needs --listen SOCKET and --daemon-socket SOCKET (run by native-shell-daemon --mcp-server)');
    return 2;
  }
  let tools;
  try {
    tools = toolOptions(parsed);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    log(`native-shell-service mcp-upstream: ${e.message}`);
    return 2;
  }
  // The parent when we started: the daemon. If it dies we are re-parented, and then no
  // connection is served (the pid is compared, not re-read) until stdin ends us.
  const daemonPid = process.ppid;
  const { unixPeerPid } = loadAddon();
  const projectRoot = one('project-root');
  const mcp = await serveMcpHttp({
    listen,
    daemonSocket,
    tools: { ...tools, ...(projectRoot ? { projectRoot } : {}) },
    onlyPeer: () => daemonPid,
    peerPid: (fd) => unixPeerPid(fd),
    log,
    ...(idle !== undefined ? { sessionIdleMs: Number(idle) } : {}),
  });
  log(`native-shell-service mcp-upstream: serving MCP on ${listen} for the daemon (pid ${daemonPid})`);
  await new Promise<void>((done) => {
    process.stdin.on('end', done);
    process.stdin.on('error', () => done());
    process.stdin.resume();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => done());
  });
  await mcp.close().catch(() => {});
  return 0;
}
