// Floods (`yes`, `base64 /dev/urandom`) for 10 s per mode: memory stays bounded, the
// flooding job is killable at once, and `sendInput` on another job still answers.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, type Scratch, scratch } from '../helpers';
import { fmt, MAX_HELD_CGROUP_EVENTS, report, scaled, settle, snapshot } from './common';

const FLOOD_MS = scaled(10_000, 2_000);

let s: Scratch;
beforeAll(async () => {
  s = scratch();
  // A PTY job first: the service's terminal opened ahead for its next PTY job
  // (SparePty) is then open in every baseline, as it stays open after.
  s.service.removeProcess((await s.service.run('true')).handle);
});
afterAll(() => s.cleanup());

const floods = [
  ['yes', 'yes'],
  ['base64', 'base64 /dev/urandom'],
] as const;

describe(`floods for ${FLOOD_MS / 1000} s`, () => {
  for (const [name, command] of floods) {
    for (const mode of ['pty', 'pipes'] as const) {
      it(`${name} (${mode}): bounded memory, instant kill, other jobs answer`, async () => {
        // The job that must keep answering while the flood runs.
        const echo = await s.service.run('while read -r l; do echo "got $l"; done', {
          mode: 'pipes',
          callbackDelayMs: 0,
        });
        await s.service.sendInput(echo.handle, 'warm', { pattern: 'got warm' });
        const before = snapshot();
        const flood = await s.service.run(command, { mode, callbackDelayMs: 0 });
        const started = Date.now();
        let answers = 0;
        let misses = 0;
        let peakRss = before.rssMiB;
        let maxAnswerMs = 0;
        while (Date.now() - started < FLOOD_MS) {
          const t = Date.now();
          const a = await s.service.sendInput(echo.handle, `ping${answers}`, { pattern: `got ping${answers}\\n`, timeoutMs: 10_000 });
          maxAnswerMs = Math.max(maxAnswerMs, Date.now() - t);
          if (a.status === 'matched') answers += 1;
          else misses += 1;
          peakRss = Math.max(peakRss, Math.round(process.memoryUsage().rss / 2 ** 20));
          await new Promise((r) => setTimeout(r, 50));
        }
        const info = s.service.getActiveProcesses().find((p) => p.handle === flood.handle)!;
        const killStart = Date.now();
        const k = await s.service.kill(flood.handle, { graceMs: 1000 });
        const killMs = Date.now() - killStart;
        const text = s.service.getProcessOutput(flood.handle);
        const fileBytes = statSync(join(flood.outputDir!, 'stdout.txt')).size;
        s.service.removeProcess(flood.handle);
        await s.service.kill(echo.handle);
        s.service.removeProcess(echo.handle);
        const after = await settle(before);
        report(`flood ${name} ${mode}`, {
          seconds: FLOOD_MS / 1000,
          floodMiB: Math.round(info.outputBytes / 2 ** 20),
          fileMiB: Math.round(fileBytes / 2 ** 20),
          textViewKiB: Math.round(text.length / 1024),
          answers,
          misses,
          maxAnswerMs,
          killMs,
          killStatus: k.status,
          escalated: k.escalated,
          peakRssMiB: peakRss,
          before: fmt(before),
          after: fmt(after),
        });
        expect(k.status).toBe('killed');
        expect(await eventually(() => !alive(flood.pid!), 5000)).toBe(true);
        expect(misses).toBe(0);
        expect(answers).toBeGreaterThan(0);
        expect(info.outputBytes).toBeGreaterThan(1_000_000);
        // Memory: the text view is head + tail (about 600 KiB), whatever flowed.
        expect(text.length).toBeLessThan(2 * 1024 * 1024);
        // The disk copy stops at the 64 MiB per-job cap (plus its marker).
        expect(fileBytes).toBeLessThanOrEqual(64 * 1024 * 1024 + 4096);
        // The process as a whole: far below what the flood produced.
        expect(peakRss - before.rssMiB).toBeLessThan(256);
        expect(after.fds).toBeLessThanOrEqual(before.fds);
        expect(after.cgroupEvents).toBeLessThanOrEqual(MAX_HELD_CGROUP_EVENTS);
        expect(after.zombies).toBe(0);
      });
    }
  }
});
