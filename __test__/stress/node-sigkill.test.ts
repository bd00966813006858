// The Node process killed with SIGKILL while PTY and pipe jobs run: no exit hook runs,
// a PTY hang-up does not reach `setsid` children or pipe jobs, so the watchdog (a
// process holding a pipe whose only writer is Node; see src/watchdog.rs) must end
// them. Figures: how long the last of them lived after the SIGKILL.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { alive } from '../helpers';
import { report, scaled } from './common';

const ROUNDS = scaled(20, 3);
const JOBS = 4;
const owner = join(__dirname, 'fixtures', 'sigkill-owner.cjs');
const io = mkdtempSync(join(tmpdir(), 'nss-sigkill-'));
afterAll(() => rmSync(io, { recursive: true, force: true }));

async function startOwner(): Promise<{ child: ReturnType<typeof spawn>; pids: number[]; watchdog: number | null }> {
  const child = spawn(process.execPath, [owner, io, String(JOBS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.once('exit', () => reject(new Error(`owner died early: ${out}`)));
  });
  const { pids, watchdog } = JSON.parse(line) as { pids: number[]; watchdog: number | null };
  return { child, pids, watchdog };
}

describe(`Node killed with SIGKILL, ${ROUNDS} rounds of ${JOBS} jobs`, () => {
  it('no job process outlives it (the watchdog ends them, then itself)', async () => {
    const lifetimes: number[] = [];
    let processes = 0;
    const survivors: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const { child, pids, watchdog } = await startOwner();
      expect(watchdog).not.toBeNull();
      expect(pids.length).toBeGreaterThanOrEqual(JOBS * 7 + 3);
      expect(pids.every(alive)).toBe(true);
      processes += pids.length;
      const killedAt = Date.now();
      child.kill('SIGKILL');
      // Polled every 10 ms for at most 5 s; the figure is the time the last one lived.
      let lastSeen = killedAt;
      while (Date.now() - killedAt < 5000) {
        if (pids.some(alive) || alive(watchdog!)) lastSeen = Date.now();
        else break;
        await new Promise((r) => setTimeout(r, 10));
      }
      lifetimes.push(lastSeen - killedAt);
      const left = pids.filter(alive);
      survivors.push(...left);
      for (const p of left) process.kill(p, 'SIGKILL');
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
