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

import { eventually } from '../helpers';
import { place, ShellExecutionService, stopDaemons, threadsNamed, withDaemonService } from './setup';

afterAll(stopDaemons);

/** Times a thread slept and was woken so far. */
function wakeups(pid: number, tid: number): number {
  const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
  if (!m) throw new Error(`no voluntary_ctxt_switches for ${pid}/${tid}`);
  return Number(m[1]);
}

/** Each of the daemon's threads, by name (`comm`: 15 characters at most), with its wake-ups so far. */
function threadWakeups(pid: number): Map<string, number> {
  const all = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      all.set(name, (all.get(name) ?? 0) + wakeups(pid, tid));
    } catch {
      // A thread that ended meanwhile (the runtime's blocking pool's).
    }
  }
  return all;
}

/** Whether signal `n` is in a `/proc/.../status` mask line (`SigBlk`, `SigCgt`: hexadecimal). */
function inMask(status: string, line: string, n: number): boolean {
  const m = new RegExp(`^${line}:\\s+([0-9a-f]+)$`, 'm').exec(status);
  if (!m) throw new Error(`no ${line} in a status`);
  return ((BigInt(`0x${m[1]}`) >> BigInt(n - 1)) & 1n) === 1n;
}

const SIGCHLD = 17;

/** The daemon's zombie children (exited and not reaped). */
function zombieChildren(pid: number): number[] {
  const zombies: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) S ppid ...`: the comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' && Number(ppid) === pid) zombies.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return zombies;
}

/** The daemon's `jobs` threads' wake-ups, summed. */
function jobsWakeups(pid: number): number {
  return threadsNamed(pid, 'jobs').reduce((sum, tid) => sum + wakeups(pid, tid), 0);
}

describe('the daemon wakes for work only', () => {
  it('a program reading its terminal byte by byte does not wake the job threads per byte', async () => {
    await withDaemonService(async (svc, pid) => {
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
    });
  });

  it("a client reading its replies does not wake the connection's thread", async () => {
    await withDaemonService(async (svc, pid) => {
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
    });
  });

  it("a job's exit wakes only its reader, the exit watcher and the orphan reaper: not the connection's thread nor the peer checker", async () => {
    await withDaemonService(async (svc, pid) => {
      for (let i = 0; i < 5; i++) await svc.run('true');
      // SIGCHLD is blocked in every thread and no handler takes it (src/daemon/child_exits.rs):
      // the orphan reaper waits for it. Before, tokio's handler wrote to a pipe every runtime
      // watched, waking the connection's thread and a jobs thread, which woke the peer checker.
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
        // The reaper, waiting in `sigwaitinfo`, shows the signal it waits for unblocked.
        if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() !== 'native-shell-re') {
          expect(inMask(status, 'SigBlk', SIGCHLD), `thread ${tid} blocks SIGCHLD`).toBe(true);
        }
        expect(inMask(status, 'SigCgt', SIGCHLD), 'no SIGCHLD handler').toBe(false);
      }
      const runs = 60;
      const before = threadWakeups(pid);
      for (let i = 0; i < runs; i++) await svc.run('true');
      const after = threadWakeups(pid);
      const perRun = (name: string) => ((after.get(name) ?? 0) - (before.get(name) ?? 0)) / runs;
      console.log(`wake-ups per run: ${[...after.keys()].map((name) => `${name} ${perRun(name).toFixed(2)}`).join(', ')}`);
      // The peer checker wakes for new connections only (1.6 to 1.8 a run before, 0 now).
      expect(perRun('native-shell-pe')).toBeLessThan(0.25);
      // The reaper, once for each exit (a second time when it saw only the job's own
      // process, not reaped yet: child_exits.rs).
      expect(perRun('native-shell-re')).toBeGreaterThan(0);
      expect(perRun('native-shell-re')).toBeLessThan(4);
    });
  });

  it('what a job leaves behind is reaped when it exits, with the job or after it', async () => {
    await withDaemonService(async (svc, pid) => {
      // Orphans of the daemon (a subreaper) once each job's own process has exited: one
      // ends within the job's exit (the terminal's hang-up), one a moment after it, in a
      // session of its own.
      for (let i = 0; i < 10; i++) {
        const r = await svc.run('sleep 5 & setsid sleep 0.2 & true');
        expect(r.status).toBe('exited');
      }
      expect(await eventually(() => zombieChildren(pid).length === 0, 30_000), `zombies of the daemon: ${String(zombieChildren(pid))}`).toBe(true);
    });
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
