// A flood must not stall the host's event loop: while `cat` of a 64 MiB file
// runs through the Gemini drop-in (PTY and pipes, with an `onEvent` consumer), through
// `onOutput` + `readOutput`, and through the tools' live output and the MCP server's
// progress messages, a timer measures the longest gap between two of its turns. The
// bound is generous (a loaded machine stretches every turn); the tight figures are the
// bench's (BENCHMARKS.md). Before the drop-in read a flood a slice per turn, its last
// turn read and split the whole text at once: 300+ ms of CPU for pipes and PTY alike.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ShellExecutionService as Compat, type ShellOutputEvent } from '../compat/gemini-compat';
import { streamOutput } from '../tools/live-output';
import { progressUpdates, type ProgressNotification } from '../tools/mcp/progress';
import { config, project, removeProject } from './compat/harness';
import { type Scratch, scratch } from './helpers';

/**
 * The most CPU the JS thread may spend between two ticks of the timer (our code, or a
 * garbage collection our garbage caused, held it all that time). CPU, not wall time: a
 * loaded machine deschedules an idle process for 80 ms and more (seen here). Generous:
 * the new code's worst was 40 ms (130 once, a collection after the PTY flood), the old
 * code's 290–640 ms on the same loaded machine.
 */
const MAX_TURN_CPU_MS = 200;
/** The longest wall-clock gap between two ticks, whatever held the thread (a lock too). */
const MAX_GAP_MS = 1000;
const MiB = 1024 * 1024;
const LINE_BYTES = 64;
const LINES = (64 * MiB) / LINE_BYTES;

let s: Scratch;
let file: string;
beforeAll(() => {
  s = scratch({ maxJobs: 16 });
  file = join(s.root, 'flood.txt');
  // 64-byte numbered lines, so that the last one proves nothing was lost.
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) lines.push(`${String(i).padStart(10, '0')} ${'x'.repeat(LINE_BYTES - 12)}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
});
afterAll(async () => {
  await Compat.shutdown();
  removeProject();
  await s.cleanup();
});

const LAST_LINE = `${String(LINES - 1).padStart(10, '0')} ${'x'.repeat(LINE_BYTES - 12)}`;

/** The JS thread's CPU time so far, ms (Linux: its schedstat; elsewhere wall time stands in). */
const SCHEDSTAT = '/proc/thread-self/schedstat';
function threadCpuMs(): number {
  if (!existsSync(SCHEDSTAT)) return performance.now();
  return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6;
}

/**
 * Measures the loop until `stop`: the longest time between two ticks of a 5 ms timer,
 * and the most CPU the JS thread spent between two ticks.
 */
function watchLoop(): { stop(): { gapMs: number; turnCpuMs: number } } {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let gapMs = 0;
  let turnCpuMs = 0;

  const tick = () => {
    const now = performance.now();
    const cpu = threadCpuMs();
    gapMs = Math.max(gapMs, now - last);
    turnCpuMs = Math.max(turnCpuMs, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
  };
  const timer = setInterval(tick, 5);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return { gapMs, turnCpuMs };
    },
  };
}

function expectNoStall(loop: { gapMs: number; turnCpuMs: number }): void {
  expect(loop.turnCpuMs).toBeLessThan(MAX_TURN_CPU_MS);
  expect(loop.gapMs).toBeLessThan(MAX_GAP_MS);
}

/** One more turn of timers, so the turn that resolved a result is measured too. */
const nextTimer = () => new Promise((r) => setTimeout(r, 10));

describe('a 64 MiB flood leaves the event loop free', () => {
  it.each([false, true])('through the drop-in (pty: %s), with an onEvent consumer', async (pty) => {
    let streamedChars = 0;
    let events = 0;
    const onEvent = (e: ShellOutputEvent) => {
      events++;
      if (e.type === 'data' && typeof e.chunk === 'string') streamedChars += e.chunk.length;
    };
    const watch = watchLoop();
    const handle = await Compat.execute(`cat ${file}`, project(), onEvent, new AbortController().signal, pty, config());
    const result = await handle.result;
    await nextTimer();
    const loop = watch.stop();
    expect(result.exitCode).toBe(0);
    expect(events).toBeGreaterThan(1);
    if (pty) {
      expect(result.output.endsWith(LAST_LINE)).toBe(true);
    } else {
      // Nothing lost: the events carried the whole file; the result keeps its last 16 MB.
      expect(streamedChars).toBe(LINES * LINE_BYTES);
      expect(result.output).toContain(LAST_LINE);
    }
    expectNoStall(loop);
  });

  it.each(['pipes', 'pty'] as const)('through onOutput + readOutput (%s)', async (mode) => {
    const watch = watchLoop();
    const { handle } = s.service.start(`cat ${file}`, { mode });
    let since = 0;
    let tail = '';
    // One bounded read per event; after the exit, one per turn until the end.
    const readOnce = () => {
      const chunk = s.service.readOutput(handle, { since });
      const moved = chunk.next > since;
      since = chunk.next;
      tail = (tail + chunk.text).slice(-256);
      return moved;
    };
    await new Promise<void>((resolve) => {
      s.service.onOutput(handle, (e) => {
        readOnce();
        if (e.exited) {
          const drain = () => (readOnce() ? setImmediate(drain) : resolve());
          drain();
        }
      });
    });
    await nextTimer();
    const loop = watch.stop();
    expect(tail.replace(/\r/g, '').trimEnd().endsWith(LAST_LINE)).toBe(true);
    expectNoStall(loop);
  });

  it("through the tools' live output and the MCP server's progress messages", async () => {
    const sent: ProgressNotification[] = [];
    const progress = progressUpdates('flood', async (n) => {
      sent.push(n);
    });
    const watch = watchLoop();
    const { handle } = s.service.start(`cat ${file}`, { mode: 'pty' });
    const live = await streamOutput(s.service, handle, progress.update, { intervalMs: 20 });
    await new Promise<void>((resolve) => {
      s.service.onOutput(handle, (e) => e.exited && resolve());
    });
    await live.finish();
    await progress.settled();
    await nextTimer();
    const loop = watch.stop();
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.at(-1)!.params.message.endsWith(LAST_LINE)).toBe(true);
    expectNoStall(loop);
  });

  // The threads that process a flood run at a raised nice value, so the JS thread gets a
  // core first (src/job/flood_threads.rs); that must lower neither the host nor a job
  // started afterwards (a process inherits its starter's nice value).
  it.runIf(process.platform === 'linux')('lowers only the flood threads, never the host or a job', async () => {
    const { handle } = s.service.start(`cat ${file}`, { mode: 'pty' });
    await new Promise<void>((resolve) => {
      s.service.onOutput(handle, (e) => e.exited && resolve());
    });
    const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    const host = niceOf(readFileSync('/proc/self/stat', 'utf8'));
    const task = '/proc/self/task';
    const flood = readdirSync(task)
      .filter((t) => readFileSync(join(task, t, 'comm'), 'utf8').trim() === 'nss-flood')
      .map((t) => niceOf(readFileSync(join(task, t, 'stat'), 'utf8')));
    expect(flood.length).toBeGreaterThan(0);
    for (const nice of flood) expect(nice).toBeGreaterThan(host);
    expect(niceOf(readFileSync(`${task}/${process.pid}/stat`, 'utf8'))).toBe(host);
    const job = await s.service.run('cat /proc/self/stat', { mode: 'pipes' });
    expect(niceOf(job.output)).toBe(host);
  });
});
