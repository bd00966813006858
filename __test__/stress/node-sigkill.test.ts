// The Node process killed with SIGKILL while PTY and pipe jobs run: no exit hook runs,
// a PTY hang-up does not reach `setsid` children or pipe jobs, so the watchdog (a
// process holding a pipe whose only writer is Node; see src/watchdog.rs) must end
// them. Figures: how long the last of them lived after the SIGKILL. The same for jobs
// whose environment is exactly the caller's (the Gemini drop-in behind a sanitising
// sandbox manager, native `clearEnv: true`): the watchdog finds them by the markers
// the service adds even then (src/job/spawn/env.rs). The drop-in runs from dist/ (build it
// first: `npm run build:compat`).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { alive } from '../helpers';
import { report, scaled } from './common';

const ROUNDS = scaled(20, 3);
const JOBS = 4;
const DROP_IN_ROUNDS = scaled(5, 2);
const owner = join(__dirname, 'fixtures', 'sigkill-owner.cjs');
const escapeOwner = join(__dirname, 'fixtures', 'escape-owner.cjs');
const dropInOwner = join(__dirname, 'fixtures', 'sigkill-dropin-owner.cjs');
const io = mkdtempSync(join(tmpdir(), 'nss-sigkill-'));
afterAll(() => rmSync(io, { recursive: true, force: true }));

async function startOwner<T>(script = owner): Promise<{ child: ReturnType<typeof spawn> } & T> {
  const child = spawn(process.execPath, [script, io, String(JOBS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.once('exit', () => reject(new Error(`owner died early: ${out}`)));
  });
  return { child, ...(JSON.parse(line) as T) };
}

/** SIGKILLs the owner; the pids still alive 5 s later (killed here), and how long the last one lived. */
async function killOwner(child: ReturnType<typeof spawn>, pids: number[]): Promise<{ left: number[]; lifetime: number }> {
  const killedAt = Date.now();
  child.kill('SIGKILL');
  // Polled every 10 ms for at most 5 s; the figure is the time the last one lived.
  let lastSeen = killedAt;
  while (Date.now() - killedAt < 5000) {
    if (pids.some(alive)) lastSeen = Date.now();
    else break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const left = pids.filter(alive);
  for (const p of left) process.kill(p, 'SIGKILL');
  return { left, lifetime: lastSeen - killedAt };
}

describe(`Node killed with SIGKILL, ${ROUNDS} rounds of ${JOBS} jobs`, () => {
  it('no job process outlives it (the watchdog ends them, then itself)', async () => {
    const lifetimes: number[] = [];
    let processes = 0;
    const survivors: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const { child, pids, watchdog } = await startOwner<{ pids: number[]; watchdog: number | null }>();
      expect(watchdog).not.toBeNull();
      expect(pids.length).toBeGreaterThanOrEqual(JOBS * 7 + 3);
      expect(pids.every(alive)).toBe(true);
      processes += pids.length;
      const { left, lifetime } = await killOwner(child, [...pids, watchdog!]);
      lifetimes.push(lifetime);
      survivors.push(...left.filter((p) => p !== watchdog));
      expect(alive(watchdog!)).toBe(false);
    }
    const sorted = [...lifetimes].sort((a, b) => a - b);
    report('node-sigkill', {
      rounds: ROUNDS,
      processes,
      survivors: survivors.length,
      lastDeathMs: { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] },
      withinOneSecond: lifetimes.filter((t) => t <= 1000).length,
    });
    expect(survivors).toEqual([]);
  });
});

describe(`Node killed with SIGKILL, ${DROP_IN_ROUNDS} rounds of exact-environment jobs`, () => {
  it('no process of a drop-in job (PTY, pipes) or a clearEnv job (PTY, pipes) outlives it', async () => {
    const lifetimes: number[] = [];
    const survivors: number[] = [];
    let processes = 0;
    for (let round = 0; round < DROP_IN_ROUNDS; round += 1) {
      const { child, pids, watchdogs } = await startOwner<{ pids: number[]; watchdogs: number[] }>(dropInOwner);
      const started = pids.length;
      const watched = watchdogs.length;
      const { left, lifetime } = await killOwner(child, [...pids, ...watchdogs]);
      // `sleep 1111 & sleep 2222` in four jobs: eight sleeps; and the watchdog.
      expect(started).toBe(8);
      expect(watched).toBeGreaterThanOrEqual(1);
      processes += started;
      lifetimes.push(lifetime);
      survivors.push(...left);
    }
    const sorted = [...lifetimes].sort((a, b) => a - b);
    report('node-sigkill-exact-env', {
      rounds: DROP_IN_ROUNDS,
      processes,
      survivors: survivors.length,
      lastDeathMs: { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] },
    });
    expect(survivors).toEqual([]);
  });
});

// Issue 17: Node dies (by a signal it does not handle, or SIGKILL) owning one job per
// escape of fixtures/escapes.cjs in each mode, every escapee orphaned, in a session of
// its own and with an empty environment: no marker, group or parent link leads to it,
// only the jobs' cgroups (the watchdog kills the parent cgroup; src/platform/linux/watchdog.rs).
describe('Node dies owning jobs whose processes escaped', () => {
  for (const signal of ['SIGKILL', 'SIGTERM', 'SIGSEGV'] as const) {
    it(`no escapee outlives Node killed by ${signal}`, async () => {
      type Escapee = { name: string; mode: string; pid: number | null; escaped: boolean };
      const { child, escapees, watchdog } = await startOwner<{ escapees: Escapee[]; watchdog: number | null }>(escapeOwner);
      expect(watchdog).not.toBeNull();
      const pids = escapees.map((e) => e.pid).filter((p): p is number => p !== null);
      const killedAt = Date.now();
      child.kill(signal);
      let lastSeen = killedAt;
      while (Date.now() - killedAt < 5000 && [...pids, watchdog!].some(alive)) {
        lastSeen = Date.now();
        await new Promise((r) => setTimeout(r, 10));
      }
      const survivors: Record<string, number> = {};
      for (const e of escapees) survivors[`${e.name} | ${e.mode}`] = e.pid !== null && alive(e.pid) ? 1 : 0;
      const left = pids.filter(alive);
      for (const p of left) process.kill(p, 'SIGKILL');
      report(`node-${signal.toLowerCase()}-escapes`, { processes: pids.length, survivors, lastDeathMs: lastSeen - killedAt });
      expect(escapees.filter((e) => !e.escaped).map((e) => `${e.name} (${e.mode})`), 'did not escape').toEqual([]);
      expect(left).toEqual([]);
      expect(alive(watchdog!)).toBe(false);
    });
  }
});
