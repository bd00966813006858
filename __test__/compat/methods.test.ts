// Every static method of the adapter, on real processes; where upstream answers the
// same question, its answer is checked too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AnsiOutput, ShellExecutionResult, ShellOutputEvent } from '../../compat/gemini-compat';
import { ptyOutput } from '../../compat/views';
import { Compat, config, gridText, project, removeProject, Upstream } from './harness';

/** A grid's text without the trailing cursor row. */
const shown = (grid: AnsiOutput): string => gridText(grid).replace(/\n+$/u, '');

const never = new AbortController().signal;
let home: string;
const savedHome = process.env.HOME;

beforeAll(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'nss-compat-home-')));
  process.env.HOME = home;
});
afterAll(async () => {
  await Compat.shutdown();
  process.env.HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
  removeProject();
});

async function until(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(predicate()).toBe(true);
}

function lastGrid(events: ShellOutputEvent[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'data' && typeof e.chunk !== 'string') return shown(e.chunk);
  }
  return '';
}

async function start(cmd: string, pty: boolean, extra = {}) {
  const events: ShellOutputEvent[] = [];
  const h = await Compat.execute(cmd, project(), (e) => events.push(e), never, pty, config(extra));
  expect(h.pid).toBeGreaterThan(0);
  return { pid: h.pid!, result: h.result, events };
}

