// Persistence faults of one service: a full disk (a 1 MiB tmpfs, mounted when the suite
// runs as root) and a job's folder or the whole ioDir removed while the job writes. The
// job, its in-memory head and tail and every wait must go on; the result must say
// what the files lack (`persistError`), never name a file that lacks it, and leave no
// `running` info.json nor temporary file behind; `readOutput` must reach the end.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { describeIf } from '../gates';
import { ShellExecutionService, type Service } from '../helpers';
import { filesNamed, namedFile, readAll, runningInfos } from './persist-helpers';

// 5,000,000 bytes of 50-byte lines, then a last line: 5 MB into a 1 MiB disk.
const LINE = '0123456789012345678901234567890123456789012345678';
const FLOOD = `yes ${LINE} | head -c 5000000`;
const FLOOD_TEXT_BYTES = 5_000_000;

interface Place {
  base: string;
  root: string;
  ioDir: string;
  service: Service;
}

function place(mountTmpfs: boolean): Place {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-faults-')));
  const root = join(base, 'project');
  const ioDir = join(base, 'io');
  mkdirSync(root);
  mkdirSync(ioDir);
  if (mountTmpfs) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', ioDir]);
  const service = new ShellExecutionService({ projectRoot: root, ioDir, sessionId: 'faults' });
  return { base, root, ioDir, service };
}

async function tearDown(p: Place | undefined, mounted: boolean): Promise<void> {
  if (!p) return;
  await p.service.shutdown();
  if (mounted) {
    try {
      execFileSync('umount', [p.ioDir]);
    } catch {
      // Still busy (a failed test left something open): detached now, gone once let go.
      execFileSync('umount', ['-l', p.ioDir]);
    }
  }
  rmSync(p.base, { recursive: true, force: true });
}

/** What must hold of every folder under ioDir after any fault. */
function nothingLeftBehind(ioDir: string): void {
  expect(filesNamed(ioDir, ['.info.json.tmp'])).toEqual([]);
  expect(runningInfos(ioDir)).toEqual([]);
}

// Mounting needs root: elsewhere these are skipped, and the reason printed.
describeIf('root')('a full disk (1 MiB tmpfs as ioDir; root only, to mount it)', () => {
  let p: Place | undefined;
  beforeEach(() => {
    p = place(true);
  });
  afterEach(async () => {
    await tearDown(p, true);
    p = undefined;
  });

  it.each(['pipes', 'pty'] as const)('a %s job printing 5 MB: persistError says ENOSPC, the marker names no short file, reads reach the end', async (mode) => {
    const s = p!.service;
    const r = await s.run(`${FLOOD}; echo END`, { mode, timeoutMs: 120_000 });
    expect([r.status, r.exitCode]).toEqual(['exited', 0]);
    // The job and its in-memory head and tail are whole.
    expect(r.output.startsWith(`${LINE}\n`)).toBe(true);
    expect(r.output.endsWith(`${LINE}\nEND\n`)).toBe(true);
    expect(r.truncated).toBe(true);
    // Every byte is read back or counted as omitted; the tail is reached.
    const end = FLOOD_TEXT_BYTES + 'END\n'.length;
    const all = readAll(s, r.handle, end);
    expect(all.text.length + all.omitted).toBe(end);
    expect(all.text.endsWith(`${LINE}\nEND\n`)).toBe(true);
    expect(all.omitted).toBeGreaterThan(0);
    // The marker names no file that lacks the output.
    expect(namedFile(r.output)).toBeNull();
    nothingLeftBehind(p!.ioDir);
    // Said out loud, in every answer about the job.
    expect(r.persistError).toMatch(/ENOSPC/);
    expect(s.getResult(r.handle).persistError).toBe(r.persistError);
    expect(s.getActiveProcesses().find((j) => j.handle === r.handle)?.persistError).toBe(r.persistError);
  });

  it('waits and input keep working on a job whose files cannot be written', async () => {
    const s = p!.service;
    const { handle } = s.start(`${FLOOD}; echo END; read x; echo "got $x"`, { mode: 'pty' });
    const seen = await s.waitFor(handle, { pattern: 'END', fromStart: true, timeoutMs: 120_000, detectInput: false });
    expect(seen.status).toBe('matched');
    const answered = await s.sendInput(handle, 'ok', { pattern: 'got ok', timeoutMs: 60_000, detectInput: false });
    expect(answered.status).toBe('matched');
    const ended = await s.waitFor(handle, { timeoutMs: 60_000, detectInput: false });
    expect(ended.status).toBe('exited');
    const r = s.getResult(handle);
    expect(namedFile(r.output)).toBeNull();
    nothingLeftBehind(p!.ioDir);
    expect(r.persistError).toMatch(/ENOSPC/);
  });
});

describe('a folder removed while its job writes', () => {
  let p: Place | undefined;
  beforeEach(() => {
    p = place(false);
  });
  afterEach(async () => {
    await tearDown(p, false);
    p = undefined;
  });

  // 3 MB, a pause, 3 MB more: the middle has left memory (head 64 KiB, tail ≤ 1 MiB),
  // so reads of it need the file that is gone.
  const HALF = 30_000;
  const LINE_BYTES = 100;
  const command = `seq -f '%0${LINE_BYTES - 1}g' 1 ${HALF}; echo PAUSED; read x; seq -f '%0${LINE_BYTES - 1}g' ${HALF + 1} ${2 * HALF}`;
  const end = 2 * HALF * LINE_BYTES + 'PAUSED\n'.length;

  it.each([
    ['the job folder', 'pty'],
    ['the whole ioDir', 'pipes'],
  ] as const)('%s removed mid-job (%s): readOutput reaches the tail, persistError says so', async (what, mode) => {
    const s = p!.service;
    const { handle } = s.start(command, { mode });
    const paused = await s.waitFor(handle, { pattern: 'PAUSED', fromStart: true, timeoutMs: 120_000, detectInput: false });
    expect(paused.status).toBe('matched');
    const dir = s.getResult(handle).outputDir!;
    rmSync(what === 'the job folder' ? dir : p!.ioDir, { recursive: true, force: true });
    s.writeToPty(handle, 'go\n');
    const ended = await s.waitFor(handle, { timeoutMs: 120_000, detectInput: false });
    expect(ended.status).toBe('exited');
    const r = s.getResult(handle);
    expect(r.exitCode).toBe(0);
    expect(r.output.endsWith(`${String(2 * HALF).padStart(LINE_BYTES - 1, '0')}\n`)).toBe(true);
    // A terminal echoes the input.
    const total = end + (mode === 'pty' ? 'go\n'.length : 0);
    const all = readAll(s, handle, total);
    expect(all.text.length + all.omitted).toBe(total);
    expect(all.omitted).toBeGreaterThan(0);
    expect(all.text.startsWith(`${'1'.padStart(LINE_BYTES - 1, '0')}\n`)).toBe(true);
    expect(all.text.endsWith(`${String(2 * HALF).padStart(LINE_BYTES - 1, '0')}\n`)).toBe(true);
    expect(namedFile(r.output)).toBeNull();
    nothingLeftBehind(p!.ioDir);
    expect(r.persistError).toMatch(/removed/);
  });
});
