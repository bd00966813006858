// The e2b npm SDK (a devDependency, the version E2B publishes) against the daemon's
// envd face, in the SDK's debug mode: the calls the envd face serves, each checked by what the
// SDK returns, and by the job's own effects where the SDK's word is not enough.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AuthenticationError,
  type CommandHandle,
  CommandExitError,
  FileNotFoundError,
  type FilesystemEvent,
  FilesystemEventType,
  InvalidArgumentError,
  Sandbox,
  TimeoutError,
} from 'e2b';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive } from '../helpers';
import { eventuallyAsync, stopDaemons } from '../daemon/setup';
import { portFree, startFace, type Face } from './sdk-setup';

let face: Face;
let sandbox: Sandbox;

beforeAll(async () => {
  face = await startFace();
  sandbox = await Sandbox.create({ debug: true, sandboxUrl: face.url });
}, 90_000);
afterAll(async () => {
  await stopDaemons();
});

describe("the SDK's own default address", () => {
  // Debug mode's default, http://localhost:49983, with nothing set: what a user who only
  // writes `Sandbox.create({ debug: true })` reaches. Skipped, saying so, when something
  // else holds that port on this machine (every other case runs on a port of its own).
  it('Sandbox.create({ debug: true }) with no URL reaches a daemon listening on 127.0.0.1:49983', async (ctx) => {
    if (process.env.E2B_SANDBOX_URL || !(await portFree(49983))) {
      ctx.skip('port 49983 is taken here (or E2B_SANDBOX_URL is set)');
      return;
    }
    await startFace({ port: 49983 });
    const plain = await Sandbox.create({ debug: true });
    const r = await plain.commands.run('echo at-the-default');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'at-the-default\n' });
  });
});