describe('execute', () => {
  it('returns the real pid and a result with upstream field set', async () => {
    const { pid, result, events } = await start('echo "pid=$$"', true);
    const r = await result;
    expect(r.pid).toBe(pid);
    expect(r.output).toBe(`pid=${pid}`);
    expect(Object.keys(r).sort()).toEqual(
      ['aborted', 'ansiOutput', 'error', 'executionMethod', 'exitCode', 'output', 'pid', 'rawOutput', 'signal'].sort(),
    );
    expect(r.rawOutput).toBeInstanceOf(Buffer);
    expect(shown(r.ansiOutput as AnsiOutput)).toBe(`pid=${pid}`);
    expect(r.ansiOutput![0]).toEqual([
      { text: `pid=${pid}`, bold: false, italic: false, underline: false, dim: false, inverse: false, isUninitialized: false, fg: '', bg: '' },
    ]);
    expect(events.map((e) => e.type)).toEqual(['data', 'exit']);
    expect(Compat.getHandle(pid)).toBeUndefined(); // forgotten once finished
  });

  it('PTY data events carry the whole current grid; pipes events carry the new text', async () => {
    const pty = await start('for i in 1 2 3; do echo "line $i"; sleep 0.2; done', true);
    await pty.result;
    const grids = pty.events.filter((e) => e.type === 'data').map((e) => shown(e.chunk as AnsiOutput));
    expect(grids.length).toBeGreaterThanOrEqual(2);
    expect(grids[grids.length - 1]).toBe('line 1\nline 2\nline 3');
    for (const g of grids) expect('line 1\nline 2\nline 3'.startsWith(g)).toBe(true);

    const pipes = await start('for i in 1 2 3; do echo "line $i"; sleep 0.2; done', false);
    await pipes.result;
    const chunks = pipes.events.filter((e) => e.type === 'data').map((e) => e.chunk as string);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.join('')).toBe('line 1\nline 2\nline 3\n');
  });

  it('coalesces a flood into few events and loses nothing', async () => {
    const { result, events } = await start('seq 1 300000', false);
    const r = await result;
    const data = events.filter((e) => e.type === 'data');
    expect(data.length).toBeLessThan(1000);
    // The result is whole (read back from the job's output file when memory kept
    // only head + tail); events skip what scrolled out of memory, with a marker.
    const expected = Array.from({ length: 300000 }, (_, i) => String(i + 1)).join('\n');
    expect(r.output).toBe(expected);
    const joined = data.map((e) => e.chunk as string).join('');
    expect(joined.startsWith('1\n2\n3\n')).toBe(true);
    expect(joined.endsWith('\n299999\n300000\n')).toBe(true);
    if (joined !== `${expected}\n`) expect(joined).toContain('[... output omitted ...]');
  });

  it('a PTY result is the last lines of a long flood of multibyte text, read back from its end', async () => {
    // 2.6 MB, more than the 12 030 lines the result keeps (1 MB): the result is read
    // backwards a 256 KiB slice at a time, and slices' starts fall inside characters
    // (49 of a line's 87 bytes continue a character) and move back to their starts
    // (compat/text.ts, readLastLines).
    const mark = '✓'.repeat(20);
    const line = (i: number): string => `${String(i).padStart(6, '0')} ${mark} ąčęėįšųūž`;
    const count = 30000;
    const { result } = await start(
      `awk 'BEGIN { for (i = 1; i <= ${count}; i++) printf "%06d ${mark} ąčęėįšųūž\\n", i }'`,
      true,
      { scrollback: 12000 },
    );
    const r = await result;
    const whole = `${Array.from({ length: count }, (_, i) => line(i + 1)).join('\n')}\n`;
    expect(r.error).toBeNull();
    expect(r.output).toBe(ptyOutput(whole, 12030));
  });

  it('a directory that does not exist gives a failed result without a pid, as upstream pipes mode', async () => {
    const missing = join(project(), 'no', 'such', 'dir');
    for (const pty of [false, true]) {
      const events: ShellOutputEvent[] = [];
      const mine = await Compat.execute('echo hi', missing, (e) => events.push(e), never, pty, config());
      expect(mine.pid).toBeUndefined();
      const r = await mine.result;
      expect(r.error).toBeInstanceOf(Error);
      expect((r.error as Error & { code?: string }).code).toBe('INVALID_DIRECTORY');
      expect(r).toMatchObject({ exitCode: 1, signal: null, output: '', aborted: false, pid: undefined });
      expect(r.executionMethod).toBe(pty ? 'none' : 'child_process');
      expect(events).toEqual([]);
    }
    const theirs = await Upstream.execute('echo hi', missing, () => undefined, never, false, config() as never);
    expect(theirs.pid).toBeUndefined();
    expect(await theirs.result).toMatchObject({ exitCode: 1, signal: null, output: '', executionMethod: 'child_process' });
  });

  it('an abort signal that has already fired kills the command at once', async () => {
    const c = new AbortController();
    c.abort();
    const h = await Compat.execute('sleep 30; echo never', project(), () => undefined, c.signal, false, config());
    const r = await h.result;
    expect(r.aborted).toBe(true);
    expect(r.output).toBe('');
    expect(r.signal).not.toBeNull();
  });

  it('hands the environment through the sandbox manager (redaction applies)', async () => {
    const env = { ...process.env, COMPAT_API_TOKEN: 'secret-value', COMPAT_PLAIN: 'plain' };
    const cfg = config({
      env,
      sanitizationConfig: { allowedEnvironmentVariables: [], blockedEnvironmentVariables: [], enableEnvironmentVariableRedaction: true },
    });
    const cmd = 'echo "[$COMPAT_API_TOKEN] [$COMPAT_PLAIN]"';
    const mine = await (await Compat.execute(cmd, project(), () => undefined, never, false, cfg)).result;
    const theirs = await (await Upstream.execute(cmd, project(), () => undefined, never, false, cfg as never)).result;
    expect(mine.output).toBe(theirs.output);
    expect(mine.output).not.toContain('secret-value');
  });
});

describe('concurrency', () => {
  it('runs executions side by side, each with its own events and result', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        start(`for j in 1 2 3; do echo "job${i} line $j"; sleep 0.05; done; exit ${i}`, i % 2 === 0),
      ),
    );
    const results = await Promise.all(runs.map((r) => r.result));
    results.forEach((r, i) => {
      expect(r.exitCode).toBe(i);
      expect(r.output).toBe(`job${i} line 1\njob${i} line 2\njob${i} line 3`);
      const events = runs[i]!.events;
      expect(events[events.length - 1]).toEqual({ type: 'exit', exitCode: i, signal: i % 2 === 0 ? 0 : null });
    });
  });
});

