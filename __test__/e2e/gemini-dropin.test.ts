// A job backgrounded by a headless `gemini -p` — the real Gemini CLI 0.61, switched over
// to the drop-in (e2e/gemini-dropin.ts), its model scripted — outlives the CLI as
// upstream's does, owned by the daemon: a later client of the daemon lists it (attached
// to nobody), reads the output it goes on printing, and kills it. So it is with nothing
// configured (the drop-in's default places a headless run's pipes-mode jobs in the
// user's daemon) and with NATIVE_SHELL_GEMINI_DAEMON naming a daemon. Upstream's own CLI
// leaves an orphan no service lists (printed: not in every run here); the drop-in in
// process (NATIVE_SHELL_GEMINI_DAEMON=0) ends the job with the CLI. (__test__/compat/daemon.test.ts checks the same with a child Node in the
// CLI's place, for both of the drop-in's modes.)
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

// The PTY path through the real CLI: the switched CLI runs interactively, its TUI in a PTY
// of this package's own service (a job typed into, its screen read back), with nothing
// configured. Its model runs a command that waits for a line on its terminal: the test
// focuses the embedded shell (Tab, as the TUI offers) and types the line into it, which the
// drop-in's `writeToPty` delivers; then a printing command the test backgrounds with
// Ctrl+B. What the model received back is read from the CLI's session transcript.
describe('the PTY path through the real CLI, interactive', () => {
  const screenOf = (tui: InstanceType<typeof ShellExecutionService>, handle: number): string => {
    // The TUI's service is in process, where the screen is read at once (a daemon's
    // would answer with a promise).
    const screen = tui.getScreen(handle);
    if (screen instanceof Promise) throw new Error('the TUI runs in process: its screen is read at once');
    return screen.lines.map((runs) => runs.map((r) => r.text).join('')).join('\n');
  };

  it('a PTY command rendered in the TUI, typed into through its shell focus, then backgrounded with Ctrl+B', async () => {
    const g = geminiProject();
    projects.push(g);
    const reader = 'echo ready; read -r line; echo "got $line"';
    const ticker = 'echo $$ > ticker.pid; echo started; while :; do echo tick; sleep 0.2; done';
    const command = g.interactive(
      [
        { call: 'run_shell_command', builtin: true, args: { command: reader, description: 'reader' } },
        { call: 'run_shell_command', builtin: true, args: { command: ticker, description: 'ticker' } },
        { text: 'All finished.' },
      ],
      'Run the two commands.',
      { cli, env: { NATIVE_SHELL_GEMINI_DAEMON: undefined } },
    );
    // Interactive, the CLI asks how to authenticate unless its settings say (headless, the key alone does).
    const settings = join(g.base, 'home', '.gemini', 'settings.json');
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), security: { auth: { selectedType: 'gemini-api-key' } } }));
    // No MCP server: this test is about the CLI's own shell tool (and the TUI starts sooner).
    writeFileSync(join(g.root, '.gemini', 'settings.json'), '{}');
    const tui = new ShellExecutionService({ projectRoot: g.root });
    const { handle } = await tui.run(command.program, { args: command.args, env: command.env, clearEnv: true, mode: 'pty', cols: 120, rows: 40 });
    const screen = () => screenOf(tui, handle);
    const waitFor = async (what: string, seen: (text: string) => boolean, timeoutMs = 60_000): Promise<void> => {
      const ok = await eventuallyAsync(() => seen(screen()), timeoutMs);
      expect(ok, `waiting for ${what}; the screen:\n${screen()}`).toBe(true);
    };
    const type = (keys: string) => tui.writeToPty(handle, keys);
    let done = false;
    try {
      // A line of a command's output as the TUI draws it in the tool's box (`│ ready   │`);
      // the box's title holds the command line, which is no proof of output.
      const outputLine = (text: string) => new RegExp(`^│ ${text}\\s*│$`, 'mu');
      // The reader's output, rendered by the TUI from the drop-in's PTY grid.
      await waitFor("the reader's output", (t) => outputLine('ready').test(t), 180_000);
      await waitFor('the focus hint', (t) => /\(Tab to focus\)/u.test(t));
      type('\t');
      await waitFor('the shell focused', (t) => /\(Shift\+Tab to unfocus\)/u.test(t));
      // One key at a time, each once the terminal has echoed the one before: a burst of
      // keys is a paste to the TUI, which goes to its own prompt, not to the shell.
      const word = 'hello';
      for (let i = 1; i <= word.length; i++) {
        type(word[i - 1]!);
        await waitFor(`the echo of ${word.slice(0, i)}`, (t) => outputLine(word.slice(0, i)).test(t));
      }
      type('\r');
      await waitFor("the reader's answer", (t) => outputLine('got hello').test(t));
      // The ticker: printing in the TUI, the active shell (its focus hint shown: still
      // focused, as the reader's was), then moved to the background by the user.
      await waitFor("the ticker's output", (t) => outputLine('tick').test(t) && /ticker\.pid.*to (un)?focus\)/u.test(t));
      expect(existsSync(join(g.root, 'ticker.pid'))).toBe(true);
      const tickerPid = Number(readFileSync(join(g.root, 'ticker.pid'), 'utf8').trim());
      type('\x02');
      await waitFor("the model's last turn", (t) => t.includes('All finished.'));
      // What the model received: the tool results (functionResponse) of the session transcript.
      const transcript = g.transcript();
      const answers = [...transcript.matchAll(/"functionResponse":\{[^{}]*"response":\{"output":("(?:[^"\\]|\\.)*")/gu)].map((m) => JSON.parse(m[1]!) as string);
      const said = `transcript's tool results: ${JSON.stringify(answers)}`;
      expect(answers.some((a) => a.includes('Output: ready\nhello\ngot hello\n')), said).toBe(true);
      expect(answers.some((a) => a.includes(`Command moved to background (PID: ${tickerPid}).`)), said).toBe(true);
      // Backgrounded, still running while the CLI is up (in process: a PTY job).
      expect(alive(tickerPid)).toBe(true);
      // The user leaves: Ctrl+C twice, as the TUI asks.
      type('\x03');
      await waitFor('the exit question', (t) => t.includes('Press Ctrl+C again to exit.'));
      type('\x03');
      expect(await eventuallyAsync(async () => (await tui.getResult(handle)).status !== 'running', 60_000), `the CLI did not exit; screen:\n${screen()}`).toBe(true);
      // A PTY job ends with the CLI, as upstream's gets its terminal's hang-up.
      expect(await eventuallyAsync(() => !alive(tickerPid))).toBe(true);
      done = true;
    } finally {
      if (!done) console.log(`the TUI's last screen:\n${screen()}`);
      await tui.shutdown();
    }
  }, 600_000);
});
