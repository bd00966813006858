// The `native-shell-service` command: mcp | demo | run <command>.
import { runDemo } from './demo.js';
import { loadAddon } from '../contract/addon.js';
import { createShellTools } from './create.js';
import { packageVersion, startMcpServer } from './mcp-server.js';
import type { McpToolOptions } from './mcp/server.js';
import {
  makeSandboxCaches,
  SANDBOX_BOOLEAN_FLAGS,
  SANDBOX_USAGE,
  SANDBOX_VALUED_FLAGS,
  sandboxCaches,
  sandboxFromFlags,
} from './sandbox-flags.js';

const USAGE = `native-shell-service ${packageVersion()}: a native shell service for LLM coding agents

Usage:
  native-shell-service demo [--keep]
      Runs the three seed workflows for real (ed, a Python REPL, a server with jobs and
      kill), printing every tool call and result. Exits 0 only if all three worked.
  native-shell-service mcp [--project-root DIR] [--io-dir DIR] [--allow RULE]... [--deny RULE]...
                           [--format text|json] [--on-ask allow|deny]
                           [--daemon] [--daemon-socket PATH] [--daemon-idle-exit-ms N]
                           ${SANDBOX_USAGE}
      An MCP server on stdio exposing run_shell_command, send_input, jobs, kill, shell_cmd.
      RULE uses the Gemini CLI syntax: 'run_shell_command(git)'. With --allow, only allowed
      commands run; --deny refuses matching commands. Every job is killed when the
      client disconnects or on SIGTERM/SIGINT, unless --daemon: then the jobs run in the
      per-user daemon (started on first use; docs/daemon.md), outlive the session, and
      the next session of the project lists them with jobs and takes them up by handle.
      --sandbox confines every job (docs/sandbox.md): writes only in the project, its
      TMPDIR and /tmp, no network. --sandbox-write adds a writable path, --sandbox-network
      allows the network, --sandbox-ports only those TCP ports, --sandbox-private-home
      makes the home directory unreadable, --sandbox-caches gives the jobs package
      manager caches of their own (npm, cargo, pip, Go; never the user's ~/.npm, ~/.cargo,
      ~/.cache, whose contents run outside the sandbox). Credential stores (~/.ssh,
      ~/.aws, ~/.netrc...) and other jobs' output files are never readable:
      --sandbox-read-deny hides one more path, --sandbox-read-allow makes one readable
      after all; --sandbox-sysv-ipc allows System V IPC (refused by default). Each of
      them implies --sandbox.
  native-shell-service run [--directory DIR] [--pattern REGEX] [--delay SECONDS] [--json]
                           [--project-root DIR] [--io-dir DIR] [--] <command...>
      Runs one command through the service (bash -c, in a terminal) and prints the result.
      Without --pattern/--delay it waits for the command to exit.
  native-shell-service --help | --version
`;

export class UsageError extends Error {}

export interface Parsed {
  flags: Map<string, string[]>;
  rest: string[];
}

export function parse(argv: string[], valued: string[], booleans: string[]): Parsed {
  const flags = new Map<string, string[]>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--') && rest.length === 0) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      if (booleans.includes(name)) {
        flags.set(name, ['true']);
      } else if (valued.includes(name)) {
        const value = inline ?? argv[++i];
        if (value === undefined) throw new UsageError(`--${name} needs a value`);
        flags.set(name, [...(flags.get(name) ?? []), value]);
      } else {
        throw new UsageError(`unknown option --${name}`);
      }
      continue;
    }
    rest.push(arg);
  }
  return { flags, rest };
}

const one = (p: Parsed, name: string): string | undefined => p.flags.get(name)?.at(-1);

/** The `mcp` options that say what the tools do (the rest say where the server runs). */
export const TOOL_VALUED_FLAGS = ['io-dir', 'allow', 'deny', 'format', 'on-ask', ...SANDBOX_VALUED_FLAGS];
export const TOOL_BOOLEAN_FLAGS = [...SANDBOX_BOOLEAN_FLAGS];

