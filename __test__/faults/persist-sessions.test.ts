// Retention under faults: services of other processes share one ioDir (two CLI windows
// on `~/.gemini/io`), one of them crashed; and a long session. Pruning must never touch
// a live service's folders, must clear what a dead one left, and a service must keep at
// most 100 finished job folders of its own however many commands it runs.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { eventually, ShellExecutionService, type Service } from '../helpers';
import { namedFile, readAll } from './persist-helpers';

const require = createRequire(import.meta.url);
const ADDON = require.resolve('../../index.js');
/** The default number of finished job folders kept (README.md, "Output on disk"). */
const KEEP = 100;

interface Place {
  base: string;
  root: string;
  ioDir: string;
}

let p: Place;
const services: Service[] = [];

beforeEach(() => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-faults-')));
  p = { base, root: join(base, 'project'), ioDir: join(base, 'io') };
  mkdirSync(p.root);
});

afterEach(async () => {
  for (const s of services.splice(0)) await s.shutdown();
  rmSync(p.base, { recursive: true, force: true });
});

function service(sessionId: string): Service {
  const s = new ShellExecutionService({ projectRoot: p.root, ioDir: p.ioDir, sessionId });
  services.push(s);
  return s;
}

/** The job folders (not files such as a lock, nor the hidden spare folders a service
 * keeps to reuse, `src/output/spare_dir.rs`) in a session's folder. */
function jobDirs(session: string): string[] {
  const dir = join(p.ioDir, session);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name);
}

