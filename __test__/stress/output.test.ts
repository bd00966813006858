// 1,000 × "print 100 KB and exit", per mode: every byte delivered, the exit reported
// only after the last byte.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Scratch, scratch } from '../helpers';
import { fmt, MAX_HELD_CGROUP_EVENTS, pool, report, scaled, settle, snapshot } from './common';

const RUNS = scaled(1000, 20);
/** 10,240 lines of 10 bytes: exactly 102,400 bytes, each line numbered. */
const COMMAND = "seq -f '%09g' 1 10240";
const EXPECTED = Array.from({ length: 10240 }, (_, i) => `${String(i + 1).padStart(9, '0')}\n`).join('');

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

describe(`${RUNS} × 100 KB then exit`, () => {
  for (const mode of ['pipes', 'pty'] as const) {
    it(`delivers every byte before the exit (${mode})`, async () => {
      const warm = await s.service.run('true', { mode }); // warm-up: watchdog, runtime threads
      s.service.removeProcess(warm.handle);
      await new Promise((r) => setTimeout(r, 500)); // the removed job's descriptors close
      const before = snapshot();
      const started = Date.now();
      const failures: string[] = [];
      await pool(Array.from({ length: RUNS }), 8, async () => {
        const r = await s.service.run(COMMAND, { mode, maxOutputSize: 200_000 });
        // PTY: the line discipline turns each \n into \r\n on the wire.
        const wire = mode === 'pty' ? 112_640 : 102_400;
        const problems = [];
        if (r.status !== 'exited' || r.exitCode !== 0) problems.push(`status ${r.status} ${r.exitCode}`);
        if (r.totalBytes !== wire) problems.push(`totalBytes ${r.totalBytes}`);
        if (r.truncated) problems.push('truncated');
        if (r.stdout !== EXPECTED) problems.push(`stdout ${r.stdout.length} bytes, ends ${JSON.stringify(r.stdout.slice(-12))}`);
        // The persisted copy is complete too, and was complete when the exit was reported.
        const file = readFileSync(join(r.outputDir!, 'stdout.txt'), 'utf8');
        if (file !== EXPECTED) problems.push(`file ${file.length} bytes`);
        if (problems.length) failures.push(`handle ${r.handle}: ${problems.join(', ')}`);
        s.service.removeProcess(r.handle);
      });
      const seconds = (Date.now() - started) / 1000;
      const after = await settle(before);
      report(`100KB-exit ${mode}`, {
        runs: RUNS,
        failures: failures.length,
        seconds,
        mbPerSecond: Math.round((RUNS * 0.1024) / seconds),
        before: fmt(before),
        after: fmt(after),
      });
      expect(failures.slice(0, 5)).toEqual([]);
      expect(after.fds).toBeLessThanOrEqual(before.fds);
      expect(after.cgroupEvents).toBeLessThanOrEqual(MAX_HELD_CGROUP_EVENTS);
      expect(after.ptmx).toBeLessThanOrEqual(before.ptmx);
      expect(after.zombies).toBe(0);
    });
  }
});