describe('without a sandbox manager', () => {
  it('passes the environment as built: nothing redacted (D16)', async () => {
    const cfg = config({ env: { ...process.env, COMPAT_API_TOKEN: 'visible' }, sandboxManager: undefined });
    const r = await (await Compat.execute('echo "[$COMPAT_API_TOKEN] $GEMINI_CLI"', project(), () => undefined, never, false, cfg)).result;
    expect(r.output).toBe('[visible] 1');
  });
});

describe('writeToPty', () => {
  it('feeds a PTY program', async () => {
    const { pid, result } = await start('read -r a; read -r b; echo "got $a and $b"', true);
    Compat.writeToPty(pid, 'one\n');
    Compat.writeToPty(pid, 'two\n');
    expect((await result).output).toContain('got one and two');
  });

  it('pipes mode: stdin reads EOF as upstream, or takes input with keepStdinOpen', async () => {
    const closed = await start('read -r a; echo "read=$? a=[$a]"', false);
    expect((await closed.result).output).toBe('read=1 a=[]');
    const open = await start('read -r a; echo "a=[$a]"', false, { keepStdinOpen: true });
    Compat.writeToPty(open.pid, 'typed\n');
    expect((await open.result).output).toBe('a=[typed]');
  });

  it('is a no-op for an unknown or finished pid', async () => {
    const { pid, result } = await start('true', true);
    await result;
    expect(() => Compat.writeToPty(pid, 'x')).not.toThrow();
    expect(() => Compat.writeToPty(999_999_999, 'x')).not.toThrow();
  });
});

describe('isPtyActive, onExit', () => {
  it('tracks a running job and reports its exit, also to late callers', async () => {
    const { pid, result } = await start('read -r x; exit 5', true);
    expect(Compat.isPtyActive(pid)).toBe(true);
    const seen: Array<[number, number | undefined]> = [];
    const off = Compat.onExit(pid, (code, signal) => seen.push([code, signal]));
    expect(typeof off).toBe('function');
    Compat.writeToPty(pid, '\n');
    await result;
    expect(seen).toEqual([[5, 0]]);
    expect(Compat.isPtyActive(pid)).toBe(false);
    const late: number[] = [];
    Compat.onExit(pid, (code) => late.push(code));
    expect(late).toEqual([5]);
  });

  it('an unsubscribed exit callback is not called; unknown pids are inactive', async () => {
    const { pid, result } = await start('sleep 0.2', false);
    const seen: number[] = [];
    const off = Compat.onExit(pid, (c) => seen.push(c));
    off();
    await result;
    expect(seen).toEqual([]);
    expect(Compat.isPtyActive(process.pid)).toBe(false);
    expect(Compat.isPtyActive(999_999_999)).toBe(false);
  });
});

describe('live PTY renders', () => {
  it('show the maxSerializedLines window, scrollback included, while the job runs', async () => {
    // The paced renders read the screen off the JS thread; what they show is the same
    // window as the final render: here 150 lines and the cursor row on a 30-row
    // terminal, capped at 100 rows.
    const { pid, result, events } = await start('seq 1 150; sleep 100', true, { maxSerializedLines: 100 });
    const want = Array.from({ length: 99 }, (_, i) => String(52 + i)).join('\n');
    // Well before the job's exit (whose final render would show the same).
    await until(() => lastGrid(events) === want, 20_000);
    await Compat.kill(pid);
    await result;
  });
});

