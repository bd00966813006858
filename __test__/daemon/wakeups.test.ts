// What wakes the daemon's threads: only work. A job's terminal and a client's socket are
// watched for reading alone (src/platform/unix/write_room.rs, src/daemon/halves.rs):
// before, the reactor was told each time a terminal gained room for input (each byte a
// program read: Python's line editor reads a line byte by byte) and each time a client
// read a reply off its socket, and woke a thread for a write nobody waited for — on busy
// cores, where the daemon's threads preempt (src/daemon/latency.rs), two context switches
// each on the round trip's way (docs/daemon.md, "Round trips").
//
// Counted, not timed: a thread's voluntary context switches (/proc/<pid>/task/<tid>/status)
// are the times it slept and was woken, whatever the machine's load.
import { readdirSync, readFileSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { place, seen, ShellExecutionService, stopDaemons } from './setup';

afterAll(stopDaemons);

/** Times a thread slept and was woken so far. */
function wakeups(pid: number, tid: number): number {
  const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
  if (!m) throw new Error(`no voluntary_ctxt_switches for ${pid}/${tid}`);
  return Number(m[1]);
}

/** The daemon's `jobs` threads' wake-ups, summed. */
function jobsWakeups(pid: number): number {
  return readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .filter((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'jobs')
    .reduce((sum, tid) => sum + wakeups(pid, tid), 0);
}

describe('the daemon wakes for work only', () => {
  it('a program reading its terminal byte by byte does not wake the job threads per byte', async () => {
    const p = place();
    const svc = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    try {
      await svc.sessionId;
      const pid = svc.daemon!.pid;
      seen(pid);
      // Raw and without echo: each of 300 one-byte reads, a millisecond apart, takes a
      // byte of input and writes nothing back, so nothing but the room for input changes
      // on the terminal, 300 times.
      const reader = "import os, time, tty; tty.setraw(0); print('ready', flush=True); [(os.read(0, 1), time.sleep(0.001)) for _ in range(300)]; print('done-reading', flush=True); time.sleep(30)";
      const { handle } = await svc.start(`python3 -c "${reader}"`);
      expect((await svc.waitFor(handle, { pattern: 'ready', fromStart: true, timeoutMs: 60_000 })).status).toBe('matched');
      const before = jobsWakeups(pid);
      await svc.writeToPty(handle, 'x'.repeat(300));
      expect((await svc.waitFor(handle, { pattern: 'done-reading', fromStart: true, timeoutMs: 60_000 })).status).toBe('matched');
      const woken = jobsWakeups(pid) - before;
      // Before: one for about every other read (138 and 143 seen); now the output, the
      // wait's end and the runtime's timers (4 to 11 seen).
      console.log(`job threads woken ${woken} times for 300 reads`);
      expect(woken).toBeLessThan(50);
      await svc.kill(handle, { graceMs: 100 });
    } finally {
      await svc.shutdown({ killJobs: true });
    }
  });

  it("a client reading its replies does not wake the connection's thread", async () => {
    const p = place();
    const svc = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    try {
      await svc.sessionId;
      const pid = svc.daemon!.pid;
      seen(pid);
      const { handle } = await svc.start('sleep 30');
      const calls = 400;
      // The main thread reads every request (src/daemon/run.rs).
      const before = wakeups(pid, pid);
      for (let i = 0; i < calls; i++) await svc.isPtyActive(handle);
      const perCall = (wakeups(pid, pid) - before) / calls;
      // One wake-up per request (its arrival); before, a second one each time this
      // client read the reply (1.6 to 2 seen).
      console.log(`connection thread woken ${perCall} times a call`);
      expect(perCall).toBeLessThan(1.4);
      await svc.kill(handle, { graceMs: 100 });
    } finally {
      await svc.shutdown({ killJobs: true });
    }
  });

  it('input larger than the terminal takes at once arrives whole, in process and through the daemon (its writes wait for room)', async () => {
    const p = place();
    for (const daemon of [undefined, p.daemon]) {
      const svc = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, ...(daemon ? { daemon } : {}) });
      try {
        // 1 MiB into a terminal whose input queue holds 4 KiB: most of it waits for room
        // (write_room.rs), which the reader makes as it goes.
        const size = 1 << 20;
        const { handle } = await svc.start(`stty raw -echo; echo ready; head -c ${size} | wc -c; sleep 30`);
        expect((await svc.waitFor(handle, { pattern: 'ready', fromStart: true, timeoutMs: 60_000 })).status).toBe('matched');
        await svc.writeToPty(handle, Buffer.alloc(size, 'y'));
        const done = await svc.waitFor(handle, { pattern: `${size}`, fromStart: true, timeoutMs: 120_000 });
        expect(done.status).toBe('matched');
        await svc.kill(handle, { graceMs: 100 });
      } finally {
        await svc.shutdown({ killJobs: true });
      }
    }
  });
});