/** The tools' options from parsed `mcp` flags (also `daemon --listen`'s, for its `/mcp`). */
export function toolOptions(p: Parsed): McpToolOptions {
  let sandbox;
  const caches = sandboxCaches();
  try {
    sandbox = sandboxFromFlags(p.flags, caches);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  // Every job of this server is sandboxed (it has no unsandboxed request), so the
  // variables that point the package managers at the sandbox's caches apply to all.
  const cachesOn = p.flags.has('sandbox-caches');
  if (cachesOn) makeSandboxCaches(caches);
  const format = one(p, 'format');
  if (format !== undefined && format !== 'text' && format !== 'json') throw new UsageError('--format is text or json');
  const onAsk = one(p, 'on-ask');
  if (onAsk !== undefined && onAsk !== 'allow' && onAsk !== 'deny') throw new UsageError('--on-ask is allow or deny');
  for (const rule of [...(p.flags.get('allow') ?? []), ...(p.flags.get('deny') ?? [])]) {
    if (!/^(run_shell_command|ShellTool)(\s*\(.*\))?$/s.test(rule.trim())) {
      throw new UsageError(`rule ${JSON.stringify(rule)} is not of the form run_shell_command(<command prefix>)`);
    }
  }
  return {
    ioDir: one(p, 'io-dir'),
    allow: p.flags.get('allow') ?? [],
    deny: p.flags.get('deny') ?? [],
    format: format as 'text' | 'json' | undefined,
    onAsk: onAsk as 'allow' | 'deny' | undefined,
    sandbox,
    ...(cachesOn ? { env: caches.env } : {}),
  };
}

async function mcp(argv: string[]): Promise<number> {
  const p = parse(argv, ['project-root', 'session-id', 'daemon-socket', 'daemon-idle-exit-ms', ...TOOL_VALUED_FLAGS], ['daemon', ...TOOL_BOOLEAN_FLAGS]);
  if (p.rest.length > 0) throw new UsageError(`unexpected argument ${p.rest[0]}`);
  const tools = toolOptions(p);
  const idle = one(p, 'daemon-idle-exit-ms');
  if (idle !== undefined && !/^\d+$/.test(idle)) throw new UsageError('--daemon-idle-exit-ms is a whole number of milliseconds');
  const socket = one(p, 'daemon-socket');
  const daemon =
    p.flags.has('daemon') || socket !== undefined || idle !== undefined
      ? { ...(socket !== undefined ? { socket } : {}), ...(idle !== undefined ? { idleExitMs: Number(idle) } : {}) }
      : undefined;
  const server = await startMcpServer({
    ...tools,
    ...(daemon ? { daemon } : {}),
    projectRoot: one(p, 'project-root'),
    sessionId: one(p, 'session-id'),
  });
  const stop = (signal: string) => {
    void server.close().then(() => process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15)));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGHUP', () => stop('SIGHUP'));
  await server.closed;
  return 0;
}

async function run(argv: string[]): Promise<number> {
  const p = parse(argv, ['directory', 'pattern', 'delay', 'project-root', 'io-dir'], ['json']);
  const command = p.rest.join(' ');
  if (command.trim() === '') throw new UsageError('run needs a command');
  const delay = one(p, 'delay');
  if (delay !== undefined && !(Number(delay) >= 0)) throw new UsageError('--delay is a number of seconds');
  const { ShellExecutionService } = loadAddon();
  const projectRoot = one(p, 'project-root') ?? process.cwd();
  const ioDir = one(p, 'io-dir');
  const service = new ShellExecutionService({ projectRoot, ...(ioDir ? { ioDir } : {}) });
  const tools = createShellTools(service, { projectRoot, onAsk: 'allow', format: p.flags.has('json') ? 'json' : 'text' });
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  const pattern = one(p, 'pattern');
  const result = await tools.run_shell_command.buildAndExecute(
    {
      command,
      directory: one(p, 'directory'),
      ai_callback_pattern: pattern,
      // Without a pattern or delay, wait for the command to exit (a day at most).
      ai_callback_delay: delay !== undefined ? Number(delay) : pattern !== undefined ? 5 : 86400,
    },
    ac.signal,
  );
  process.removeListener('SIGINT', onSigint);
  process.stdout.write(`${result.llmContent}\n`);
  const data = result.data as { exitCode?: number | null; status?: string } | undefined;
  await service.shutdown();
  if (result.error || result.cancelled) return 1;
  return data?.status === 'exited' && typeof data.exitCode === 'number' ? data.exitCode : data?.status === 'running' || data?.status === 'awaiting_input' ? 0 : 1;
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'mcp':
        return await mcp(rest);
      case 'demo': {
        const p = parse(rest, [], ['keep']);
        if (p.rest.length > 0) throw new UsageError(`unexpected argument ${p.rest[0]}`);
        return (await runDemo({ keep: p.flags.has('keep') })) ? 0 : 1;
      }
      case 'run':
        return await run(rest);
      case '--version':
      case '-v':
        process.stdout.write(`${packageVersion()}\n`);
        return 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`native-shell-service: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    const err = e as Error & { code?: unknown };
    // The service's errors carry a stable code and a message meant for people.
    if (typeof err.code === 'string') process.stderr.write(`native-shell-service: ${err.message} (${err.code})\n`);
    else process.stderr.write(`native-shell-service: ${err.stack ?? String(e)}\n`);
    return 1;
  }
}