/** Runs `script` (CommonJS, `addon` and `options` in scope) in a second Node process. */
function node(script: string, options: object): { done: Promise<number | null>; kill(): void; line(text: string): Promise<void> } {
  const source = `const addon = require(${JSON.stringify(ADDON)}); const options = ${JSON.stringify(options)};\n(async () => {\n${script}\n})().catch((e) => { console.error(e); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const waiting: Array<[string, () => void]> = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const [text, resolve] of waiting) if (out.includes(text)) resolve();
  });
  return {
    done: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    kill: () => child.kill('SIGKILL'),
    line: (text) =>
      new Promise((resolve, reject) => {
        if (out.includes(text)) return resolve();
        waiting.push([text, resolve]);
        child.on('exit', () => (out.includes(text) ? resolve() : reject(new Error(`no ${JSON.stringify(text)} before exit: ${out}`))));
      }),
  };
}

/** Folders a service of an older session left: each a finished job with its info.json. */
function plantDeadSession(session: string, count: number): void {
  for (let h = 1; h <= count; h++) {
    const dir = join(p.ioDir, session, String(h));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'stdout.txt'), `old ${h}\n`, { mode: 0o600 });
    const info = { handle: h, pid: 1, command: 'old', status: 'exited', exitCode: 0 };
    writeFileSync(join(dir, 'info.json'), JSON.stringify(info), { mode: 0o600 });
  }
}

describe('services of two processes on one ioDir', () => {
  it("a second service's start-up pruning spares the first's running and finished folders, and clears a crashed one's", async () => {
    // Window A: finished jobs and a running one, paused half-way through its output.
    const a = service('window-a');
    for (let i = 0; i < 3; i++) expect((await a.run(`echo finished ${i}`)).exitCode).toBe(0);
    const half = 20_000;
    const line = (n: number) => String(n).padStart(99, '0');
    const { handle } = a.start(`seq -f '%099g' 1 ${half}; echo PAUSED; read x; seq -f '%099g' ${half + 1} ${2 * half}`, { mode: 'pipes' });
    expect((await a.waitFor(handle, { pattern: 'PAUSED', fromStart: true, timeoutMs: 120_000 })).status).toBe('matched');
    const running = a.getResult(handle).outputDir!;
    // Its info.json is written ~20 ms after the start, on the runtime.
    expect(await eventually(() => existsSync(join(running, 'info.json')), 30_000)).toBe(true);
    const aFolders = jobDirs('window-a').sort();
    expect(aFolders).toHaveLength(4);

    // A window that crashed (SIGKILL) while its job ran: a dead session.
    const crashed = node(
      `const s = new addon.ShellExecutionService(options);
       await s.run('echo crashed');
       const { handle } = s.start('echo up; sleep 1000');
       // Output is read only once the job's folder is made.
       await s.waitFor(handle, { pattern: 'up', fromStart: true, detectInput: false });
       console.log('ready');
       await new Promise(() => {});`,
      { projectRoot: p.root, ioDir: p.ioDir, sessionId: 'crashed' },
    );
    await crashed.line('ready');
    crashed.kill();
    await crashed.done;
    expect(jobDirs('crashed')).toHaveLength(2);

    // Older sessions' folders, written after all of the above: newer than A's. With A's
    // and the crashed window's, more than the 100 kept.
    plantDeadSession('old', KEEP + 20);

    // Window B starts in another process; its start-up pruning runs off its JS thread.
    const b = node(
      `const s = new addon.ShellExecutionService(options);
       const fs = require('node:fs');
       const count = () => fs.readdirSync(options.ioDir + '/old').length;
       const crashed = () => fs.existsSync(options.ioDir + '/crashed');
       const deadline = Date.now() + 60000;
       while ((count() > ${KEEP} || crashed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
       // A pass that removed too much would go on past these: give it time to.
       await new Promise((r) => setTimeout(r, 500));
       console.log('pruned ' + count());
       await s.shutdown();`,
      { projectRoot: p.root, ioDir: p.ioDir, sessionId: 'window-b' },
    );
    await b.line('pruned');
    expect(await b.done).toBe(0);

    // Nothing of the live window A was touched; the dead sessions were cut to 100, the
    // crashed window's folders (the oldest) among those removed.
    expect(jobDirs('window-a').sort()).toEqual(aFolders);
    expect(jobDirs('old')).toHaveLength(KEEP);
    expect(existsSync(join(p.ioDir, 'crashed'))).toBe(false);

    // A's job goes on; its whole output is read back, the middle from its file.
    a.writeToPty(handle, 'go\n');
    expect((await a.waitFor(handle, { timeoutMs: 120_000 })).status).toBe('exited');
    const r = a.getResult(handle);
    expect(r.persistError).toBeNull();
    const end = 2 * half * 100 + 'PAUSED\n'.length;
    const all = readAll(a, handle, end);
    expect(all.omitted).toBe(0);
    expect(all.text.endsWith(`${line(2 * half)}\n`)).toBe(true);
    const named = namedFile(r.output);
    expect(named?.path).toBe(join(running, 'stdout.txt'));
    expect(named?.size).toBe(end);
    expect(readFileSync(named!.path, 'utf8')).toBe(all.text);
  });
});

describe('a long session', () => {
  it(`keeps at most ${KEEP} finished job folders of its own, the newest, while it runs`, async () => {
    const s = service('long');
    // The first job's output overflows memory: its reads need its file, which goes.
    const big = await s.run(`seq -f '%099g' 1 30000`, { mode: 'pipes' });
    expect(big.truncated).toBe(true);
    const total = 250;
    let last = 0;
    for (let i = 1; i < total; i++) {
      const r = await s.run(`echo ${i}`, { mode: i % 2 ? 'pipes' : 'pty' });
      expect(r.exitCode).toBe(0);
      last = r.handle;
    }
    // Each folder goes as its job finishes, on the blocking pool: soon after the last.
    expect(await eventually(() => jobDirs('long').length <= KEEP, 30_000)).toBe(true);
    const dirs = jobDirs('long');
    expect(dirs).toHaveLength(KEEP);
    expect(dirs).toContain(String(last));
    expect(dirs).not.toContain(String(big.handle));
    // The first job's answers no longer lean on its folder (if it is still kept in memory).
    let r;
    try {
      r = s.getResult(big.handle);
    } catch (e) {
      expect((e as { code?: string }).code).toBe('PROCESS_NOT_FOUND');
      return;
    }
    expect(namedFile(r.output)).toBeNull();
    const all = readAll(s, big.handle, 30_000 * 100);
    expect(all.text.length + all.omitted).toBe(30_000 * 100);
    expect(all.omitted).toBeGreaterThan(0);
    expect(statSync(p.ioDir).isDirectory()).toBe(true);
  });
});
