// 2,000 spawn/kill cycles (half PTY, half pipes): fds, threads, /dev/ptmx handles and
// zombie children back to where they started; no process left behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, type Scratch, scratch } from '../helpers';
import { fmt, MAX_HELD_CGROUP_EVENTS, pool, report, scaled, settle, snapshot, until } from './common';

const CYCLES = scaled(2000, 100);

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

describe(`${CYCLES} spawn/kill cycles`, () => {
  it('returns fds, threads, PTYs and zombies to where they started', async () => {
    // Warm-up: the watchdog and the runtime's threads exist before the baseline.
    for (const mode of ['pty', 'pipes'] as const) {
      const w = await s.service.run('sleep 1000', { mode, callbackDelayMs: 0 });
      await s.service.kill(w.handle);
      s.service.removeProcess(w.handle);
    }
    // The service keeps one terminal opened ahead for its next PTY job
    // (src/platform/unix/pty.rs, SparePty): at most that one is open between jobs.
    await until(() => snapshot().ptmx <= 1, 5000);
    const before = snapshot();
    const pids: number[] = [];
    const statuses = new Map<string, number>();
    const started = Date.now();
    let peak = before;
    await pool(Array.from({ length: CYCLES }), 8, async (_, i) => {
      const mode = i % 2 === 0 ? 'pty' : 'pipes';
      // Every third job has a child of its own, so the kill is of a tree.
      const command = i % 3 === 0 ? 'sleep 1000 & sleep 1000' : 'sleep 1000';
      const r = await s.service.run(command, { mode, callbackDelayMs: 0 });
      pids.push(r.pid!);
      const k = await s.service.kill(r.handle, { graceMs: 1000 });
      statuses.set(k.status, (statuses.get(k.status) ?? 0) + 1);
      s.service.removeProcess(r.handle);
      if (i % 100 === 0) {
        const now = snapshot();
        if (now.fds > peak.fds) peak = now;
      }
    });
    const seconds = (Date.now() - started) / 1000;
    const after = await settle(before, 30_000);
    const survivors = pids.filter(alive);
    report('spawn-kill', {
      cycles: CYCLES,
      seconds,
      statuses: Object.fromEntries(statuses),
      survivors: survivors.length,
      before: fmt(before),
      peak: fmt(peak),
      after: fmt(after),
    });
    expect(statuses.get('killed')).toBe(CYCLES);
    expect(survivors).toEqual([]);
    expect(after.fds).toBe(before.fds);
    expect(after.cgroupEvents).toBeLessThanOrEqual(MAX_HELD_CGROUP_EVENTS);
    expect(after.ptmx).toBe(before.ptmx);
    expect(after.zombies).toBe(0);
    expect(after.descendants).toBe(before.descendants);
    expect(after.threads).toBeLessThanOrEqual(before.threads);
  });

  // A caller that never removes finished jobs must not use up the machine's PTYs
  // (kernel.pty.max, 4096 by default, machine-wide): a finished job keeps its output,
  // but lets go of its terminal, stdin and files once its output has ended.
  it('a finished PTY job that is not removed holds no PTY', async () => {
    const before = snapshot();
    const handles: number[] = [];
    for (let i = 0; i < 20; i += 1) handles.push((await s.service.run('echo done')).handle);
    const r = await s.service.run('sleep 1000', { callbackDelayMs: 0 });
    await s.service.kill(r.handle);
    handles.push(r.handle);
    let now = snapshot();
    await until(() => (now = snapshot()).ptmx <= before.ptmx, 5000);
    report('finished-pty-not-removed', { jobs: handles.length, before: fmt(before), after: fmt(now) });
    for (const h of handles) s.service.removeProcess(h);
    expect(now.ptmx).toBe(before.ptmx);
  });
});
