// A job backgrounded by a headless `gemini -p` — the real Gemini CLI 0.61, switched over
// to the drop-in (e2e/gemini-dropin.ts), its model scripted — outlives the CLI as
// upstream's does, owned by the daemon: a later client of the daemon lists it (attached
// to nobody), reads the output it goes on printing, and kills it. So it is with nothing
// configured (the drop-in's default places a headless run's pipes-mode jobs in the
// user's daemon) and with NATIVE_SHELL_GEMINI_DAEMON naming a daemon. Upstream's own CLI
// leaves an orphan no service lists (printed: not in every run here); the drop-in in
// process (NATIVE_SHELL_GEMINI_DAEMON=0) ends the job with the CLI. (__test__/compat/daemon.test.ts checks the same with a child Node in the
// CLI's place, for both of the drop-in's modes.)
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive } from '../helpers';
import { eventuallyAsync, place, seen, ShellExecutionService, stopDaemon, stopDaemons } from '../daemon/setup';
import { geminiProject, type GeminiProject, type Turn } from './gemini';
import { geminiWithDropIn, removeGeminiWithDropIn } from './gemini-dropin';

/** The dev server: notes its pid (the shell the CLI's tool runs it in), then prints forever. */
const SERVER = 'echo $$ > server.pid; echo listening; while :; do echo tick; sleep 0.2; done';
const turns: Turn[] = [
  { call: 'run_shell_command', builtin: true, args: { command: SERVER, description: 'dev server', is_background: true } },
  { text: 'Started.' },
];

let cli: string;
const projects: GeminiProject[] = [];

beforeAll(() => {
  cli = geminiWithDropIn();
}, 300_000);

afterAll(async () => {
  await stopDaemons();
  for (const g of projects) g.cleanup();
  removeGeminiWithDropIn();
}, 120_000);

/** Runs `gemini -p` once with the scripted turns; the dev server's pid once it wrote it. */
async function startServer(options: { cli?: string; env?: Record<string, string | undefined> }): Promise<{ pid: number; g: GeminiProject; detail: string }> {
  const g = geminiProject();
  projects.push(g);
  const run = await g.run(turns, 'Start the dev server in the background.', options);
  const detail = `exit ${run.code}; calls ${JSON.stringify(run.calls).slice(0, 1500)}\nstderr: ${run.stderr.slice(-2000)}`;
  expect(run.calls.map((c) => `${c.name} ${c.status}`), detail).toEqual(['run_shell_command success']);
  const pidFile = join(g.root, 'server.pid');
  expect(existsSync(pidFile), detail).toBe(true);
  return { pid: Number(readFileSync(pidFile, 'utf8').trim()), g, detail };
}

