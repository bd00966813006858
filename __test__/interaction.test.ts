// Interaction: the seed's workflows with real programs, patterns, keys, resize.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, expectCode, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('seed workflows', () => {
  it('edits a file with ed', async () => {
    const ed = await s.service.run("ed -p 'ED> ' hello.txt", { callbackPattern: 'ED> ', timeoutMs: 20_000 });
    expect(ed.status).toBe('running');
    expect(ed.matched).toBe('ED> ');
    // In append mode ed shows no prompt: a short delay is the callback there.
    // ed reads the next line at once: the wait ends on that, not on the delay.
    expect((await s.service.sendInput(ed.handle, 'a', { delayMs: 5000 })).status).toBe('awaiting_input');
    await s.service.sendInput(ed.handle, 'Hello, world!', { delayMs: 150 });
    expect((await s.service.sendInput(ed.handle, '.', { pattern: 'ED> ' })).status).toBe('matched');
    const written = await s.service.sendInput(ed.handle, 'w', { pattern: 'ED> ' });
    expect(written.output).toBe('w\n14\nED> ');
    const quit = await s.service.sendInput(ed.handle, 'q', { pattern: 'ED> ' });
    expect(quit.status).toBe('exited');
    expect(quit.exitCode).toBe(0);
    expect(readFileSync(join(s.root, 'hello.txt'), 'utf8')).toBe('Hello, world!\n');
  });

  it('computes fib(10) in a Python REPL', async () => {
    const py = await s.service.run('python3 -q', { callbackPattern: '>>> ' });
    expect(py.status).toBe('running');
    // A block statement wants a blank line to finish: Python answers with `... `.
    const def = await s.service.sendInput(py.handle, 'def fib(n): return n if n <= 1 else fib(n-1) + fib(n-2)', {
      pattern: '\\.\\.\\. $',
    });
    expect(def.status).toBe('matched');
    expect((await s.service.sendInput(py.handle, '', { pattern: '>>> ' })).status).toBe('matched');
    const out = await s.service.sendInput(py.handle, 'print(fib(10))', { pattern: '>>> ' });
    expect(out.status).toBe('matched');
    expect(out.output).toBe('print(fib(10))\n55\n>>> ');
    const bye = await s.service.sendInput(py.handle, 'exit()', { pattern: '>>> ' });
    expect(bye.status).toBe('exited');
  });

  it('runs a server in the background, lists it, and kill frees its port', async () => {
    const srv = await s.service.run('python3 -m http.server 0 --bind 127.0.0.1', { callbackDelayMs: 0 });
    const ready = await s.service.waitFor(srv.handle, { pattern: 'Serving HTTP on \\S+ port \\d+', timeoutMs: 20_000 });
    expect(ready.status).toBe('matched');
    const port = Number(/port (\d+)/.exec(ready.matched!)![1]);
    expect(await canConnect(port)).toBe(true);
    const listed = s.service.getActiveProcesses().find((p) => p.handle === srv.handle)!;
    expect(listed.status).toBe('running');
    expect(listed.command).toBe('python3 -m http.server 0 --bind 127.0.0.1');
    const killed = await s.service.kill(srv.handle);
    expect(killed).toMatchObject({ handle: srv.handle, status: 'killed', exitCode: null });
    expect(await canConnect(port)).toBe(false);
    expect(s.service.getActiveProcesses().find((p) => p.handle === srv.handle)?.status).toBe('killed');
  });

  it('drives a sqlite3 session', async () => {
    const db = await s.service.run('sqlite3 -interactive :memory:', { callbackPattern: 'sqlite> ' });
    await s.service.sendInput(db.handle, 'create table t(x integer);', { pattern: 'sqlite> ' });
    await s.service.sendInput(db.handle, 'insert into t values (20), (22);', { pattern: 'sqlite> ' });
    const sum = await s.service.sendInput(db.handle, 'select sum(x) from t;', { pattern: 'sqlite> ' });
    expect(sum.output.split('\n')).toContain('42');
    const quit = await s.service.sendInput(db.handle, '.quit', { pattern: 'sqlite> ' });
    expect(quit.status).toBe('exited');
  });

  it('drives a gdb session: break, run, print, quit', async () => {
    writeFileSync(join(s.root, 'prog.c'), 'int main(void) {\n  int answer = 42;\n  return answer - 42;\n}\n');
    execFileSync('gcc', ['-g', '-O0', '-o', 'prog', 'prog.c'], { cwd: s.root });
    const gdb = await s.service.run('gdb -q -nx ./prog', { callbackPattern: '\\(gdb\\) $', timeoutMs: 60_000 });
    expect(gdb.status).toBe('running');
    const brk = await s.service.sendInput(gdb.handle, 'break 3', { pattern: '\\(gdb\\) $' });
    expect(brk.output).toMatch(/Breakpoint 1 at/);
    const run = await s.service.sendInput(gdb.handle, 'run', { pattern: '\\(gdb\\) $', timeoutMs: 60_000 });
    expect(run.output).toMatch(/Breakpoint 1, main/);
    const print = await s.service.sendInput(gdb.handle, 'print answer', { pattern: '\\(gdb\\) $' });
    expect(print.output).toMatch(/\$1 = 42/);
    const quit = await s.service.sendInput(gdb.handle, 'quit', { pattern: '\\(y or n\\)|\\(gdb\\) $' });
    if (quit.status === 'matched') await s.service.sendInput(gdb.handle, 'y', { timeoutMs: 10_000, delayMs: 100 });
    await s.service.waitFor(gdb.handle, { timeoutMs: 10_000 });
    expect(s.service.isPtyActive(gdb.handle)).toBe(false);
  });
});