describe('commands', () => {
  it('run: stdout, stderr and the exit code; a failing command is CommandExitError', async () => {
    const ok = await sandbox.commands.run('echo out; echo err >&2');
    expect(ok).toMatchObject({ exitCode: 0, stdout: 'out\n', stderr: 'err\n' });

    const failed = await sandbox.commands.run('echo partial; echo bad >&2; exit 3').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CommandExitError);
    const err = failed as CommandExitError;
    expect([err.exitCode, err.stdout, err.stderr]).toEqual([3, 'partial\n', 'bad\n']);
  });

  it('a `user` (Authorization: Basic) is accepted and ignored: the daemon acts as its own user', async () => {
    const me = String(process.getuid?.());
    expect((await sandbox.commands.run('id -u', { user: 'root' })).stdout).toBe(`${me}\n`);
    expect((await sandbox.commands.run('id -u', { user: 'user' })).stdout).toBe(`${me}\n`);
    const path = join(face.project, 'as-user.txt');
    await sandbox.files.write(path, 'u', { user: 'user' });
    expect(await sandbox.files.read(path, { user: 'root' })).toBe('u');
  });

  it('run: cwd and envs, and callbacks see the output as it comes', async () => {
    const dir = join(face.project, 'sub');
    execFileSync('mkdir', ['-p', dir]);
    const seen: string[] = [];
    const r = await sandbox.commands.run('pwd; echo "$GREETING $OTHER"', {
      cwd: dir,
      envs: { GREETING: 'hello', OTHER: 'world' },
      onStdout: (d) => void seen.push(d),
    });
    expect(r.stdout).toBe(`${dir}\nhello world\n`);
    expect(seen.join('')).toBe(r.stdout);
    // Without cwd the command starts in the project root the daemon was given; a cwd
    // outside it is refused (the core's rule: docs/remote.md).
    expect((await sandbox.commands.run('pwd')).stdout).toBe(`${face.project}\n`);
    await expect(sandbox.commands.run('pwd', { cwd: face.base })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('a background command is listed, re-attached from a second process after the first exited, fed, and killed', async () => {
    const script = join(__dirname, 'fixtures', 'e2b-start.mjs');
    const cmd = 'echo ready; while read -r line; do echo "got:$line"; done';
    const first = execFileSync(process.execPath, [script, face.url, cmd], { encoding: 'utf8', timeout: 60_000 });
    const { pid } = JSON.parse(first) as { pid: number };
    expect(alive(pid)).toBe(true);

    // This process is the second SDK client: the first is gone, the command runs on.
    const listed = await sandbox.commands.list();
    const mine = listed.find((p) => p.pid === pid);
    expect(mine).toMatchObject({ cmd: '/bin/bash', args: ['-l', '-c', cmd] });

    let out = '';
    const handle = await sandbox.commands.connect(pid, { onStdout: (d) => void (out += d) });
    expect(handle.pid).toBe(pid);
    await sandbox.commands.sendStdin(pid, 'one\n');
    expect(await eventuallyAsync(() => out.includes('got:one'))).toBe(true);
    await handle.sendStdin('two\n');
    expect(await eventuallyAsync(() => out.includes('got:two'))).toBe(true);

    expect(await sandbox.commands.kill(pid)).toBe(true);
    // Killed: envd's end event says exit code -1 (a signal), which wait() throws.
    const ended = await handle.wait().catch((e: unknown) => e);
    expect(ended).toMatchObject({ exitCode: -1 });
    expect(ended).toBeInstanceOf(CommandExitError);
    expect(await eventuallyAsync(() => !alive(pid))).toBe(true);
    expect(await eventuallyAsync(async () => !(await sandbox.commands.list()).some((p) => p.pid === pid))).toBe(true);
    // An ended job: kill says false (not found). Connect to it is answered with its end
    // at once (envd answers not_found: its ended processes are gone), never a hang.
    expect(await sandbox.commands.kill(pid)).toBe(false);
    const late = await sandbox.commands.connect(pid).catch((e: unknown) => e);
    if (!(late instanceof Error)) await expect((late as CommandHandle).wait()).rejects.toBeInstanceOf(CommandExitError);
    // A pid no job ever had: not found.
    expect(await sandbox.commands.kill(2 ** 31 - 2)).toBe(false);
    await expect(sandbox.commands.connect(2 ** 31 - 2)).rejects.toThrow(/not.found/i);
  });
});

describe('pty', () => {
  it('create, sendInput and resize (stty size shows the new size), kill', async () => {
    let screen = '';
    const decoder = new TextDecoder();
    const pty = await sandbox.pty.create({ cols: 80, rows: 24, onData: (d) => void (screen += decoder.decode(d, { stream: true })) });
    const send = (text: string) => sandbox.pty.sendInput(pty.pid, new TextEncoder().encode(text));
    await send('stty size; echo "term=$TERM"\n');
    expect(await eventuallyAsync(() => /24 80/.test(screen) && screen.includes('term=xterm-256color'))).toBe(true);

    await sandbox.pty.resize(pty.pid, { cols: 100, rows: 30 });
    await send('stty size\n');
    expect(await eventuallyAsync(() => /30 100/.test(screen))).toBe(true);

    expect(await sandbox.pty.kill(pty.pid)).toBe(true);
    await pty.wait().catch(() => undefined);
    expect(await eventuallyAsync(() => !alive(pty.pid))).toBe(true);
  });
});

describe('files', () => {
  it('write, read (text and bytes), list, exists, makeDir; a missing file is FileNotFoundError', async () => {
    const dir = join(face.base, 'files');
    const path = join(dir, 'nested', 'a.txt');
    const info = await sandbox.files.write(path, 'hello files\n');
    expect(info).toMatchObject({ name: 'a.txt', path, type: 'file' });
    expect(readFileSync(path, 'utf8')).toBe('hello files\n');
    expect(await sandbox.files.read(path)).toBe('hello files\n');

    const bytes = new Uint8Array([0, 1, 2, 255, 10, 13]);
    await sandbox.files.write(join(dir, 'b.bin'), bytes.buffer);
    expect(Array.from(await sandbox.files.read(join(dir, 'b.bin'), { format: 'bytes' }))).toEqual(Array.from(bytes));

    // Several files in one request; a relative path is under the project root.
    const many = await sandbox.files.write([
      { path: join(dir, 'c.txt'), data: 'c' },
      { path: 'rel.txt', data: 'r' },
    ]);
    expect(many.map((w) => w.path)).toEqual([join(dir, 'c.txt'), join(face.project, 'rel.txt')]);
    expect(readFileSync(join(face.project, 'rel.txt'), 'utf8')).toBe('r');

    const listed = await sandbox.files.list(dir);
    expect(listed.map((e) => [e.name, e.type])).toEqual([
      ['b.bin', 'file'],
      ['c.txt', 'file'],
      ['nested', 'dir'],
    ]);
    expect(listed[0]).toMatchObject({ size: 6, path: join(dir, 'b.bin') });
    expect((await sandbox.files.list(dir, { depth: 2 })).map((e) => e.name)).toContain('a.txt');

    expect(await sandbox.files.exists(path)).toBe(true);
    expect(await sandbox.files.exists(join(dir, 'none'))).toBe(false);
    expect(await sandbox.files.makeDir(join(dir, 'made'))).toBe(true);
    expect(await sandbox.files.makeDir(join(dir, 'made'))).toBe(false);
    expect(existsSync(join(dir, 'made'))).toBe(true);

    // The raw upload (application/octet-stream, streamed to disk), and gzip-encoded.
    await sandbox.files.write(join(dir, 'raw.txt'), 'raw body', { useOctetStream: true });
    expect(readFileSync(join(dir, 'raw.txt'), 'utf8')).toBe('raw body');
    await sandbox.files.write(join(dir, 'gz.txt'), 'gzipped '.repeat(1000), { gzip: true });
    expect(readFileSync(join(dir, 'gz.txt'), 'utf8')).toBe('gzipped '.repeat(1000));

    const moved = await sandbox.files.rename(join(dir, 'c.txt'), join(dir, 'moved', 'c2.txt'));
    expect(moved).toMatchObject({ name: 'c2.txt', type: 'file', path: join(dir, 'moved', 'c2.txt') });
    expect(await sandbox.files.getInfo(join(dir, 'moved', 'c2.txt'))).toMatchObject({ size: 1, type: 'file' });
    await sandbox.files.remove(join(dir, 'moved'));
    expect(existsSync(join(dir, 'moved'))).toBe(false);

    await expect(sandbox.files.read(join(dir, 'none'))).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.list(join(dir, 'none'))).rejects.toBeInstanceOf(FileNotFoundError);
    writeFileSync(join(dir, 'empty'), '');
    expect(await sandbox.files.read(join(dir, 'empty'))).toBe('');
  });
});

describe('as envd answers', () => {
  it('a symlink is described by its target; permissions as Go writes them; removing nothing succeeds', async () => {
    const dir = join(face.base, 'envd-entries');
    mkdirSync(dir);
    writeFileSync(join(dir, 'f.txt'), 'abc', { mode: 0o640 });
    symlinkSync('f.txt', join(dir, 'link'));
    const info = await sandbox.files.getInfo(join(dir, 'link'));
    expect(info).toMatchObject({ name: 'link', type: 'file', mode: 0o640, permissions: 'Lrwxrwxrwx', symlinkTarget: join(dir, 'f.txt') });
    expect(await sandbox.files.getInfo(join(dir, 'f.txt'))).toMatchObject({ permissions: '-rw-r-----', size: 3 });
    await expect(sandbox.files.remove(join(dir, 'never-there'))).resolves.toBeUndefined();
  });

  it('metadata given to write is kept and listed', async () => {
    const path = join(face.base, 'with-metadata.txt');
    const written = await sandbox.files.write(path, 'm', { metadata: { owner: 'alice', stage: 'draft' } });
    expect(written.metadata).toEqual({ owner: 'alice', stage: 'draft' });
    expect((await sandbox.files.getInfo(path)).metadata).toEqual({ owner: 'alice', stage: 'draft' });
  });

  it('watchDir reports what is done in the directory, with entries when asked', async () => {
    const dir = join(face.base, 'watched');
    mkdirSync(dir);
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir(dir, (e) => void events.push(e), { recursive: true, includeEntry: true });
    mkdirSync(join(dir, 'sub'));
    await sandbox.files.write(join(dir, 'sub', 'new.txt'), 'hi');
    expect(
      await eventuallyAsync(() => events.some((e) => e.name === 'sub/new.txt' && e.type === FilesystemEventType.WRITE)),
    ).toBe(true);
    const created = events.find((e) => e.name === 'sub');
    expect(created).toMatchObject({ type: FilesystemEventType.CREATE, entry: { type: 'dir', path: join(dir, 'sub') } });
    await handle.stop();
  });

  it('a command past its timeoutMs is TimeoutError, as envd ends it (deadline_exceeded)', async () => {
    const handle = await sandbox.commands.run('sleep 30', { background: true, timeoutMs: 1500 });
    await expect(handle.wait()).rejects.toBeInstanceOf(TimeoutError);
    expect(await eventuallyAsync(() => !alive(handle.pid))).toBe(true);
  });
});

describe('with an access token (--access-token-file)', () => {
  it('an SDK that sends it (X-Access-Token) is served; one without it gets AuthenticationError on every call', async () => {
    const token = 'e2b-test-token-7c1f';
    const guarded = await startFace({ token });
    // Debug mode never sends a token; the SDK's own constructor (what Sandbox.connect
    // builds from the control plane's answer) takes one, as a deployment behind a
    // control plane would. envdVersion 0.6.4 is the highest the SDK gates a path on
    // (docs/remote.md): every path the debug mode's 99.99.99 takes is on.
    const Construct = Sandbox as unknown as new (opts: Record<string, unknown>) => Sandbox;
    const authorized = new Construct({ sandboxId: 'pod', envdVersion: '0.6.4', envdAccessToken: token, debug: true, sandboxUrl: guarded.url });
    expect((await authorized.commands.run('echo ok')).stdout).toBe('ok\n');
    const path = join(guarded.project, 't.txt');
    await authorized.files.write(path, 'guarded', { metadata: { k: 'v' } });
    expect(await authorized.files.read(path)).toBe('guarded');
    expect((await authorized.files.getInfo(path)).metadata).toEqual({ k: 'v' });
    expect((await authorized.files.list(guarded.project)).map((e) => e.name)).toContain('t.txt');

    const anonymous = await Sandbox.create({ debug: true, sandboxUrl: guarded.url });
    await expect(anonymous.commands.run('echo no')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(anonymous.commands.list()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(anonymous.files.read(path)).rejects.toBeInstanceOf(AuthenticationError);
    await expect(anonymous.files.write(path, 'x')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(anonymous.files.list(guarded.project)).rejects.toBeInstanceOf(AuthenticationError);
    expect(readFileSync(path, 'utf8')).toBe('guarded');
  });
});
