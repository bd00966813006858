// `npm install` on a fresh clone must leave package-lock.json as committed: the lockfile
// holds every package npm would add, the optional ones of other platforms included (a
// lockfile missing them is rewritten, by hundreds of lines, on the first install).
// Checked offline on a copy: npm resolves package.json against the lockfile alone, and a
// lockfile that lacks anything either changes or fails (the packument is not at hand).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nss-lockfile-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('package-lock.json', () => {
  it('is what npm install makes of package.json', () => {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(dir, f));
    const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['install', '--package-lock-only', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      encoding: 'utf8',
      shell: process.platform === 'win32',
      timeout: 120_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).toBe(true);
  }, 150_000);
});