describe('patterns, keys and terminals', () => {
  it('C-c interrupts the foreground job of an interactive bash, which survives', async () => {
    const sh = await s.service.run('bash --norc --noprofile -i', { callbackPattern: '[#$] $', timeoutMs: 60_000 });
    expect(sh.status).toBe('running');
    await s.service.sendInput(sh.handle, "PS1='PROMPT> '", { pattern: 'PROMPT> $' });
    const started = await s.service.sendInput(sh.handle, 'sleep 100', { delayMs: 300 });
    expect(started.status).toBe('delay_elapsed');
    const interrupted = await s.service.sendInput(sh.handle, '', { keys: ['C-c'], pattern: 'PROMPT> $' });
    expect(interrupted.status).toBe('matched');
    expect(interrupted.output).toBe('^C\nPROMPT> ');
    const status = await s.service.sendInput(sh.handle, 'echo "status $?"', { pattern: 'status \\d+' });
    expect(status.matched).toBe('status 130');
    const alive = await s.service.sendInput(sh.handle, 'echo still-$((40+2))', { pattern: 'still-42' });
    expect(alive.status).toBe('matched');
    expect(s.service.isPtyActive(sh.handle)).toBe(true);
    await s.service.kill(sh.handle);
  });

  it("run's pattern sees the very first byte of output (the waiter exists before the reader)", async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      for (let i = 0; i < 50; i += 1) {
        const r = await s.service.run('echo first-line; exec sleep 30', { mode, callbackPattern: '^first-line' });
        expect(r.status).toBe('running');
        expect(r.matched).toBe('first-line');
        s.service.removeProcess(r.handle);
      }
    }
  });

  it('a prompt already on screen never satisfies a new wait', async () => {
    const py = await s.service.run('python3 -q', { callbackPattern: '>>> ' });
    const stale = await s.service.waitFor(py.handle, { pattern: '>>> ', timeoutMs: 400, detectInput: false });
    expect(stale.status).toBe('timed_out');
    expect(stale.output).toBe('');
    const fresh = await s.service.sendInput(py.handle, '1+1', { pattern: '>>> ' });
    expect(fresh.output).toBe('1+1\n2\n>>> ');
    await s.service.kill(py.handle);
  });

  it('serialises two sendInput calls on one handle', async () => {
    const py = await s.service.run('python3 -q', { callbackPattern: '>>> ' });
    const [a, b] = await Promise.all([
      s.service.sendInput(py.handle, 'import time; time.sleep(0.3); print("first")', { pattern: '>>> ' }),
      s.service.sendInput(py.handle, 'print("second")', { pattern: '>>> ' }),
    ]);
    expect(a.output).toMatch(/^import time.*\nfirst\n>>> $/);
    expect(b.output).toBe('print("second")\nsecond\n>>> ');
    await s.service.kill(py.handle);
  });

  it('control characters pass through: C-d ends cat in a PTY; in pipes mode it closes stdin', async () => {
    const pty = await s.service.run('cat', { callbackDelayMs: 0 });
    const echoed = await s.service.sendInput(pty.handle, 'typed', { pattern: 'typed\\n.*typed' });
    expect(echoed.status).toBe('matched');
    const eof = await s.service.sendInput(pty.handle, '\u0004', { appendNewline: false, timeoutMs: 10_000 });
    expect(eof.status).toBe('exited');
    const pipes = await s.service.run('cat; echo "cat done"', { mode: 'pipes', callbackDelayMs: 0 });
    s.service.writeToPty(pipes.handle, Buffer.from('from a buffer\n'));
    const got = await s.service.waitFor(pipes.handle, { pattern: 'from a buffer', fromStart: true });
    expect(got.status).toBe('matched');
    const closed = await s.service.sendInput(pipes.handle, '', { keys: ['C-d'], timeoutMs: 10_000 });
    expect(closed.status).toBe('exited');
    expect(closed.output).toBe('cat done\n');
  });

  it('resizePty: the program sees the new size; a finished job ignores it', async () => {
    const sh = await s.service.run('bash --norc --noprofile -i', { callbackPattern: '[#$] $', timeoutMs: 60_000 });
    s.service.resizePty(sh.handle, 123, 45);
    const size = await s.service.sendInput(sh.handle, 'echo "size $(tput cols) $(tput lines)"', { pattern: 'size \\d+ \\d+' });
    expect(size.matched).toBe('size 123 45');
    await s.service.kill(sh.handle);
    expect(() => s.service.resizePty(sh.handle, 100, 30)).not.toThrow();
    await expectCode(() => s.service.resizePty(sh.handle, 0, 0), 'INVALID_ARGUMENT');
  });

  it('sendInput to a finished job writes nothing and returns what was not yet returned', async () => {
    const r = await s.service.run('echo early; sleep 0.3; echo late', { callbackPattern: 'early' });
    expect(r.status).toBe('running');
    await s.service.waitFor(r.handle, { timeoutMs: 10_000 });
    const after = await s.service.sendInput(r.handle, 'ignored');
    expect(after.status).toBe('exited');
    expect(after.exitCode).toBe(0);
    expect(after.running).toBe(false);
    expect(after.output).toBe('');
    const fresh = await s.service.run('echo one; sleep 0.2; echo two', { callbackPattern: 'one' });
    expect(await eventually(() => !s.service.isPtyActive(fresh.handle))).toBe(true);
    const rest = await s.service.sendInput(fresh.handle, 'ignored');
    expect(rest.output).toBe('two\n');
  });

  it('errors: unknown handle, invalid pattern, unknown key', async () => {
    await expectCode(s.service.sendInput(424242, 'x'), 'PROCESS_NOT_FOUND');
    await expectCode(s.service.waitFor(424242, { pattern: 'x' }), 'PROCESS_NOT_FOUND');
    await expectCode(s.service.kill(424242), 'PROCESS_NOT_FOUND');
    await expectCode(() => s.service.writeToPty(424242, 'x'), 'PROCESS_NOT_FOUND');
    const before = s.service.getActiveProcesses().length;
    await expectCode(s.service.run('echo never', { callbackPattern: '(' }), 'INVALID_PATTERN');
    expect(s.service.getActiveProcesses().length).toBe(before);
    const cat = await s.service.run('cat', { callbackDelayMs: 0 });
    await expectCode(s.service.sendInput(cat.handle, 'x', { pattern: '[' }), 'INVALID_PATTERN');
    await expectCode(s.service.sendInput(cat.handle, '', { keys: ['Hyper-X'] }), 'INVALID_ARGUMENT');
    await s.service.kill(cat.handle);
    expect(alive(cat.pid!)).toBe(false);
  });
});

