// A backgrounded job outlives a headless `gemini -p`, as upstream's does: a child Node
// stands in for the CLI (it runs a dev server through the service, backgrounds it
// after a moment as the CLI's shell tool does for `is_background`, and exits). With
// upstream's service the server survives as an orphan of nobody's; with the drop-in in
// daemon mode (NATIVE_SHELL_GEMINI_DAEMON, docs/gemini-compat.md) it survives owned by
// the daemon: listed by any later client of it and ended by its handle. With nothing
// configured, the drop-in places a pipes-mode job (the headless CLI's) in the user's
// daemon, so the same holds; a PTY job, as an interactive CLI's, stays in process. In
// process (`NATIVE_SHELL_GEMINI_DAEMON=0`, and all there was before) it ends with the CLI.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadAddon } from '../../contract/addon';
import type { AnsiOutput, ShellOutputEvent } from '../../compat/gemini-compat';
import { Compat, config, gridText, project, removeProject } from './harness';

const root = resolve(__dirname, '..', '..');
/**
 * Where the child's drop-in is built: a directory of this test's own (other suites build
 * dist/ meanwhile), inside the package so that it finds the addon as dist/ does.
 */
const built = join(root, 'node_modules', '.cache', 'nss-compat-daemon-test');
const SERVER = 'echo listening; while :; do echo tick; sleep 0.2; done';

let scratch: string;
let socket: string;
let home: string;
const savedHome = process.env.HOME;
const daemonPids = new Set<number>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A client of the test's daemon, as a later agent session (or the lead's tools) would make. */
function client(at = socket) {
  const Service = loadAddon().ShellExecutionService;
  return new Service({ projectRoot: '/', daemon: { socket: at } });
}

/**
 * The environment of a CLI that configures nothing: no NATIVE_SHELL_GEMINI_DAEMON (the
 * suite's config sets it to `0`), and XDG_RUNTIME_DIR in the test's scratch, so the
 * "user's daemon" the drop-in starts by default is this test's (client/place.ts).
 */
function unconfigured(name = 'xdg'): { env: NodeJS.ProcessEnv; socket: string } {
  const runtime = join(scratch, name);
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  return { env: { NATIVE_SHELL_GEMINI_DAEMON: undefined, XDG_RUNTIME_DIR: runtime }, socket: join(runtime, 'native-shell-service', 'daemon.sock') };
}

/**
 * Runs the headless CLI's part in a child Node: `execute` the server (pipes, as the
 * CLI without an interactive shell), `background` it after 300 ms (the shell tool's
 * `delay_ms`), print its pid, exit. `impl`: upstream's service or the drop-in.
 */
function headlessCli(impl: 'upstream' | 'compat', env: NodeJS.ProcessEnv, pty = false): number {
  const core = (file: string) => JSON.stringify(pathToFileURL(join(root, 'node_modules', '@google', 'gemini-cli-core', 'dist', 'src', 'services', file)).href);
  const service =
    impl === 'upstream'
      ? `(await import(${core('shellExecutionService.js')})).ShellExecutionService`
      : `require(${JSON.stringify(join(built, 'compat', 'gemini-compat.js'))}).ShellExecutionService`;
  const script = `
    (async () => {
      const S = ${service};
      const { NoopSandboxManager } = await import(${core('sandboxManager.js')});
      const config = {
        sessionId: 'headless', terminalWidth: 80, terminalHeight: 30, originalCommand: 'dev server',
        sanitizationConfig: { allowedEnvironmentVariables: [], blockedEnvironmentVariables: [], enableEnvironmentVariableRedaction: false },
        sandboxManager: new NoopSandboxManager(),
      };
      const { pid, result } = await S.execute(${JSON.stringify(SERVER)}, process.cwd(), () => {}, new AbortController().signal, ${pty}, config);
      setTimeout(() => S.background(pid, 'headless', 'dev server'), 300);
      const r = await result;
      console.log(JSON.stringify({ pid, backgrounded: r.backgrounded === true }));
      process.exit(0);
    })().catch((e) => { console.error(e); process.exit(1); });`;
  // HOME: the background log goes under the test's home, not the user's.
  const out = execFileSync(process.execPath, ['-e', script], { cwd: project(), env: { ...process.env, HOME: home, ...env }, encoding: 'utf8', timeout: 60_000 });
  const line = JSON.parse(out.trim().split('\n').pop()!) as { pid: number; backgrounded: boolean };
  expect(line.backgrounded).toBe(true);
  return line.pid;
}

