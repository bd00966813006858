// The daemon's threads run in short scheduler turns (src/daemon/latency.rs): woken by a
// request or a job's output on busy cores, they run at once instead of waiting for
// the running thread's turn to end. Its jobs never inherit that: they start with the
// kernel's default slice, scheduled as they would be without the daemon.
import { readdirSync, readFileSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { eventually } from '../helpers';
import { stopDaemons, threadsNamed, withDaemonService } from './setup';

afterAll(stopDaemons);

/** A thread's slice in ns, from its /proc/<pid>/task/<tid>/sched. */
function slice(pid: number, tid: number = pid): number {
  const m = /^se\.slice\s*:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'));
  if (!m) throw new Error(`no se.slice for ${pid}/${tid}`);
  return Number(m[1]);
}

describe('the daemon in short turns', () => {
  it('asks 100 µs turns for its connection and jobs threads, and its jobs start with the default', async () => {
    await withDaemonService(async (svc, pid) => {
      // The main thread reads the requests; the `jobs` threads read the jobs' output.
      expect(slice(pid)).toBe(100_000);
      const jobs = threadsNamed(pid, 'jobs');
      expect(jobs.length).toBeGreaterThan(0);
      for (const tid of jobs) expect(slice(pid, tid)).toBe(100_000);
      // A job (started by the connection's thread) and a thread it starts: the default.
      const ownSlice = slice(process.pid);
      const started = await svc.start('python3 -c "import threading, time; threading.Thread(target=time.sleep, args=(30,)).start(); time.sleep(30)"');
      let threads: number[] = [];
      for (let i = 0; i < 600 && threads.length < 2; i++) {
        threads = readdirSync(`/proc/${started.pid}/task`).map(Number);
        if (threads.length < 2) await new Promise((r) => setTimeout(r, 50));
      }
      expect(threads.length).toBe(2);
      for (const tid of threads) expect(slice(started.pid, tid)).toBe(ownSlice);
      // The launch ran in the default turn (latency.rs `long_turn`); the connection's
      // thread is back in short turns once it has answered `start`, and once it is done
      // with `run`: `run`'s reply is sent by the job's reader at the exit, which may come
      // before the connection's thread has left the launch (`true` ends at once), so
      // that one is waited for, not read at the reply.
      expect(slice(pid)).toBe(100_000);
      await svc.run('true');
      expect(await eventually(() => slice(pid) === 100_000), 'the connection thread never left its long turn').toBe(true);
      expect(ownSlice).not.toBe(100_000);
      await svc.kill(started.handle, { graceMs: 100 });
    });
  });
});