/** The parent pid of a process (from /proc), or null once it is gone. */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The processes whose process group is `pgid`, zombies included (/proc). */
function inGroup(pgid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/u.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone, or not a group leader
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

describe('a job backgrounded by a headless gemini -p', () => {
  it('drop-in in daemon mode: outlives the CLI, owned by the daemon, listed, read and killed later', async () => {
    const p = place();
    const { pid, detail } = await startServer({ cli, env: { NATIVE_SHELL_GEMINI_DAEMON: p.socket } });
    const later = new ShellExecutionService({ projectRoot: '/', daemon: { socket: p.socket } });
    try {
      // The CLI's tool runs `bash -c ...`: the job's command is bash, its description the command line.
      const find = async () => (await later.getActiveProcesses()).find((j) => j.pid === pid || (j.description ?? '').includes('echo tick'));
      const listed = await eventuallyAsync(async () => (await find()) !== undefined);
      expect(listed, `${detail}\njobs: ${JSON.stringify(await later.getActiveProcesses())}\nserver alive: ${alive(pid)}`).toBe(true);
      const job = (await find())!;
      // The CLI has exited: nobody attached, and the job runs on.
      expect(job, detail).toMatchObject({ status: 'running', attached: 'none' });
      expect(alive(pid), detail).toBe(true);
      const ticks = async () => (await later.getProcessOutput(job.handle)).split('tick').length;
      const before = await ticks();
      expect(await eventuallyAsync(async () => (await ticks()) > before + 2), detail).toBe(true);
      expect(await later.getProcessOutput(job.handle)).toMatch(/^listening\n/u);
      expect((await later.kill(job.handle)).status).toBe('killed');
      expect(await eventuallyAsync(() => !alive(pid))).toBe(true);
    } finally {
      await later.shutdown();
      killGroup(pid);
    }
  }, 300_000);

  // What a drop-in user who changes nothing gets: no NATIVE_SHELL_GEMINI_DAEMON (the
  // suite's config sets it to 0: removed here), no configure call. The "user's daemon"
  // is this test's: XDG_RUNTIME_DIR in its own directory (client/place.ts), so the
  // machine's user daemon is never touched.
  it('drop-in with nothing configured: outlives the CLI in the daemon, its child there, listed, read, killed, nothing left', async () => {
    const p = place();
    const runtime = join(p.base, 'xdg');
    mkdirSync(runtime, { mode: 0o700 });
    const socket = join(runtime, 'native-shell-service', 'daemon.sock');
    const { pid, detail } = await startServer({ cli, env: { NATIVE_SHELL_GEMINI_DAEMON: undefined, XDG_RUNTIME_DIR: runtime } });
    // The CLI has exited (run() waits for it): the daemon it started is still there.
    expect(existsSync(socket), `${detail}\nno daemon socket at ${socket}`).toBe(true);
    const later = new ShellExecutionService({ projectRoot: '/', daemon: { socket } });
    try {
      const find = async () => (await later.getActiveProcesses()).find((j) => j.pid === pid);
      const listed = await eventuallyAsync(async () => (await find()) !== undefined);
      expect(listed, `${detail}\njobs: ${JSON.stringify(await later.getActiveProcesses())}\nserver alive: ${alive(pid)}`).toBe(true);
      const daemonPid = later.daemon!.pid;
      seen(daemonPid);
      const job = (await find())!;
      expect(job, detail).toMatchObject({ status: 'running', attached: 'none' });
      expect(job.description ?? '', detail).toContain('echo tick');
      // Not an orphan: the job's process is the daemon's child (upstream's is re-parented to init).
      expect(parentOf(pid), detail).toBe(daemonPid);
      const ticks = async () => (await later.getProcessOutput(job.handle)).split('tick').length;
      const before = await ticks();
      expect(await eventuallyAsync(async () => (await ticks()) > before + 2), detail).toBe(true);
      expect(await later.getProcessOutput(job.handle)).toMatch(/^listening\n/u);
      expect((await later.kill(job.handle)).status).toBe('killed');
      // Gone and reaped: no zombie of it, nothing of its process group (the loop's `sleep`).
      expect(await eventuallyAsync(() => !existsSync(`/proc/${pid}`) && inGroup(pid).length === 0), `left: ${JSON.stringify(inGroup(pid))}`).toBe(true);
    } finally {
      await later.shutdown();
      killGroup(pid);
      await stopDaemon(socket);
    }
  }, 300_000);

  // Upstream's detached child outlived the CLI in one run here and not in the next (both
  // cores busy): what upstream does is printed, not asserted.
  it("upstream's CLI: whether the server outlives it (printed, not asserted)", async () => {
    const { pid } = await startServer({});
    try {
      console.log(`upstream's gemini -p: the backgrounded server ${alive(pid) ? 'outlived it, an orphan no service lists' : 'did not outlive it'}`);
    } finally {
      killGroup(pid);
    }
  }, 300_000);

  it('drop-in in process (NATIVE_SHELL_GEMINI_DAEMON=0): the job ends with the CLI', async () => {
    const { pid, detail } = await startServer({ cli, env: { NATIVE_SHELL_GEMINI_DAEMON: '0' } });
    expect(await eventuallyAsync(() => !alive(pid)), detail).toBe(true);
  }, 300_000);
});

describe('the background log, through the real CLI', () => {
  // The CLI stays up for 3 s after backgrounding (its model's next call is a foreground
  // `sleep 3`): meanwhile the drop-in writes what the job prints to the log, which is
  // under GEMINI_CLI_HOME (where upstream puts it), not under HOME.
  it('fills while the job prints, under GEMINI_CLI_HOME (drop-in in process)', async () => {
    const g = geminiProject();
    projects.push(g);
    const geminiHome = join(g.base, 'gemini-home');
    mkdirSync(join(geminiHome, '.gemini'), { recursive: true });
    // GEMINI_CLI_HOME moves the CLI's settings too: the offline ones go with it.
    cpSync(join(g.base, 'home', '.gemini', 'settings.json'), join(geminiHome, '.gemini', 'settings.json'));
    const run = await g.run(
      [
        { call: 'run_shell_command', builtin: true, args: { command: 'seq 1 300 | while read i; do echo tick $i; sleep 0.1; done', description: 'ticker', is_background: true } },
        { call: 'run_shell_command', builtin: true, args: { command: 'sleep 3', description: 'wait' } },
        { text: 'Done.' },
      ],
      'Start the ticker in the background, then wait.',
      { cli, env: { GEMINI_CLI_HOME: geminiHome, NATIVE_SHELL_GEMINI_DAEMON: '0' } },
    );
    const detail = `exit ${run.code}; calls ${JSON.stringify(run.calls).slice(0, 1500)}\nstderr: ${run.stderr.slice(-2000)}`;
    expect(run.calls.map((c) => `${c.name} ${c.status}`), detail).toEqual(['run_shell_command success', 'run_shell_command success']);
    const pid = Number(/PID: (\d+)/.exec(run.calls[0]!.output)?.[1]);
    expect(pid, detail).toBeGreaterThan(0);
    const log = join(geminiHome, '.gemini', 'tmp', 'background-processes', `background-${pid}.log`);
    const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
    console.log(`background log after the CLI's 3 s: ${text.split('tick').length - 1} lines`);
    // Lines 1 to 5 at least (a tenth of a second each, in 3 s), each once, in order.
    const lines = text.split('\n');
    for (let i = 1; i <= 5; i++) expect(lines.filter((l) => l === `tick ${i}`), `${detail}\nlog: ${JSON.stringify(text.slice(0, 500))}`).toHaveLength(1);
    expect(existsSync(join(g.base, 'home', '.gemini', 'tmp', 'background-processes', `background-${pid}.log`))).toBe(false);
  }, 300_000);
});