describe('kill', () => {
  it('resolves the result as cancelled, as upstream, and ends the process group', async () => {
    const { pid, result, events } = await start('echo up; sleep 30 & sleep 30; echo never', true);
    await until(() => lastGrid(events).includes('up'));
    const subscriberEvents: ShellOutputEvent[] = [];
    Compat.subscribe(pid, (e) => subscriberEvents.push(e));
    await Compat.kill(pid);
    const r = await result;
    expect(r).toMatchObject({ exitCode: 130, signal: null, aborted: true, pid, output: 'up' });
    expect(r.error?.message).toBe('Operation cancelled by user.');
    expect(subscriberEvents[subscriberEvents.length - 1]).toEqual({ type: 'exit', exitCode: 130, signal: null });
    // The caller's stream still ends with the real exit.
    await until(() => events.some((e) => e.type === 'exit'));
    await until(() => {
      try {
        process.kill(-pid, 0);
        return false;
      } catch {
        return true;
      }
    });
  });

  it('is a no-op for unknown and finished pids', async () => {
    await expect(Compat.kill(999_999_999)).resolves.toBeUndefined();
    const { pid, result } = await start('true', false);
    await result;
    await expect(Compat.kill(pid)).resolves.toBeUndefined();
  });
});

describe('background, listBackgroundProcesses, getLogDir, getLogFilePath', () => {
  it('share upstream log locations', () => {
    expect(Compat.getLogDir()).toBe(Upstream.getLogDir());
    expect(Compat.getLogFilePath(1234)).toBe(Upstream.getLogFilePath(1234));
    expect(Compat.getLogDir()).toBe(join(home, '.gemini', 'tmp', 'background-processes'));
  });

  it('resolves early, keeps running, logs output and lists the job for its session', async () => {
    const { pid, result, events } = await start(
      'echo first; read -r x; echo "second $x"; sleep 0.1; exit 3',
      true,
      { sessionId: 'bg-session' },
    );
    await until(() => lastGrid(events).includes('first'));
    Compat.background(pid, undefined, 'my command');
    const r: ShellExecutionResult = await result;
    expect(r).toMatchObject({ backgrounded: true, exitCode: null, signal: null, aborted: false, pid, output: 'first' });
    expect(Compat.isPtyActive(pid)).toBe(true);
    expect(Compat.listBackgroundProcesses('bg-session')).toEqual([
      { pid, command: 'my command', status: 'running', exitCode: undefined, signal: undefined },
    ]);
    const exited = new Promise<number>((r2) => Compat.onExit(pid, (code) => r2(code)));
    Compat.writeToPty(pid, 'later\n');
    expect(await exited).toBe(3);
    await until(() => Compat.listBackgroundProcesses('bg-session')[0]?.status === 'exited');
    expect(Compat.listBackgroundProcesses('bg-session')[0]).toMatchObject({ pid, status: 'exited', exitCode: 3 });
    const log = Compat.getLogFilePath(pid);
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('second later'));
    expect(readFileSync(log, 'utf8')).toContain('first\n');
    expect(Compat.listBackgroundProcesses('other-session')).toEqual([]);
  });

  it('backgrounding a finished pid adds no history row', async () => {
    const { pid, result } = await start('true', false, { sessionId: 'finished' });
    await result;
    Compat.background(pid, 'finished');
    expect(Compat.listBackgroundProcesses('finished')).toEqual([]);
    expect(() => Compat.background(pid)).toThrow('Session ID is required');
  });

  it('needs a session id, as upstream', async () => {
    expect(() => Compat.listBackgroundProcesses('')).toThrow('Session ID is required');
    const { pid, result } = await start('sleep 0.3', false, { sessionId: undefined });
    expect(() => Compat.background(pid)).toThrow('Session ID is required for background operations');
    await result;
  });
});

