// Job exits beside Node's own children: the addon learns its jobs' exits (one io_uring
// for the process, or a pidfd per job: src/platform/linux/exit_ring.rs) without ever
// reaping a child that is not its own, so libuv still gets every child_process exit.
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch({ persistOutput: false, maxJobs: 200 });
});
afterAll(() => s.cleanup());

/** A Node child that exits with `code` after `ms`, and what libuv told of it. */
function nodeChild(code: number, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `sleep ${ms / 1000}; exit ${code}`], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (exitCode, signal) => resolve({ code: exitCode, signal }));
  });
}

describe.skipIf(process.platform === 'win32')('exits beside Node children', () => {
  it("Node's child_process exits are still Node's while jobs start and end around them", async () => {
    // Idle jobs the exit watch holds for the whole test.
    const idle = await Promise.all(
      Array.from({ length: 10 }, (_, i) => s.service.start('exec sleep 600', { mode: i % 2 ? 'pipes' : 'pty' })),
    );
    for (let round = 0; round < 5; round++) {
      // Node's children and jobs exiting in the same moments, with distinct codes.
      const children = Array.from({ length: 10 }, (_, i) => nodeChild(20 + i, i * 20));
      const jobs = Array.from({ length: 10 }, (_, i) =>
        s.service.run(`sleep ${(i * 20) / 1000}; exit ${40 + i}`, { mode: i % 2 ? 'pipes' : 'pty' }),
      );
      // A synchronous child too: spawnSync waits for its own pid.
      expect(execFileSync('/bin/sh', ['-c', 'echo sync'], { encoding: 'utf8' })).toBe('sync\n');
      const seen = await Promise.all(children);
      expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => ({ code: 20 + i, signal: null })));
      const results = await Promise.all(jobs);
      expect(results.map((r) => r.exitCode)).toEqual(Array.from({ length: 10 }, (_, i) => 40 + i));
    }
    const killed = await Promise.all(idle.map((j) => s.service.kill(j.handle)));
    expect(killed.every((k) => k.status !== 'running')).toBe(true);
  });
});
