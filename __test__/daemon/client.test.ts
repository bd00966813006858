// The daemon client (client/, docs/daemon.md) against the real daemon: real sockets, real
// second processes, another real uid. Every test has its own socket (a temp directory)
// and a short idle exit; afterAll stops every daemon and checks it is gone.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { itIf } from '../gates';
import { alive, expectCode } from '../helpers';
import { entry, eventuallyAsync, ROOT, place, runAs, seen, ShellExecutionService, stopDaemons } from './setup';

afterAll(stopDaemons, 120_000);

/** Every thread of `pid` is stopped (state T). */
function stopped(pid: number): boolean {
  try {
    const tasks = readdirSync(`/proc/${pid}/task`);
    return tasks.every((t) => {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
    });
  } catch {
    return false;
  }
}

/** Runs `fixtures/owner.cjs` and resolves with its JSON line (the child still runs). */
function owner(socket: string, project: string) {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'owner.cjs'), socket, project, '3000'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const line = new Promise<{
    counter: { handle: number; pid: number };
    kept: { handle: number; pid: number };
    unkept: { handle: number; pid: number };
    daemonPid: number;
  }>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.on('exit', (code) => reject(new Error(`owner exited (${code}) before it reported: ${err}`)));
  });
  return { child, line };
}

describe('a daemon client', () => {
  it('answers as the in-process service does, with the daemon named in `daemon`', async () => {
    const p = place();
    const inProcess = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir });
    expect(inProcess.daemon).toBeNull();
    expect(inProcess).toBeInstanceOf(ShellExecutionService);
    const s = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    expect(s).toBeInstanceOf(ShellExecutionService);
    try {
      const [a, b] = await Promise.all([inProcess.run('echo one; echo two >&2; exit 3', { mode: 'pipes' }), s.run('echo one; echo two >&2; exit 3', { mode: 'pipes' })]);
      seen(s.daemon?.pid);
      expect(s.daemon).toMatchObject({ socket: p.socket, version: require(join(ROOT, 'package.json')).version });
      // (`output` interleaves the two pipes as they were read: its order may differ.)
      for (const k of ['status', 'stdout', 'stderr', 'exitCode', 'signal', 'error', 'truncated', 'totalBytes'] as const) expect(b[k]).toEqual(a[k]);
      expect(await s.projectRoot).toBe(inProcess.projectRoot);
      expect(await s.containment).toBe(inProcess.containment);

      // A PTY job driven through every method.
      const job = await s.start('exec python3 -q', { cols: 90, rows: 20 });
      await s.waitFor(job.handle, { pattern: '>>> ', fromStart: true });
      const typed = await s.sendInput(job.handle, 'print(6 * 7)', { pattern: '42', detectInput: false });
      expect(typed.output).toContain('42');
      await s.writeToPty(job.handle, Buffer.from('print("bin" + "ary")\n'));
      expect((await s.waitFor(job.handle, { pattern: 'binary', detectInput: false, fromStart: true })).status).toBe('matched');
      await s.resizePty(job.handle, 100, 30);
      const screen = await s.getScreen(job.handle);
      expect([screen.cols, screen.rows]).toEqual([100, 30]);
      const packed = await s.getScreenPacked(job.handle);
      expect(packed.lineRuns).toBeInstanceOf(Uint32Array);
      expect(packed.text).toContain('binary');
      expect(await s.isPtyActive(job.handle)).toBe(true);
      expect(await s.getProcessOutput(job.handle, { view: 'text' })).toContain('binary');
      const listed = (await s.getActiveProcesses()).find((j) => j.handle === job.handle);
      expect(listed).toMatchObject({ status: 'running', attached: 'this', mode: 'pty' });
      expect((await inProcess.getActiveProcesses()).every((j) => j.attached === 'this')).toBe(true);
      const events: boolean[] = [];
      const stop = await s.onOutput(job.handle, (e) => events.push(e.exited));
      const killed = await s.kill(job.handle);
      expect(killed.status).toBe('killed');
      expect(await eventuallyAsync(() => events.includes(true))).toBe(true);
      stop();
      expect((await s.getResult(job.handle)).status).toBe('killed');
      await s.removeProcess(job.handle);

      // Errors: the same codes, the same extra fields.
      await expectCode(s.getResult(424242), 'PROCESS_NOT_FOUND');
      await expectCode(s.run('true', { directory: '../..' }), 'INVALID_DIRECTORY');
      const failed = (await expectCode(s.start('/no/such/program', { args: [] }), 'SPAWN_FAILED')) as Error & { result?: { status: string } };
      expect(failed.result?.status).toBe('failed');
      expect(s.checkCommand('rm -rf /', { excludeTools: ['run_shell_command(rm)'] }).decision).toBe('deny');
    } finally {
      await inProcess.shutdown();
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  it('answers a reply over the 16 MiB request limit whole, as in process (a 16 MiB read of 32 MiB in JSON)', async () => {
    const p = place();
    const inProcess = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir });
    const s = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    // `"\` lines: every byte doubles in JSON's escapes.
    const command = `yes '"\\' | head -c 20000000`;
    try {
      const a = await inProcess.run(command, { mode: 'pipes' });
      const b = await s.run(command, { mode: 'pipes' });
      seen(s.daemon?.pid);
      expect(b.totalBytes).toBe(a.totalBytes);
      const want = await inProcess.readOutput(a.handle, { since: 0, maxBytes: 16 << 20 });
      expect(JSON.stringify(want).length).toBeGreaterThan(32 << 20);
      const got = await s.readOutput(b.handle, { since: 0, maxBytes: 16 << 20 });
      expect(got.text.length).toBe(want.text.length);
      expect(got.text === want.text).toBe(true); // (not toBe: a 16 MiB diff on failure)
      expect(got.next).toBe(want.next);
    } finally {
      await inProcess.shutdown();
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  it('keeps jobs across clients: a client SIGKILLed, another re-attaches by handle and reads what was written meanwhile', async () => {
    const p = place();
    const { child, line } = owner(p.daemon.socket, p.project);
    const started = await line;
    seen(started.daemonPid);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
    try {
      // The keep:false job dies with its client's connection; the others run on, not attached.
      expect(await eventuallyAsync(() => !alive(started.unkept.pid))).toBe(true);
      expect(alive(started.kept.pid)).toBe(true);
      const jobs = await s.getActiveProcesses();
      const kept = jobs.find((j) => j.handle === started.kept.handle);
      expect(kept).toMatchObject({ status: 'running', attached: 'none' });
      // Output produced while no client was attached: every line, read by the old handle.
      expect(
        await eventuallyAsync(async () => (await s.readOutput(started.counter.handle)).text.includes('counted')),
      ).toBe(true);
      const text = (await s.readOutput(started.counter.handle)).text;
      for (let i = 1; i <= 40; i++) expect(text).toContain(`line-${i}\n`);
      // And it takes input and kills from here.
      const echoed = await s.sendInput(started.counter.handle, 'hello-from-the-next-client', { pattern: 'hello-from-the-next-client\\r?\\n.*hello' });
      expect(echoed.output).toContain('hello-from-the-next-client');
      expect((await s.kill(started.kept.handle)).status).toBe('killed');
      expect((await s.kill(started.counter.handle)).status).toBe('killed');
      expect(alive(started.kept.pid)).toBe(false);
    } finally {
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  it('a daemon SIGSTOPped for 2 s: every call returns a promise at once and settles after SIGCONT, in order', async () => {
    const p = place();
    const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
    try {
      const job = await s.start('exec cat', { cols: 80, rows: 24 });
      const pid = s.daemon!.pid;
      seen(pid);
      process.kill(pid, 'SIGSTOP');
      // The stop lands when each of the daemon's threads next enters the kernel: wait
      // until every one of them is stopped, or a call made now could still be answered.
      expect(await eventuallyAsync(() => stopped(pid))).toBe(true);
      try {
        const settled: string[] = [];
        const note = <T>(name: string, promise: Promise<T>) => promise.finally(() => settled.push(name));
        const calls = [
          note('write', s.writeToPty(job.handle, 'first\n')),
          note('input', s.sendInput(job.handle, 'second', { pattern: 'second\\r?\\n.*second' })),
          note('resize', s.resizePty(job.handle, 101, 33)),
          note('list', s.getActiveProcesses()),
        ];
        // The event loop runs on while the daemon is stopped: timers fire, nothing settles.
        const ticks = await new Promise<number>((resolve) => {
          let n = 0;
          const t = setInterval(() => {
            if (++n === 20) {
              clearInterval(t);
              resolve(n);
            }
          }, 100);
        });
        expect(ticks).toBe(20);
        expect(settled).toEqual([]);
        process.kill(pid, 'SIGCONT');
        await Promise.all(calls);
        const screen = await s.getScreen(job.handle);
        expect([screen.cols, screen.rows]).toEqual([101, 33]);
        const text = await s.getProcessOutput(job.handle, { view: 'text' });
        expect(text.indexOf('first')).toBeGreaterThanOrEqual(0);
        expect(text.indexOf('second')).toBeGreaterThan(text.indexOf('first'));
      } finally {
        process.kill(pid, 'SIGCONT');
      }
    } finally {
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  it('a daemon SIGKILLed: pending calls reject DAEMON_LOST, its jobs die, their files stay, the next call starts a new daemon', async () => {
    const p = place();
    const s = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
    try {
      const job = await s.start('echo started; exec sleep 600', { mode: 'pipes' });
      const first = s.daemon!.pid;
      seen(first);
      await s.waitFor(job.handle, { pattern: 'started', fromStart: true });
      const pending = s.waitFor(job.handle, { pattern: 'never-printed', timeoutMs: 600_000 });
      const files = (await s.getResult(job.handle)).outputDir!;
      process.kill(first, 'SIGKILL');
      await expectCode(pending, 'DAEMON_LOST');
      expect(await eventuallyAsync(() => !alive(job.pid))).toBe(true);
      expect(existsSync(join(files, 'stdout.txt'))).toBe(true);
      // The next call: a new daemon, which knows nothing of the old jobs.
      expect(await s.getActiveProcesses()).toEqual([]);
      expect(s.daemon!.pid).not.toBe(first);
      seen(s.daemon!.pid);
      expect((await s.run('echo again', { mode: 'pipes' })).output).toBe('again\n');
    } finally {
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  itIf('root', 'program:setpriv')('another uid gets nothing from the daemon, not even a byte', async () => {
    const p = place();
    const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
    try {
      await s.start('exec sleep 600', { mode: 'pipes' });
      seen(s.daemon!.pid);
      // The socket's directory is 0700: the other user reaches the socket through a
      // hard link in a directory open to it, so only the daemon's peer check stands.
      const open = join(p.base, 'open');
      mkdirSync(open, { mode: 0o755 });
      chmodSync(open, 0o755);
      const reachable = join(open, 'daemon.sock');
      linkSync(p.socket, reachable);
      chmodSync(reachable, 0o777);
      const script = join(open, 'stranger.cjs');
      require('node:fs').copyFileSync(join(__dirname, 'fixtures', 'stranger.cjs'), script);
      chmodSync(script, 0o644);
      const r = runAs(65534, script, [reachable]);
      expect(r.stderr).toBe('');
      const seenByStranger = JSON.parse(r.stdout) as { received: number; closed?: boolean; error?: string };
      expect(seenByStranger.received).toBe(0);
      expect(seenByStranger.closed !== false).toBe(true);
      // The owner still gets its answers.
      expect((await s.getActiveProcesses()).length).toBe(1);
    } finally {
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  it("gives jobs this process's environment, as in process, and nothing of the daemon's own", async () => {
    const p = place();
    // A daemon started by another process whose environment holds a variable this one lacks.
    const daemon = spawn(process.env.NATIVE_SHELL_DAEMON_BIN!, ['--socket', p.socket, '--idle-exit-ms', '3000'], {
      stdio: 'ignore',
      env: { ...process.env, NSS_DAEMON_ONLY: 'leaked' },
    });
    seen(daemon.pid);
    expect(await eventuallyAsync(() => existsSync(p.socket))).toBe(true);
    const command = 'echo "${NSS_DAEMON_ONLY-unset} ${NSS_CLIENT_ONLY-unset} ${GIT_ASKPASS-unset} ${NSS_SERVICE-unset}"';
    process.env.NSS_CLIENT_ONLY = 'here';
    process.env.GIT_ASKPASS = '/bin/askpass';
    try {
      const options = { projectRoot: p.project, persistOutput: false, env: { NSS_SERVICE: 'set' } };
      const local = new ShellExecutionService(options);
      const remote = new ShellExecutionService({ ...options, daemon: p.daemon });
      const [a, b] = [await local.run(command, { mode: 'pipes' }), await remote.run(command, { mode: 'pipes' })];
      expect(b.output).toBe(a.output);
      expect(b.output.trim()).toBe('unset here unset set');
      await local.shutdown();
      await remote.shutdown();
    } finally {
      delete process.env.NSS_CLIENT_ONLY;
      delete process.env.GIT_ASKPASS;
    }
  });

  it('two clients starting at once get one daemon', async () => {
    const p = place();
    const clients = Array.from({ length: 3 }, () => new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon }));
    try {
      await Promise.all(clients.map((c) => c.sessionId));
      const pids = new Set(clients.map((c) => c.daemon!.pid));
      for (const pid of pids) seen(pid);
      expect(pids.size).toBe(1);
    } finally {
      await Promise.all(clients.map((c) => c.shutdown()));
    }
  }, 60_000);

  it('meets a daemon of another version: replaces it when idle, else DAEMON_VERSION saying what to do', async () => {
    const { withDaemon } = require(join(ROOT, 'dist', 'client', 'entry.js')) as typeof import('../../client/entry');
    const native = require(join(ROOT, 'index.js'));
    const future = withDaemon({ ...native }, { packageRoot: ROOT, version: '99.0.0' }) as unknown as typeof entry;
    const p = place();
    // A daemon of this version holding a job: the other version must not touch it.
    const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
    try {
      const job = await s.start('exec sleep 600', { mode: 'pipes' });
      const pid = s.daemon!.pid;
      seen(pid);
      const other = new future.ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
      const e = await expectCode(other.getActiveProcesses(), 'DAEMON_VERSION');
      expect(e.message).toContain('holds 1 job');
      expect(e.message).toContain('99.0.0');
      // It was asked to restart in place first and did, keeping its job (same pid, as a
      // restart in place is an exec: src/daemon/restart.rs); the binary at its path is
      // this build's, not 99.0.0, so the versions still differ, and the error says so.
      expect(e.message).toContain('restarted in place, its jobs kept');
      expect(alive(pid) && alive(job.pid)).toBe(true);
      expect((await s.getActiveProcesses()).map((j) => j.handle)).toContain(job.handle);
      await s.kill(job.handle);
      await s.shutdown();
      // Idle now: the other version's client asks it to exit and starts its own (which,
      // being this build's binary, is again not 99.0.0: refused, with nothing lost).
      const again = new future.ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
      await expectCode(again.getActiveProcesses(), 'DAEMON_VERSION');
      expect(await eventuallyAsync(() => !alive(pid))).toBe(true);
    } finally {
      await s.shutdown({ killJobs: true });
    }
  }, 120_000);

  it('the entry exports what the generated loader does, its class the in-process service', () => {
    const native = require(join(ROOT, 'index.js'));
    expect(Object.keys(entry).sort()).toEqual(expect.arrayContaining(Object.keys(native).sort()));
    for (const k of Object.keys(native)) if (k !== 'ShellExecutionService' && k !== 'JsShellExecutionService') expect(entry[k as keyof typeof entry]).toBe(native[k]);
    expect(() => new native.ShellExecutionService({ daemon: true })).toThrow(/package entry/);
  });

  it('a daemon that cannot serve: DAEMON_UNAVAILABLE with what it said, without waiting out the connect bound', async () => {
    const p = place();
    const fake = join(p.base, 'broken-daemon');
    writeFileSync(fake, '#!/bin/sh\necho "native-shell-daemon: cannot bind: a test of a broken daemon" >&2\nexit 1\n', { mode: 0o755 });
    const real = process.env.NATIVE_SHELL_DAEMON_BIN;
    process.env.NATIVE_SHELL_DAEMON_BIN = fake;
    try {
      const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
      const e = await expectCode(s.getActiveProcesses(), 'DAEMON_UNAVAILABLE');
      expect(e.message).toContain('exited with status 1');
      expect(e.message).toContain('a test of a broken daemon');
    } finally {
      process.env.NATIVE_SHELL_DAEMON_BIN = real;
    }
  }, 60_000);

  it('refuses an env JSON cannot carry as the in-process service does (same code, same words)', async () => {
    const p = place();
    const bad: unknown[] = [new Map([['A', 'b']]), ['x'], { A: 1 }, 7];
    for (const env of bad) {
      const native = (() => {
        try {
          new ShellExecutionService({ projectRoot: p.project, env: env as Record<string, string> });
        } catch (e) {
          return e as Error & { code?: string };
        }
        throw new Error('in process accepted it');
      })();
      expect(native.code).toBe('INVALID_ARGUMENT');
      expect(() => new ShellExecutionService({ projectRoot: p.project, env: env as Record<string, string>, daemon: p.daemon })).toThrow(native.message);
    }
    const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
    try {
      const e = await expectCode(s.run('true', { env: new Map() as unknown as Record<string, string> }), 'INVALID_ARGUMENT');
      expect(e.message).toContain('not a Map');
    } finally {
      await s.shutdown();
    }
  }, 60_000);

  it('a daemon that leaves as the client connects (its idle exit) is replaced, not reported', async () => {
    const p = place();
    // Stands in for a daemon that accepts and then exits: closes the first connection
    // unanswered and goes away, socket and all.
    const leaving = createServer((c) => {
      c.destroy();
      leaving.close();
      rmSync(p.socket, { force: true });
    });
    await new Promise<void>((r) => leaving.listen(p.socket, r));
    const s = new ShellExecutionService({ projectRoot: p.project, daemon: p.daemon });
    try {
      expect(await s.getActiveProcesses()).toEqual([]);
      seen(s.daemon!.pid);
      expect(s.daemon!.pid).not.toBe(process.pid);
    } finally {
      await s.shutdown();
    }
  }, 60_000);

  it('refuses a socket directory another could control (DAEMON_UNAVAILABLE)', async () => {
    const p = place();
    const loose = join(p.base, 'loose');
    mkdirSync(loose);
    chmodSync(loose, 0o755);
    const s1 = new ShellExecutionService({ projectRoot: p.project, daemon: { socket: join(loose, 'd.sock') } });
    await expectCode(s1.getActiveProcesses(), 'DAEMON_UNAVAILABLE');
    const link = join(p.base, 'link');
    symlinkSync(join(p.base, 'run'), link);
    const s2 = new ShellExecutionService({ projectRoot: p.project, daemon: { socket: join(link, 'd.sock') } });
    await expectCode(s2.getActiveProcesses(), 'DAEMON_UNAVAILABLE');
    expect(existsSync(join(loose, 'd.sock'))).toBe(false);
  }, 60_000);
});
