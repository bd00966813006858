// How a job's process starts: it is launched without copying Node (a vfork-style
// clone), so everything fork() used to give for free is checked here: the session,
// signal dispositions and mask, the descriptors it holds, the program search, the
// failure paths, and a host whose own stdin is closed.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectCode, type Scratch, scratch } from './helpers';
import { procs } from './stress/common';

let s: Scratch;
beforeAll(() => {
  s = scratch();
  mkdirSync(join(s.root, 'bin'));
  mkdirSync(join(s.root, 'locked'));
  mkdirSync(join(s.root, 'sub'));
  const script = (path: string, body: string, mode: number) => {
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, mode);
  };
  script(join(s.root, 'bin', 'hello-from-path'), 'echo "found in PATH: $0"', 0o755);
  script(join(s.root, 'locked', 'hello-from-path'), 'echo "must not run"', 0o644);
  script(join(s.root, 'sub', 'tool.sh'), 'echo "tool in $(pwd)"', 0o755);
});
afterAll(() => s.cleanup());

/** The `Name:\tvalue` lines of /proc/<job>/status, read by the job itself. */
function statusFields(text: string): Record<string, string> {
  return Object.fromEntries(text.trim().split('\n').map((l) => l.split(':\t').map((x) => x.trim()) as [string, string]));
}

const bit = (mask: string, signal: number) => (BigInt(`0x${mask}`) >> BigInt(signal - 1)) & 1n;
const SIGHUP = 1;
const SIGINT = 2;
const SIGPIPE = 13;

/** Pids of this process's children that are zombies (exited, never reaped). */
function zombieChildren(): number[] {
  return procs()
    .filter((p) => p.state === 'Z' && p.ppid === process.pid)
    .map((p) => p.pid);
}

describe.each(['pty', 'pipes'] as const)('a job started in %s mode', (mode) => {
  it('leads its own session, with no signal blocked, SIGPIPE at default and SIGHUP ignored only in a PTY', async () => {
      const r = await s.service.run('grep', { args: ['-E', '^(Pid|NSsid|SigBlk|SigIgn):', '/proc/self/status'], mode });
      expect(r.exitCode).toBe(0);
      const f = statusFields(r.stdout);
      expect(f.NSsid).toBe(f.Pid);
      expect(BigInt(`0x${f.SigBlk}`)).toBe(0n);
      expect(bit(f.SigIgn, SIGPIPE)).toBe(0n);
      expect(bit(f.SigIgn, SIGINT)).toBe(0n);
      expect(bit(f.SigIgn, SIGHUP)).toBe(mode === 'pty' ? 1n : 0n);
  });

  it('holds only descriptors 0, 1 and 2 (nothing of the host, the PTY or the other pipe ends leaks, even without close-on-exec)', async () => {
    // A second job running meanwhile has descriptors of its own that must not leak either.
    const other = await s.service.run('sleep 30', { mode, callbackDelayMs: 0 });
    const r = await s.service.run('ls', { args: ['/proc/self/fd'], mode });
    await s.service.kill(other.handle);
    // `ls` itself has the directory it lists open as the next free descriptor, 3.
    expect(r.stdout.trim().split(/\s+/)).toEqual(['0', '1', '2', '3']);
  });

  it('gets a pipe that breaks: `yes | head -1` ends at once by SIGPIPE', async () => {
    const r = await s.service.run('yes | head -1; echo "yes ended with ${PIPESTATUS[0]}"', { mode, timeoutMs: 10_000 });
    expect(r.stdout).toContain('yes ended with 141');
  });

  it("finds a program in the job's own PATH, skipping an entry it may not execute", async () => {
    const r = await s.service.run('hello-from-path', {
      args: [],
      mode,
      env: { PATH: `${join(s.root, 'locked')}:${join(s.root, 'bin')}:/usr/bin:/bin` },
    });
    expect(r.status).toBe('exited');
    expect(r.stdout.trim()).toBe('found in PATH: ' + join(s.root, 'bin', 'hello-from-path'));
  });

  it('resolves a relative program path in the job directory', async () => {
    const r = await s.service.run('./tool.sh', { args: [], mode, directory: 'sub' });
    expect(r.stdout.trim()).toBe(`tool in ${join(s.root, 'sub')}`);
  });

  it('reports a program it cannot start, and leaves no zombie behind', async () => {
    const before = zombieChildren().length;
    const missing = await s.service.run('no-such-program-xyz', { args: [], mode });
    expect(missing.status).toBe('failed');
    expect(missing.error).toMatch(/no-such-program-xyz.*No such file or directory/);
    const refused = await s.service.run('hello-from-path', { args: [], mode, env: { PATH: join(s.root, 'locked') } });
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatch(/Permission denied/);
    const notProgram = await s.service.run('./sub', { args: [], mode });
    expect(notProgram.status).toBe('failed');
    await expectCode(() => s.service.start('no-such-program-xyz', { args: [], mode }), 'SPAWN_FAILED');
    expect(zombieChildren().length).toBe(before);
  });

  it('reaps every finished job: no zombies after 50 quick jobs', async () => {
    const before = zombieChildren().length;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => s.service.run(`exit ${i % 3}`, { mode })));
    expect(results.map((r) => r.exitCode)).toEqual(Array.from({ length: 50 }, (_, i) => i % 3));
    expect(zombieChildren().length).toBe(before);
  });
});

describe('a host whose own stdin is closed', () => {
  it('still gives jobs working descriptors 0, 1 and 2 (a freed descriptor 0 is reused for the job)', () => {
    // In a child Node with descriptor 0 closed, the next PTY slave or pipe end can be
    // descriptor 0 itself; the launch must not close or clobber it while arranging stdio.
    const program = `
      const fs = require('node:fs');
      const { ShellExecutionService } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
      const svc = new ShellExecutionService({ projectRoot: ${JSON.stringify(s.root)}, persistOutput: false });
      (async () => {
        // Everything the service opens once (its reactor, the watchdog) exists now, so
        // the lowest free descriptor, 0, goes to the next job's PTY or pipe.
        await svc.run('true');
        fs.closeSync(0);
        const pty = await svc.run('tty; read -r line; echo "got $line"', { callbackPattern: '/dev/pts' });
        const answer = await svc.sendInput(pty.handle, 'hello', { pattern: 'got hello' });
        const pipes = await svc.run('cat', { mode: 'pipes', callbackDelayMs: 0 });
        const echoed = await svc.sendInput(pipes.handle, 'through the pipe', { pattern: 'through the pipe' });
        await svc.sendInput(pipes.handle, '', { keys: ['C-d'], appendNewline: false, delayMs: 50 });
        console.log(JSON.stringify({ pty: pty.output, answer: answer.status, pipes: echoed.status }));
        await svc.shutdown();
      })();
    `;
    const out = execFileSync(process.execPath, ['-e', program], { encoding: 'utf8', timeout: 30_000 });
    const r = JSON.parse(out.trim().split('\n').pop()!);
    expect(r.pty).toMatch(/^\/dev\/pts\/\d+/);
    expect(r.answer).toBe('matched');
    expect(r.pipes).toBe('matched');
  });
});