describe('subscribe, resizePty, scrollPty', () => {
  it('subscribe starts with the current view and follows to the exit', async () => {
    const { pid, result } = await start('echo one; read -r x; echo two', false, { keepStdinOpen: true });
    await until(() => Compat.getHandle(pid) !== undefined);
    await new Promise((r) => setTimeout(r, 300));
    const seen: ShellOutputEvent[] = [];
    const off = Compat.subscribe(pid, (e) => seen.push(e));
    expect(seen[0]).toEqual({ type: 'data', chunk: 'one\n' });
    Compat.writeToPty(pid, '\n');
    await result;
    expect(seen.map((e) => e.type)).toEqual(['data', 'data', 'exit']);
    expect(seen[1]).toEqual({ type: 'data', chunk: 'two\n' });
    off();
    expect(Compat.subscribe(pid, () => undefined)).toBeTypeOf('function');
  });

  it('resizePty changes the terminal size and sends subscribers the grid', async () => {
    const { pid, result } = await start('echo ready; read -r x; stty size', true);
    const seen: ShellOutputEvent[] = [];
    await until(() => Compat.getHandle(pid) !== undefined);
    Compat.subscribe(pid, (e) => seen.push(e));
    Compat.resizePty(pid, 100, 40);
    expect(seen.some((e) => e.type === 'data')).toBe(true);
    Compat.scrollPty(pid, -5);
    Compat.scrollPty(pid, 10);
    Compat.writeToPty(pid, '\n');
    expect((await result).output).toMatch(/40 100$/);
    expect(() => Compat.resizePty(pid, 80, 24)).not.toThrow(); // finished: ignored
    expect(() => Compat.scrollPty(pid, 1)).not.toThrow();
  });

  it('a full-screen program is shown from the emulated screen', async () => {
    const { pid, result, events } = await start(
      'printf "\\033[?1049h\\033[HFULL SCREEN"; read -r x; printf "\\033[?1049l"; echo after',
      true,
    );
    await until(() => lastGrid(events).includes('FULL SCREEN'));
    Compat.writeToPty(pid, '\n');
    await result;
    expect(lastGrid(events)).toContain('after');
  });
});

describe('resetForTest, configure, shutdown', () => {
  it('forgets bookkeeping, and the native service restarts after shutdown', async () => {
    const { pid, result } = await start('sleep 0.2; echo x', false, { sessionId: 'reset' });
    Compat.background(pid);
    await result;
    expect(Compat.listBackgroundProcesses('reset')).toHaveLength(1);
    Compat.resetForTest();
    expect(Compat.listBackgroundProcesses('reset')).toEqual([]);
    await Compat.shutdown();
    const io = realpathSync(mkdtempSync(join(tmpdir(), 'nss-compat-io-')));
    Compat.configure({ ioDir: io, sessionId: 'configured' });
    const again = await start('echo again', false);
    expect((await again.result).output).toBe('again');
    expect(existsSync(join(io, 'configured'))).toBe(true);
    await Compat.shutdown();
    Compat.configure({});
    rmSync(io, { recursive: true, force: true });
  });
});

describe('following a job with onOutput alone', () => {
  it('shutdown resolves the results of running jobs (their exit comes from the subscription)', async () => {
    const pty = await start('echo up; sleep 30', true);
    const pipes = await start('echo up; sleep 30', false);
    await until(() => lastGrid(pty.events).includes('up'));
    await Compat.shutdown();
    const results = await Promise.race([
      Promise.all([pty.result, pipes.result]),
      new Promise<null>((r) => setTimeout(() => r(null), 10_000)),
    ]);
    expect(results).not.toBeNull();
    // node-pty's convention in PTY mode (exit code 0, the signal); pipes: the signal.
    expect(results!.map((r) => [r.exitCode, r.signal])).toEqual([
      [0, 15],
      [null, 15],
    ]);
    expect(results![0]!.output).toBe('up');
  });

  it('keeps Node alive until the exit is reported, with nothing else holding it', () => {
    // A child Node whose only pending work is an adapter job: it must print the result.
    const root = resolve(__dirname, '..', '..');
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'compat', 'tsconfig.json')]);
    const script = `
      const { ShellExecutionService } = require(${JSON.stringify(join(root, 'dist', 'compat', 'gemini-compat.js'))});
      for (const pty of [true, false]) {
        ShellExecutionService.execute('sleep 0.3; echo late', process.cwd(), () => {}, new AbortController().signal, pty,
          { sessionId: 'alive', terminalWidth: 80, terminalHeight: 30 })
          .then((h) => h.result)
          .then((r) => console.log(JSON.stringify([pty, r.output, r.exitCode])));
      }`;
    const out = execFileSync(process.execPath, ['-e', script], { cwd: project(), encoding: 'utf8', timeout: 20_000 });
    expect(out.trim().split('\n').sort()).toEqual(['[false,"late",0]', '[true,"late",0]']);
  });
});