describe('start and waitFor from the start', () => {
  it('start() returns the handle at once; waitFor with fromStart sees output from the first byte', async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      const { handle, pid } = s.service.start('echo first-line; exec sleep 30', { mode });
      expect(handle).toBeGreaterThan(0);
      expect(pid).toBeGreaterThan(1);
      expect(s.service.isPtyActive(handle)).toBe(true);
      const seen = await s.service.waitFor(handle, { pattern: '^first-line', fromStart: true, timeoutMs: 20_000 });
      expect(seen.status).toBe('matched');
      expect(seen.output).toBe('first-line\n');
      // Without fromStart, the same line is old news.
      const stale = await s.service.waitFor(handle, { pattern: '^first-line', timeoutMs: 300 });
      expect(stale.status).toBe('timed_out');
      await s.service.kill(handle);
    }
  });

  it('fromStart matches in the output of a job that already exited', async () => {
    const { handle } = s.service.start('echo done-marker');
    await s.service.waitFor(handle, { timeoutMs: 10_000 });
    const r = await s.service.waitFor(handle, { pattern: 'done-marker', fromStart: true });
    expect(r.status).toBe('matched');
    expect(r.running).toBe(false);
    expect(r.exitCode).toBe(0);
  });

  it('start() throws SPAWN_FAILED for a program that cannot start, and exposes projectRoot', async () => {
    await expectCode(() => s.service.start('no-such-program-xyz', { args: [] }), 'SPAWN_FAILED');
    await expectCode(() => s.service.start('true', { directory: '/etc' }), 'INVALID_DIRECTORY');
    expect(s.service.projectRoot).toBe(s.root);
  });
});
