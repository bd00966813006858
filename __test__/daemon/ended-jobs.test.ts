// `getEndedJobs` (docs/daemon.md, "Removed jobs"): the daemon remembers the folder of each
// job a client removed, so a later client of the project reads its output by handle
// (what a new MCP session does with shell-job:// URIs). Real daemon, real clients.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { expectCode } from '../helpers';
import { place, seen, ShellExecutionService, stopDaemons } from './setup';

afterAll(stopDaemons, 120_000);

describe('getEndedJobs', () => {
  it("lists a removed job of the project, with its folder, to a later client; another project's client sees none", async () => {
    const p = place();
    const first = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    const ran = await first.run('echo ended-job-output; exit 3');
    seen(first.daemon?.pid);
    const killedJob = await first.start('exec sleep 60');
    // A job's folder is attached by its reader just after the start: a job removed
    // before that has no folder to remember. Removed once it has one.
    const deadline = Date.now() + 30_000;
    while (!(await first.getResult(killedJob.handle)).outputDir && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await first.getEndedJobs()).toEqual([]);
    await first.removeProcess(ran.handle);
    // Removed while it runs: the removal kills it, and it is remembered as killed.
    await first.removeProcess(killedJob.handle);
    await first.shutdown();

    const later = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    try {
      await expectCode(later.getResult(ran.handle), 'PROCESS_NOT_FOUND');
      const ended = await later.getEndedJobs();
      expect(ended.map((j) => j.handle)).toEqual([killedJob.handle, ran.handle]);
      const [killed, exited] = ended as [(typeof ended)[0], (typeof ended)[0]];
      expect(exited).toMatchObject({ handle: ran.handle, command: 'echo ended-job-output; exit 3', status: 'exited', exitCode: 3, outputDir: ran.outputDir });
      expect(readFileSync(join(exited.outputDir, 'stdout.txt'), 'utf8')).toContain('ended-job-output');
      expect(killed.status).toBe('killed');
      expect(exited.removedAt).toBeGreaterThanOrEqual(exited.startedAt);
      expect(await later.getEndedJobs({ handle: ran.handle })).toEqual([exited]);
      expect(await later.getEndedJobs({ limit: 1 })).toEqual([killed]);
      expect(await later.getEndedJobs({ handle: 987654 })).toEqual([]);
      // Bad arguments: an error with a code, not a crash of the daemon.
      for (const bad of [{ handle: -1 }, { limit: 1.5 }, { handle: 'x' as unknown as number }]) {
        await expectCode(later.getEndedJobs(bad), 'INVALID_ARGUMENT');
      }
      expect((await later.getEndedJobs()).length).toBe(2);
    } finally {
      await later.shutdown();
    }

    const elsewhere = new ShellExecutionService({ projectRoot: p.base, ioDir: p.ioDir, daemon: p.daemon });
    try {
      expect(await elsewhere.getEndedJobs()).toEqual([]);
    } finally {
      await elsewhere.shutdown();
    }
    expect(existsSync(ran.outputDir!)).toBe(true);
  }, 120_000);
});
