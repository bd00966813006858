// 64 concurrent jobs each in a pattern wait, and concurrent sendInput / waitFor / kill /
// removeProcess / writeToPty on one handle: no deadlock, no crash, and every outcome
// is one of the documented ones (tallied in the figures; see docs/reliability.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, expectCode, type Scratch, scratch } from '../helpers';
import { fmt, MAX_HELD_CGROUP_EVENTS, report, scaled, settle, snapshot } from './common';

const RACES = scaled(400, 40);

let s: Scratch;
beforeAll(async () => {
  s = scratch();
  // A PTY job first: the service's terminal opened ahead for its next PTY job
  // (SparePty) is then open in every baseline, as it stays open after.
  s.service.removeProcess((await s.service.run('true')).handle);
});
afterAll(() => s.cleanup());

/** Rejects if `p` has not settled after `ms`: a deadlock detector, not a time limit. */
function guard<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms))]);
}

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

describe('64 concurrent jobs', () => {
  it('each in its own pattern wait, answered in random order', async () => {
    const before = snapshot();
    // The answer comes a second after the input: long after every wait has begun (see
    // the skipped race test below for why that matters).
    const jobs = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        s.service.run('while read -r l; do sleep 1; echo "got $l"; done', { mode: i % 2 ? 'pipes' : 'pty', callbackDelayMs: 0 }),
      ),
    );
    // One more than maxJobs (64) is refused, not queued.
    await expectCode(s.service.run('true'), 'LIMIT_REACHED');
    const waits = jobs.map((j) => s.service.waitFor(j.handle, { pattern: `got go${j.handle}\\b`, timeoutMs: 60_000 }));
    for (const j of shuffle(jobs)) s.service.writeToPty(j.handle, `go${j.handle}\n`);
    const results = await guard(Promise.all(waits), 90_000, '64 waits');
    const matched = results.filter((r, i) => r.status === 'matched' && r.handle === jobs[i].handle).length;
    // And 64 concurrent runs resolved by their own callbackPattern.
    await Promise.all(jobs.map((j) => s.service.kill(j.handle)));
    for (const j of jobs) s.service.removeProcess(j.handle);
    const runs = await guard(
      Promise.all(
        Array.from({ length: 64 }, (_, i) =>
          s.service.run(`sleep 0.${i % 10}; echo "ready-${i}"; sleep 1000`, {
            mode: i % 2 ? 'pty' : 'pipes',
            callbackPattern: `ready-${i}\\b`,
            timeoutMs: 60_000,
          }),
        ),
      ),
      90_000,
      '64 runs',
    );
    const runMatched = runs.filter((r, i) => r.matched === `ready-${i}` && r.status === 'running').length;
    await Promise.all(runs.map((r) => s.service.kill(r.handle)));
    for (const r of runs) s.service.removeProcess(r.handle);
    const after = await settle(before);
    report('64 concurrent waits', { waitsMatched: matched, runsMatched: runMatched, before: fmt(before), after: fmt(after) });
    expect(matched).toBe(64);
    expect(runMatched).toBe(64);
    expect(after.zombies).toBe(0);
    expect(after.ptmx).toBe(before.ptmx);
  });
});

describe('a pending run', () => {
  it('resolves when its job is killed, removed or the service shut down meanwhile', async () => {
    const outcomes: string[] = [];
    for (const mode of ['pty', 'pipes'] as const) {
      for (const how of ['kill', 'removeProcess', 'shutdown'] as const) {
        const own = how === 'shutdown' ? scratch({ sessionId: 'pending' }) : s;
        const pending = own.service.run('sleep 1000; echo never', { mode, callbackPattern: 'never', timeoutMs: 600_000 });
        await eventually(() => own.service.getActiveProcesses().length > 0);
        const job = own.service.getActiveProcesses().at(-1)!;
        if (how === 'kill') await own.service.kill(job.handle);
        else if (how === 'removeProcess') own.service.removeProcess(job.handle);
        else await own.service.shutdown();
        const r = await guard(pending, 30_000, `run pending during ${how}`);
        outcomes.push(`${mode} ${how}: ${r.status}`);
        expect(r.status).toBe('killed');
        expect(await eventually(() => !alive(job.pid))).toBe(true);
        if (how === 'shutdown') await own.cleanup();
        else if (how === 'kill') own.service.removeProcess(job.handle);
      }
    }
    report('pending run ended', { outcomes });
  });
});

