// Everything a caller can grow is bounded: queued input, finished jobs, terminals;
// malformed options are coded errors (docs/reliability.md, "Bounds").
import { afterEach, describe, expect, it } from 'vitest';

import { eventually, expectCode, ptyMasterIndexes, scratch, type Scratch } from '../helpers.js';

const MiB = 2 ** 20;
let ctx: Scratch | undefined;
afterEach(async () => {
  await ctx?.cleanup();
  ctx = undefined;
});

describe('queued input', () => {
  for (const mode of ['pty', 'pipes'] as const) {
    it(`writeToPty into a ${mode} job that never reads stops at the bound with LIMIT_REACHED`, async () => {
      ctx = scratch();
      const job = await ctx.service.run('sleep 1000', { mode, callbackDelayMs: 0 });
      const chunk = Buffer.alloc(MiB, 'x');
      let accepted = 0;
      let refusal: (Error & { code?: string }) | undefined;
      // Before: no bound (1.2 GB RSS after 1,200 writes).
      for (let i = 0; i < 64 && !refusal; i++) {
        try {
          ctx.service.writeToPty(job.handle, chunk);
          accepted += chunk.length;
        } catch (e) {
          refusal = e as Error & { code?: string };
        }
      }
      expect(refusal?.code).toBe('LIMIT_REACHED');
      expect(refusal?.message).toMatch(/input queue is full/);
      expect(accepted).toBeLessThanOrEqual(17 * MiB);
      await expectCode(ctx.service.sendInput(job.handle, 'x'.repeat(MiB)), 'LIMIT_REACHED');
      await ctx.service.kill(job.handle, { graceMs: 0 });
    });
  }

  it('a sendInput that waited for its turn while the queue filled is refused with LIMIT_REACHED', async () => {
    ctx = scratch();
    const job = await ctx.service.run('sleep 1000', { callbackDelayMs: 0 });
    // The first holds the job's turn until its timeout; the second waits for it.
    const first = ctx.service.sendInput(job.handle, 'a', { pattern: 'never', timeoutMs: 2000, detectInput: false });
    const second = ctx.service.sendInput(job.handle, 'b', { timeoutMs: 2000, detectInput: false });
    let refused = false;
    for (let i = 0; i < 64 && !refused; i++) {
      try {
        ctx.service.writeToPty(job.handle, Buffer.alloc(MiB, 'z'));
      } catch {
        refused = true;
      }
    }
    expect(refused).toBe(true);
    expect((await first).status).toBe('timed_out');
    // Before: its input was dropped without a word and it resolved as if written.
    await expectCode(second, 'LIMIT_REACHED');
    await ctx.service.kill(job.handle, { graceMs: 0 });
  });

  it('kill drops the queue and lets the terminal go', async () => {
    ctx = scratch();
    // The job's own terminal, told by its number: a count of all masters would also
    // see an earlier test's terminals close meanwhile, and the one this service opens
    // ahead for its next job (src/platform/unix/pty.rs, SparePty).
    const job = await ctx.service.run('tty; exec sleep 1000', { callbackPattern: '/dev/pts/\\d+' });
    const pts = Number(/\d+$/.exec(job.matched ?? '')?.[0]);
    expect(ptyMasterIndexes()).toContain(pts);
    for (let i = 0; i < 8; i++) ctx.service.writeToPty(job.handle, Buffer.alloc(MiB, 'y'));
    const killed = await ctx.service.kill(job.handle, { graceMs: 0 });
    expect(killed.status).toBe('killed');
    ctx.service.removeProcess(job.handle);
    // Before: the writer fed the dead terminal for about a minute, holding it open.
    expect(await eventually(() => !ptyMasterIndexes().includes(pts), 5000)).toBe(true);
  });
});

describe('finished jobs kept in memory', () => {
  it('only the newest keepFinishedJobs stay; older ones are in the history', async () => {
    ctx = scratch({ keepFinishedJobs: 5 });
    const handles: number[] = [];
    for (let i = 0; i < 12; i++) handles.push((await ctx.service.run(`echo ${i}`, { mode: i % 2 ? 'pipes' : 'pty' })).handle);
    // The 12th run evicted down to 5 finished jobs plus itself at its start.
    const listed = ctx.service.getActiveProcesses().map((p) => p.handle);
    expect(listed.length).toBeLessThanOrEqual(6);
    expect(listed).toContain(handles[11]);
    expect(listed).not.toContain(handles[0]);
    expect(() => ctx!.service.getResult(handles[0]!)).toThrow(expect.objectContaining({ code: 'PROCESS_NOT_FOUND' }));
    expect(ctx.service.getExecutionHistory().map((h) => h.handle)).toContain(handles[0]);
  });

  it('a running job is never evicted', async () => {
    ctx = scratch({ keepFinishedJobs: 1 });
    const cat = await ctx.service.run('cat', { callbackDelayMs: 0 });
    for (let i = 0; i < 4; i++) await ctx.service.run('true');
    expect(ctx.service.getActiveProcesses().map((p) => p.handle)).toContain(cat.handle);
    await ctx.service.kill(cat.handle);
  });
});

