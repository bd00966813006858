// Worker threads: a worker terminated at any moment never crashes Node, and each
// environment's end ends its own jobs only (docs/reliability.md, "Worker threads").
// Each scenario runs in a node process of its own: a crash there is a failed test
// here, not a dead test runner.
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { alive, eventually } from '../helpers.js';

const addonPath = resolve(__dirname, '../../index.js');
const fixture = (name: string) => resolve(__dirname, 'fixtures', name);
const bases: string[] = [];

function scratchDir(): string {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-faults-')));
  bases.push(base);
  return base;
}

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function node(script: string, args: string[], timeoutMs: number): Promise<Ran> {
  return new Promise((done) => {
    execFile(process.execPath, [script, ...args], { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      done({
        code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
        signal: failure?.signal ?? null,
        stdout,
        stderr,
      });
    });
  });
}

afterEach(() => {
  for (const base of bases.splice(0)) rmSync(base, { recursive: true, force: true });
});

describe('worker threads', () => {
  it('a storm of 30 workers ended mid-flood with promises pending never crashes Node', async () => {
    // Before: SIGSEGV or SIGABRT in about half the runs (a runtime thread used a
    // service its worker's teardown had freed).
    const ran = await node(fixture('worker-storm.cjs'), [addonPath, scratchDir(), '30', '6'], 300_000);
    expect({ signal: ran.signal, code: ran.code, stderr: ran.stderr.slice(0, 2000) }).toEqual({
      signal: null,
      code: 0,
      stderr: '',
    });
    expect(JSON.parse(ran.stdout)).toEqual({ workers: 30, mainJob: 'running', answer: 'matched' });
  });

  for (const how of ['exit', 'terminate', 'natural']) {
    it(`a worker that made the first service ends (${how}): the main thread's job runs on, the worker's is ended`, async () => {
      // Before: the process-wide exit hook was registered on the worker's environment,
      // so the worker's end SIGKILLed the main thread's jobs too.
      const ran = await node(fixture('worker-ownership.cjs'), [addonPath, scratchDir(), 'worker-first', how], 120_000);
      expect(ran.stderr).toBe('');
      const report = JSON.parse(ran.stdout) as { mainJob: string; answer: string; workerPid: number };
      expect(report.mainJob).toBe('running');
      expect(report.answer).toBe('matched');
      expect(await eventually(() => !alive(report.workerPid), 10_000)).toBe(true);
    });
  }

  it("process.exit() on the main thread ends a worker's jobs", async () => {
    const ran = await node(fixture('worker-ownership.cjs'), [addonPath, scratchDir(), 'main-exit'], 120_000);
    const { workerPid } = JSON.parse(ran.stdout) as { workerPid: number };
    expect(workerPid).toBeGreaterThan(0);
    expect(await eventually(() => !alive(workerPid), 10_000)).toBe(true);
  });
});

describe('shutdown and runs in flight', () => {
  it('a shutdown called right after run ends that run\'s job, even if it starts later', async () => {
    // Found by the storm: the job of a `run` still starting on a runtime thread was
    // missed by a `shutdown` called after it, and kept its worker alive for ever.
    const { ShellExecutionService } = await import('../helpers.js');
    const base = scratchDir();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(base, 'p'));
    const service = new ShellExecutionService({ projectRoot: join(base, 'p'), ioDir: join(base, 'io') });
    const runs = [service.run('sleep 1000'), service.run('sleep 1000', { mode: 'pipes' })];
    await service.shutdown();
    const results = await Promise.all(runs);
    expect(results.map((r) => r.status)).toEqual(['killed', 'killed']);
    expect(service.getActiveProcesses().map((p) => p.status)).toEqual(['killed', 'killed']);
  });
});
