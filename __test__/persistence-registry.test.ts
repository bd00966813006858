// Persistence on disk, retention, and the handle registry.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, expectCode, type Scratch, scratch, ShellExecutionService } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch({ maxJobs: 3 });
});
afterAll(() => s.cleanup());

const mode = (path: string) => statSync(path).mode & 0o777;

describe('persistence', () => {
  it('streams output to private files while the job runs, and keeps info.json current', async () => {
    const r = await s.service.run('echo first; sleep 30', { callbackPattern: 'first', mode: 'pipes' });
    expect(r.status).toBe('running');
    const dir = r.outputDir!;
    expect(readFileSync(join(dir, 'stdout.txt'), 'utf8')).toBe('first\n');
    expect(existsSync(join(dir, 'stderr.txt'))).toBe(true);
    const running = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8'));
    expect(running).toMatchObject({ handle: r.handle, pid: r.pid, status: 'running', command: 'echo first; sleep 30' });
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(s.ioDir, 'test'))).toBe(0o700);
    expect(mode(join(dir, 'stdout.txt'))).toBe(0o600);
    expect(mode(join(dir, 'info.json'))).toBe(0o600);
    await s.service.kill(r.handle);
    const ended = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8'));
    expect(ended).toMatchObject({ status: 'killed', signal: 15, exitCode: null });
    expect(ended.endTime).toBeGreaterThanOrEqual(ended.startTime);
    expect(Object.keys(ended).sort()).toEqual(
      ['args', 'command', 'description', 'directory', 'endTime', 'error', 'exitCode', 'handle', 'mode', 'persistError', 'pid', 'signal', 'startTime', 'status'].sort(),
    );
    expect(ended.persistError).toBeNull();
  });

  it('a job that ends at once gets one info.json, written at its exit, and nothing else', async () => {
    const r = await s.service.run('echo quick');
    expect(r.status).toBe('exited');
    expect(readdirSync(r.outputDir!).sort()).toEqual(['info.json', 'stdout.txt']);
    expect(JSON.parse(readFileSync(join(r.outputDir!, 'info.json'), 'utf8'))).toMatchObject({ status: 'exited', exitCode: 0 });
  });

  it('a job started in the background gets its running info.json shortly, replaced at its exit', async () => {
    const handle = s.service.start('sleep 0.5').handle;
    const dir = join(s.ioDir, 'test', String(handle));
    const info = () => (existsSync(join(dir, 'info.json')) ? JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')) : null);
    expect(await eventually(() => info()?.status === 'running')).toBe(true);
    expect(info()).toMatchObject({ handle, status: 'running', endTime: null });
    await s.service.waitFor(handle, { timeoutMs: 10_000 });
    expect(await eventually(() => info()?.status === 'exited')).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['info.json', 'stdout.txt']);
  });

  it('persistOutput: false writes nothing', async () => {
    const quiet = scratch({ persistOutput: false });
    const r = await quiet.service.run('echo hi');
    expect(r.outputDir).toBeNull();
    expect(existsSync(quiet.ioDir)).toBe(false);
    await quiet.cleanup();
  });

  it('keeps only the newest 100 job directories at start-up, and nothing foreign is touched', async () => {
    const io = join(s.root, 'retention-io');
    for (let i = 0; i < 110; i += 1) {
      const dir = join(io, `old${i % 3}`, String(i));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'info.json'), '{}');
    }
    mkdirSync(join(io, 'not-ours', 'x'), { recursive: true });
    const svc = new ShellExecutionService({ projectRoot: s.root, ioDir: io, sessionId: 'fresh' });
    const count = () =>
      readdirSync(io)
        .filter((d) => d.startsWith('old'))
        .reduce((n, d) => n + readdirSync(join(io, d)).length, 0);
    expect(await eventually(() => count() === 100)).toBe(true);
    expect(existsSync(join(io, 'not-ours', 'x'))).toBe(true);
    await svc.shutdown();
  });

  it('a project root that is missing or a file is INVALID_DIRECTORY at construction', () => {
    writeFileSync(join(s.root, 'a-file'), 'x');
    for (const projectRoot of [join(s.root, 'a-file'), join(s.root, 'missing')]) {
      expect(() => new ShellExecutionService({ projectRoot })).toThrow(expect.objectContaining({ code: 'INVALID_DIRECTORY' }));
    }
  });

  it('sessionId cannot steer a path outside ioDir', () => {
    for (const sessionId of ['../x', 'a/b', '', '.', 'x\0y', 'a'.repeat(200)]) {
      expect(() => new ShellExecutionService({ projectRoot: s.root, sessionId })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
  });
});

describe('registry', () => {
  it('hands out 1, 2, 3 … never reused, never the pid', async () => {
    const fresh = scratch();
    const a = await fresh.service.run('true');
    const b = await fresh.service.run('true');
    fresh.service.removeProcess(a.handle);
    const c = await fresh.service.run('true');
    expect([a.handle, b.handle, c.handle]).toEqual([1, 2, 3]);
    expect(c.handle).not.toBe(c.pid);
    await fresh.cleanup();
  });

  it('lists running and finished jobs until removed', async () => {
    const r = await s.service.run('echo ready; sleep 30', { callbackPattern: 'ready', description: 'sleeper' });
    const done = await s.service.run('echo last line here');
    const list = s.service.getActiveProcesses();
    const running = list.find((p) => p.handle === r.handle)!;
    expect(running).toMatchObject({ status: 'running', description: 'sleeper', mode: 'pty', directory: '.', lastLine: 'ready' });
    expect(running.pid).toBe(r.pid);
    expect(running.exitCode).toBeNull();
    const finished = list.find((p) => p.handle === done.handle)!;
    expect(finished).toMatchObject({ status: 'exited', exitCode: 0, lastLine: 'last line here' });
    expect(s.service.isPtyActive(r.handle)).toBe(true);
    expect(s.service.isPtyActive(done.handle)).toBe(false);
    expect(s.service.isPtyActive(9999)).toBe(false);
    s.service.removeProcess(done.handle);
    expect(s.service.getActiveProcesses().some((p) => p.handle === done.handle)).toBe(false);
    // Removing a running job kills it first.
    s.service.removeProcess(r.handle);
    expect(await eventually(() => !alive(r.pid!))).toBe(true);
    expect(() => s.service.getProcessOutput(r.handle)).toThrow(expect.objectContaining({ code: 'PROCESS_NOT_FOUND' }));
    expect(() => s.service.removeProcess(r.handle)).toThrow(expect.objectContaining({ code: 'PROCESS_NOT_FOUND' }));
  });

  it('refuses a job beyond maxJobs with LIMIT_REACHED', async () => {
    const handles: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const r = await s.service.run('sleep 30', { callbackDelayMs: 0 });
      handles.push(r.handle);
    }
    await expectCode(s.service.run('true'), 'LIMIT_REACHED');
    await s.service.kill(handles[0]);
    const ok = await s.service.run('true');
    expect(ok.exitCode).toBe(0);
    for (const h of handles) await s.service.kill(h);
  });
});