describe('waitFor then writeToPty', () => {
  // `waitFor` takes its cursor on the JS thread, when it is called: a `writeToPty`
  // made right after it can never be answered "before" the wait began.
  it('a wait begun before the input always sees the answer', async () => {
    const jobs = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        s.service.run('while read -r l; do echo "got $l"; done', { mode: i % 2 ? 'pipes' : 'pty', callbackDelayMs: 0 }),
      ),
    );
    let missed = 0;
    for (let round = 0; round < 20; round += 1) {
      const waits = jobs.map((j) => s.service.waitFor(j.handle, { pattern: `got r${round}h${j.handle}\\b`, timeoutMs: 5000 }));
      for (const j of jobs) s.service.writeToPty(j.handle, `r${round}h${j.handle}\n`);
      missed += (await Promise.all(waits)).filter((r) => r.status !== 'matched').length;
    }
    await Promise.all(jobs.map((j) => s.service.kill(j.handle)));
    for (const j of jobs) s.service.removeProcess(j.handle);
    expect(missed).toBe(0);
  });
});

describe(`${RACES} races on one handle`, () => {
  it('sendInput, waitFor, kill, removeProcess, writeToPty and reads at once: documented outcomes only', async () => {
    const before = snapshot();
    const tally = new Map<string, number>();
    const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);
    const unexpected: string[] = [];
    const pids: number[] = [];
    const documented: Record<string, RegExp> = {
      sendInput: /^(exited|matched|timed_out|PROCESS_NOT_FOUND)$/,
      waitFor: /^(exited|timed_out|PROCESS_NOT_FOUND)$/,
      kill: /^(killed|exited|PROCESS_NOT_FOUND)$/,
      removeProcess: /^(ok|PROCESS_NOT_FOUND)$/,
      writeToPty: /^(ok|PROCESS_NOT_FOUND)$/,
      getProcessOutput: /^(ok|PROCESS_NOT_FOUND)$/,
    };
    for (let i = 0; i < RACES; i += 1) {
      const mode = i % 2 ? 'pipes' : 'pty';
      const r = await s.service.run('cat', { mode, callbackDelayMs: 0 });
      pids.push(r.pid!);
      const h = r.handle;
      const attempt = async (name: string, op: () => unknown) => {
        await new Promise((res) => setTimeout(res, Math.random() * 5));
        try {
          const v = (await op()) as { status?: string } | undefined;
          return `${name}:${v && typeof v === 'object' && 'status' in v ? v.status : 'ok'}`;
        } catch (e) {
          return `${name}:${(e as { code?: string }).code ?? String(e)}`;
        }
      };
      const ops = shuffle([
        () => attempt('sendInput', () => s.service.sendInput(h, 'hello', { pattern: 'never-printed', timeoutMs: 3000 })),
        () => attempt('waitFor', () => s.service.waitFor(h, { pattern: 'never-printed', timeoutMs: 3000 })),
        () => attempt('kill', () => s.service.kill(h, { graceMs: 100 })),
        () => attempt('removeProcess', () => s.service.removeProcess(h)),
        () => attempt('writeToPty', () => s.service.writeToPty(h, 'x\n')),
        () => attempt('getProcessOutput', () => s.service.getProcessOutput(h)),
      ]);
      const outcomes = await guard(Promise.all(ops.map((op) => op())), 30_000, `race ${i}`);
      for (const o of outcomes) {
        count(o);
        const [name, result] = o.split(':');
        if (!documented[name].test(result)) unexpected.push(`race ${i} (${mode}): ${o}`);
      }
      // Whatever the order, the handle ends up gone (removeProcess ran) or finished.
      const listed = s.service.getActiveProcesses().find((p) => p.handle === h);
      if (listed) {
        if (listed.status === 'running') unexpected.push(`race ${i}: still running after kill`);
        s.service.removeProcess(h);
      }
    }
    const dead = await eventually(() => pids.every((p) => !alive(p)), 10_000);
    const after = await settle(before);
    report('races on one handle', {
      races: RACES,
      outcomes: Object.fromEntries([...tally.entries()].sort()),
      unexpected: unexpected.length,
      before: fmt(before),
      after: fmt(after),
    });
    expect(unexpected.slice(0, 5)).toEqual([]);
    expect(dead).toBe(true);
    expect(after.zombies).toBe(0);
    expect(after.fds).toBeLessThanOrEqual(before.fds);
    expect(after.cgroupEvents).toBeLessThanOrEqual(MAX_HELD_CGROUP_EVENTS);
    expect(after.ptmx).toBe(before.ptmx);
  });
});