beforeAll(() => {
  // The child loads the drop-in as the CLI would: built.
  rmSync(built, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'compat', 'tsconfig.json'), '--outDir', built]);
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'nss-compat-daemon-')));
  socket = join(scratch, 'run', 'daemon.sock');
  home = join(scratch, 'home');
  process.env.HOME = home;
});

afterAll(async () => {
  await Compat.shutdown();
  Compat.configure({});
  process.env.HOME = savedHome;
  // The daemon would wait 10 idle minutes: it is this test's, so it goes now.
  for (const pid of daemonPids) if (alive(pid)) process.kill(pid, 'SIGTERM');
  await until('the daemon to exit', () => [...daemonPids].every((pid) => !alive(pid)));
  rmSync(scratch, { recursive: true, force: true });
  rmSync(built, { recursive: true, force: true });
  removeProject();
});

describe('a backgrounded job and the end of a headless CLI', () => {
  it('upstream: the job outlives the CLI, an orphan no service lists', async () => {
    const pid = headlessCli('upstream', {});
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(alive(pid)).toBe(true);
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  for (const pty of [false, true]) {
    it(`drop-in in daemon mode: the job outlives the CLI, owned by the daemon, listed and ended later (${pty ? 'PTY' : 'pipes'})`, async () => {
      const pid = headlessCli('compat', { NATIVE_SHELL_GEMINI_DAEMON: socket }, pty);
      const later = client();
      try {
        await later.getActiveProcesses();
        daemonPids.add(later.daemon!.pid);
        const find = async () => (await later.getActiveProcesses()).find((j) => j.pid === pid);
        await until('the job in the daemon', async () => (await find()) !== undefined);
        const job = (await find())!;
        // Nobody started it who is still there: the CLI has exited.
        expect(job).toMatchObject({ status: 'running', attached: 'none', description: 'dev server' });
        expect(alive(pid)).toBe(true);
        // It goes on printing with nobody attached, and all of it is kept.
        const ticks = async () => (await later.getProcessOutput(job.handle)).split('tick').length;
        const before = await ticks();
        await until('more output', async () => (await ticks()) > before + 2);
        expect(await later.getProcessOutput(job.handle)).toMatch(/^listening\n/u);

        const killed = await later.kill(job.handle);
        expect(killed.status).toBe('killed');
        expect(alive(pid)).toBe(false);
      } finally {
        await later.shutdown();
      }
    });
  }

  it('drop-in with nothing configured: a pipes-mode job outlives the CLI in the user\'s daemon, listed and ended later', async () => {
    const own = unconfigured();
    const pid = headlessCli('compat', own.env);
    const later = client(own.socket);
    try {
      await later.getActiveProcesses();
      daemonPids.add(later.daemon!.pid);
      const find = async () => (await later.getActiveProcesses()).find((j) => j.pid === pid);
      await until('the job in the daemon', async () => (await find()) !== undefined);
      const job = (await find())!;
      expect(job).toMatchObject({ status: 'running', attached: 'none', description: 'dev server' });
      const ticks = async () => (await later.getProcessOutput(job.handle)).split('tick').length;
      const before = await ticks();
      await until('more output', async () => (await ticks()) > before + 2);
      expect((await later.kill(job.handle)).status).toBe('killed');
      expect(alive(pid)).toBe(false);
    } finally {
      await later.shutdown();
    }
  });

  it('drop-in with nothing configured: a PTY job (an interactive CLI\'s) stays in process and ends with the CLI', async () => {
    const own = unconfigured();
    const pid = headlessCli('compat', own.env, true);
    await until('the job to end with the CLI', () => !alive(pid));
  });

  it('drop-in with nothing configured and no daemon to be had: the command runs in process (and ends with the CLI)', async () => {
    // No daemon binary (DAEMON_UNAVAILABLE): the default does not fail the command.
    const own = unconfigured('xdg-no-daemon');
    const pid = headlessCli('compat', { ...own.env, NATIVE_SHELL_DAEMON_BIN: join(scratch, 'no-such-daemon') });
    expect(existsSync(own.socket)).toBe(false);
    await until('the job to end with the CLI', () => !alive(pid));
  });

  it('drop-in in process (NATIVE_SHELL_GEMINI_DAEMON=0): the job ends with the CLI', async () => {
    const pid = headlessCli('compat', { NATIVE_SHELL_GEMINI_DAEMON: '0' });
    await until('the job to end with the CLI', () => !alive(pid));
  });
});

describe('the drop-in in daemon mode', () => {
  beforeAll(async () => {
    await Compat.shutdown();
    Compat.configure({ daemon: { socket } });
    // Start the daemon (if no test before did) and note it, for afterAll to end.
    const first = client();
    await first.getActiveProcesses();
    daemonPids.add(first.daemon!.pid);
    await first.shutdown();
  });

  it('runs commands as in process: results, events, input, kill', async () => {
    for (const pty of [true, false]) {
      const events: ShellOutputEvent[] = [];
      const { pid, result } = await Compat.execute('echo one; read -r x; echo "two $x"; exit 3', project(), (e) => events.push(e), new AbortController().signal, pty, config({ keepStdinOpen: true }));
      expect(pid).toBeGreaterThan(0);
      await until('the first line', () => events.some((e) => e.type === 'data' && (typeof e.chunk === 'string' ? e.chunk : gridText(e.chunk as AnsiOutput)).includes('one')));
      Compat.writeToPty(pid!, 'x\n');
      const r = await result;
      // A terminal echoes the input, as in process.
      expect(r).toMatchObject({ output: pty ? 'one\nx\ntwo x' : 'one\ntwo x', exitCode: 3, aborted: false, pid });
      expect(events[events.length - 1]).toEqual({ type: 'exit', exitCode: 3, signal: pty ? 0 : null });
    }
    const { pid, result } = await Compat.execute('sleep 30', project(), () => undefined, new AbortController().signal, true, config());
    await Compat.kill(pid!);
    expect(Compat.isPtyActive(pid!)).toBe(false);
    expect(alive(pid!)).toBe(false);
    expect((await result).aborted).toBe(true);
  });

  it('writes the background log as in process, the screen\'s lines included, under GEMINI_CLI_HOME', async () => {
    const geminiHome = join(scratch, 'gemini-home');
    process.env.GEMINI_CLI_HOME = geminiHome;
    try {
      const stop = join(project(), 'stop-daemon-log');
      const spin = `while [ ! -e ${stop} ]; do printf '\\rspin %s' $((n++ % 4)); sleep 0.05; done; echo; echo done`;
      const { pid, result } = await Compat.execute(`echo one; echo two; ${spin}`, project(), () => undefined, new AbortController().signal, true, config({ sessionId: 'log' }));
      Compat.background(pid!, 'log');
      await result;
      const log = Compat.getLogFilePath(pid!);
      expect(log.startsWith(join(geminiHome, '.gemini', 'tmp', 'background-processes'))).toBe(true);
      const read = (): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');
      await until('the screen lines in the log', () => read().includes('one\ntwo\n'));
      const exited = new Promise<number>((r) => Compat.onExit(pid!, (code) => r(code)));
      writeFileSync(stop, '');
      expect(await exited).toBe(0);
      expect(read()).toMatch(/^one\ntwo\nspin \d\ndone\n$/u);
    } finally {
      delete process.env.GEMINI_CLI_HOME;
    }
  });

  it('shutdown() ends the jobs not backgrounded and leaves the backgrounded ones to the daemon', async () => {
    const signal = new AbortController().signal;
    const kept = await Compat.execute(SERVER, project(), () => undefined, signal, false, config({ sessionId: 'd' }));
    const ended = await Compat.execute('sleep 30', project(), () => undefined, signal, false, config({ sessionId: 'd' }));
    Compat.background(kept.pid!, 'd');
    expect((await kept.result).backgrounded).toBe(true);
    await Compat.shutdown();
    expect(alive(ended.pid!)).toBe(false);
    expect(alive(kept.pid!)).toBe(true);
    const later = client();
    try {
      const job = (await later.getActiveProcesses()).find((j) => j.pid === kept.pid);
      daemonPids.add(later.daemon!.pid);
      expect(job?.status).toBe('running');
      await later.kill(job!.handle);
      expect(alive(kept.pid!)).toBe(false);
    } finally {
      await later.shutdown();
    }
  });
});
