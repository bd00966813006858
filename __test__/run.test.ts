// run(): shells, argv mode, modes, environment, directories, timeouts, exit codes.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, expectCode, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch({ env: { FROM_SERVICE: 'svc', OVERRIDDEN: 'svc' } });
  mkdirSync(join(s.root, 'sub', 'deeper'), { recursive: true });
});
afterAll(() => s.cleanup());

describe('run', () => {
  it('runs through bash -c and returns the full result shape', async () => {
    const r = await s.service.run('echo "$0" && echo out && exit 4', { description: 'shape' });
    expect(r.status).toBe('exited');
    expect(r.exitCode).toBe(4);
    expect(r.signal).toBeNull();
    expect(r.error).toBeNull();
    expect(r.output).toBe('bash\nout\n');
    expect(r.stdout).toBe(r.output);
    expect(r.stderr).toBe('');
    expect(r.handle).toBeGreaterThan(0);
    expect(r.pid).toBeGreaterThan(1);
    expect(r.directory).toBe('.');
    expect(r.backgroundPids).toEqual([]);
    expect(r.truncated).toBe(false);
    expect(r.totalBytes).toBeGreaterThan(0);
    expect(r.outputDir).toBe(join(s.ioDir, 'test', String(r.handle)));
    expect(r.startedAt).toBeGreaterThan(Date.now() - 60_000);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('argv mode passes $HOME, ; and * literally, with no shell', async () => {
    const r = await s.service.run('printf', { args: ['%s|', '$HOME', 'a;b', '*', '$(id)'], mode: 'pipes' });
    expect(r.stdout).toBe('$HOME|a;b|*|$(id)|');
  });

  it('PTY mode is a terminal of the asked size; pipes mode is not a terminal', async () => {
    const pty = await s.service.run('test -t 1 && echo tty; echo "$TERM"; stty size', { cols: 100, rows: 30 });
    expect(pty.output).toBe('tty\nxterm-256color\n30 100\n');
    const pipes = await s.service.run('test -t 1 && echo tty || echo notty', { mode: 'pipes' });
    expect(pipes.stdout).toBe('notty\n');
  });

  it('pipes mode keeps stderr apart and interleaves both in output', async () => {
    const r = await s.service.run('echo one; echo two >&2; echo three', { mode: 'pipes' });
    expect(r.stdout).toBe('one\nthree\n');
    expect(r.stderr).toBe('two\n');
    expect(r.output.split('\n').sort()).toEqual(['', 'one', 'three', 'two']);
  });

  it('layers the environment: inherited, service, call, then the fixed variables', async () => {
    process.env.NSS_INHERITED = 'inherited';
    const r = await s.service.run(
      'echo "$NSS_INHERITED $FROM_SERVICE $OVERRIDDEN $FROM_CALL $GEMINI_CLI $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"',
      { env: { OVERRIDDEN: 'call', FROM_CALL: 'call', GEMINI_CLI: '0' }, mode: 'pipes' },
    );
    expect(r.stdout).toBe('inherited svc call call 1 cat cat 0\n');
  });

  it('drops inherited credential prompters so git and ssh fail fast', async () => {
    process.env.GIT_ASKPASS = '/usr/bin/some-gui-askpass';
    process.env.SSH_ASKPASS = '/usr/bin/some-gui-askpass';
    const r = await s.service.run('echo "[${GIT_ASKPASS-unset}] [${SSH_ASKPASS-unset}] $GCM_INTERACTIVE"', { mode: 'pipes' });
    delete process.env.GIT_ASKPASS;
    delete process.env.SSH_ASKPASS;
    expect(r.stdout).toBe('[unset] [unset] never\n');
  });

  it('runs in a directory relative to the project root', async () => {
    const r = await s.service.run('pwd', { directory: 'sub/deeper', mode: 'pipes' });
    expect(r.stdout.trim()).toBe(join(s.root, 'sub', 'deeper'));
    expect(r.directory).toBe('sub/deeper');
  });

  it.each([
    ['an absolute path', '/tmp'],
    ['a .. escape', '..'],
    ['a nested .. escape', 'sub/../../'],
    ['a missing directory', 'missing'],
    ['a symlink out of the root', 'link-out'],
    ['a file', 'file.txt'],
  ])('refuses %s with INVALID_DIRECTORY', async (_what, directory) => {
    try {
      symlinkSync('/tmp', join(s.root, 'link-out'), 'dir');
    } catch {
      // made by an earlier row
    }
    writeFileSync(join(s.root, 'file.txt'), 'x');
    await expectCode(s.service.run('true', { directory }), 'INVALID_DIRECTORY');
  });

  it('an unknown program is a failed result, not a throw', async () => {
    const r = await s.service.run('no-such-program-xyz', { args: [] });
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/no-such-program-xyz/);
    expect(r.exitCode).toBeNull();
    const viaShell = await s.service.run('no-such-program-xyz');
    expect(viaShell.status).toBe('exited');
    expect(viaShell.exitCode).toBe(127);
    expect(viaShell.output).toMatch(/command not found/);
  });

  it('reports a signal death with a null exit code', async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      const r = await s.service.run('echo before; kill -9 $$', { mode });
      expect(r.signal).toBe(9);
      expect(r.exitCode).toBeNull();
      expect(r.output).toBe('before\n');
    }
  });

  it('timeoutMs kills the whole group and returns the output so far', async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      const r = await s.service.run('echo started; sleep 30 & echo "child $!"; wait', { mode, timeoutMs: 500 });
      expect(r.status).toBe('timed_out');
      expect(r.output).toMatch(/^started\nchild \d+\n$/);
      const child = Number(/child (\d+)/.exec(r.output)?.[1]);
      expect(await eventually(() => !alive(child))).toBe(true);
    }
  });

  it('refuses bad arguments with INVALID_ARGUMENT', async () => {
    await expectCode(s.service.run(''), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('echo\0x'), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('true', { mode: 'tty' as 'pty' }), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('true', { cols: 0 }), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('true', { timeoutMs: -1 }), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('true', { timeoutMs: Number.NaN }), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('x'.repeat(200_000)), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('true', { env: { 'A=B': 'x' } }), 'INVALID_ARGUMENT');
  });
});