describe('useLifecycle: reporting to gemini-cli-core ExecutionLifecycleService', () => {
  it('the CLI UI calls (onBackground, subscribe, onExit, kill) see adapter executions', async () => {
    const { ExecutionLifecycleService: Upstream } = await import(
      '@google/gemini-cli-core/dist/src/services/executionLifecycleService.js'
    );
    Compat.useLifecycle(Upstream);
    try {
      const started: number[] = [];
      const onStart = (info: { executionId: number }) => started.push(info.executionId);
      Upstream.onBackground(onStart);
      const { pid, result, events } = await start('echo hello; sleep 30', true, {
        sessionId: 'ui',
        backgroundCompletionBehavior: 'notify',
      });
      await until(() => lastGrid(events).includes('hello'));
      expect(Upstream.isActive(pid)).toBe(true);
      const seen: ShellOutputEvent[] = [];
      Upstream.subscribe(pid, (e: ShellOutputEvent) => seen.push(e));
      expect(shown(seen[0]!.type === 'data' ? (seen[0]!.chunk as AnsiOutput) : [])).toBe('hello');
      Compat.background(pid);
      expect(await result).toMatchObject({ backgrounded: true, output: 'hello', pid });
      expect(started).toEqual([pid]);
      const codes: number[] = [];
      Upstream.onExit(pid, (code: number) => codes.push(code));
      Upstream.kill(pid);
      expect(codes).toEqual([130]);
      await until(() => events.some((e) => e.type === 'exit'));
      expect(Compat.isPtyActive(pid)).toBe(false);
      Upstream.offBackground(onStart);
    } finally {
      Compat.useLifecycle();
    }
  });

  it('the local lifecycle reports background start and completion', async () => {
    const local = Compat.getLifecycle() as import('../../compat/gemini-compat').LocalLifecycle;
    const starts: string[] = [];
    const done: Array<string | null> = [];
    local.onBackground((i) => starts.push(i.label));
    local.onBackgroundComplete((i) => done.push(i.injectionText));
    const { pid, result } = await start('sleep 0.3; echo finished', false, {
      sessionId: 's',
      backgroundCompletionBehavior: 'inject',
    });
    Compat.background(pid);
    await result;
    await until(() => done.length === 1);
    expect(starts).toEqual([`child_process (ID: ${pid})`]);
    expect(done[0]).toBe(
      `[Background command completed successfully. Output saved to ${Compat.getLogFilePath(pid)}]\n\nfinished`,
    );
  });
});

describe('the public API', () => {
  it('has every public static of upstream', () => {
    const names = ['execute', 'writeToPty', 'isPtyActive', 'onExit', 'kill', 'background', 'subscribe', 'resizePty',
      'scrollPty', 'listBackgroundProcesses', 'resetForTest', 'getLogDir', 'getLogFilePath'];
    for (const name of names) {
      expect(typeof (Upstream as unknown as Record<string, unknown>)[name]).toBe('function');
      expect(typeof (Compat as unknown as Record<string, unknown>)[name]).toBe('function');
    }
  });

  it('type-checks against upstream both ways (tsc on api-types.ts)', () => {
    const root = resolve(__dirname, '..', '..');
    const dir = mkdtempSync(join(tmpdir(), 'nss-compat-tsc-'));
    const tsconfig = join(dir, 'tsconfig.json');
    writeFileSync(tsconfig, JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'esnext', moduleResolution: 'bundler', strict: true, noEmit: true,
        skipLibCheck: true, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: [join(root, '__test__', 'compat', 'api-types.ts')],
    }));
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (e) {
      throw new Error(`tsc failed:\n${(e as { stdout?: string }).stdout ?? e}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