describe('terminal size budget', () => {
  it('cols × rows and cols × scrollback beyond the budget are INVALID_ARGUMENT', async () => {
    ctx = scratch();
    // Before: accepted, +529 MB for the screen alone.
    await expectCode(ctx.service.run('true', { cols: 4096, rows: 4096 }), 'INVALID_ARGUMENT');
    await expectCode(ctx.service.run('true', { cols: 4096, rows: 24, scrollback: 100_000 }), 'INVALID_ARGUMENT');
    expect((await ctx.service.run('true', { cols: 80, rows: 24, scrollback: 100_000 })).status).toBe('exited');
    expect((await ctx.service.run('true', { cols: 1024, rows: 1024 })).status).toBe('exited');
    const job = await ctx.service.run('sleep 1000', { cols: 80, rows: 24, scrollback: 100_000, callbackDelayMs: 0 });
    expect(() => ctx!.service.resizePty(job.handle, 200, 24)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    ctx.service.resizePty(job.handle, 80, 50);
    await ctx.service.kill(job.handle);
  });
});

describe('malformed env', () => {
  const bad: Array<[string, unknown]> = [
    ['a number', 5],
    ['a string', 'A=1'],
    ['an array', ['A=1']],
    ['a Map', new Map([['A', '1']])],
    ['a non-string value', { A: 1 }],
  ];
  for (const [what, env] of bad) {
    it(`env as ${what} is INVALID_ARGUMENT, in the constructor and in run`, async () => {
      ctx = scratch();
      const { ShellExecutionService } = await import('../helpers.js');
      // Before: silently ignored (a string, number, array or Map) or napi's StringExpected.
      expect(() => new ShellExecutionService({ ioDir: ctx!.ioDir, projectRoot: ctx!.root, env: env as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
      await expectCode(ctx.service.run('true', { env: env as never }), 'INVALID_ARGUMENT');
    });
  }

  it('env null is no variables', async () => {
    ctx = scratch();
    const r = await ctx.service.run('echo "[$NSS_NOT_SET]"', { env: null });
    expect(r.output).toContain('[]');
    const nullProto = Object.assign(Object.create(null), { NSS_X: 'y' }) as Record<string, string>;
    expect((await ctx.service.run('echo "$NSS_X"', { env: nullProto })).output).toContain('y');
    // A plain object of another realm (a vm context, as test runners make) is plain too.
    const { runInNewContext } = await import('node:vm');
    const foreign = runInNewContext('({ NSS_Y: "z" })') as Record<string, string>;
    expect((await ctx.service.run('echo "$NSS_Y"', { env: foreign })).output).toContain('z');
  });
});

describe('malformed options', () => {
  // Before: a number, a string or an array read as "no options": `run('make', 42)` ran
  // with every default and said nothing.
  const bad: Array<[string, unknown]> = [
    ['a number', 42],
    ['a string', 'pipes'],
    ['a boolean', true],
    ['an array', [{ mode: 'pipes' }]],
  ];
  for (const [what, options] of bad) {
    it(`options as ${what} are INVALID_ARGUMENT in every method that takes them`, async () => {
      ctx = scratch();
      const { addon, ShellExecutionService } = await import('../helpers.js');
      const { checkCommand } = addon;
      const o = options as never;
      expect(() => new ShellExecutionService(o)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
      const svc = ctx.service;
      await expectCode(svc.run('true', o), 'INVALID_ARGUMENT');
      expect(() => svc.start('true', o)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
      const job = await svc.run('cat', { callbackDelayMs: 0 });
      await expectCode(svc.sendInput(job.handle, 'x', o), 'INVALID_ARGUMENT');
      await expectCode(svc.waitFor(job.handle, o), 'INVALID_ARGUMENT');
      for (const call of [
        () => svc.getResult(job.handle, o),
        () => svc.getProcessOutput(job.handle, o),
        () => svc.readOutput(job.handle, o),
        () => svc.getScreen(job.handle, o),
        () => checkCommand('ls', o),
      ]) {
        expect(call).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
      }
      await expectCode(svc.kill(job.handle, o), 'INVALID_ARGUMENT');
      // Refused before anything was done: the job still runs.
      expect(svc.isPtyActive(job.handle)).toBe(true);
      await svc.kill(job.handle);
    });
  }

  it('null and undefined options are the defaults; any object is read by its properties', async () => {
    ctx = scratch();
    expect((await ctx.service.run('echo ok', null)).output).toContain('ok');
    expect((await ctx.service.run('echo ok', undefined)).output).toContain('ok');
    class Options {
      mode = 'pipes' as const;
    }
    expect((await ctx.service.run('test -t 1 || echo piped', new Options())).output).toContain('piped');
  });
});

describe('a long session', () => {
  it('2,000 commands without removeProcess stay within 32 MiB of the starting RSS', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, realpathSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join, resolve } = await import('node:path');
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-long-')));
    try {
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', resolve(__dirname, 'fixtures/long-session.cjs'), resolve(__dirname, '../../index.js'), base, '2000'],
        { encoding: 'utf8', timeout: 600_000 },
      );
      const report = JSON.parse(out) as { grew: number; listed: number };
      // Before: 43 → 188 MiB (every finished job kept with its buffers).
      expect(report.grew).toBeLessThan(32);
      expect(report.listed).toBeLessThanOrEqual(101);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
