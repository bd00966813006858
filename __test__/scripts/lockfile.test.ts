// `npm install` on a fresh clone must leave package-lock.json as committed: the lockfile
// holds every package npm would add, the optional ones of other platforms included (a
// lockfile missing them is rewritten, by hundreds of lines, on the first install).
// Checked offline on a copy: npm resolves package.json against the lockfile alone, and a
// lockfile that lacks anything either changes or fails (the packument is not at hand).
//
// The lockfile is written by npm 10.8.2 (Node 20's; CONTRIBUTING.md): npm 11 writes `libc`
// fields that npm 10 removes, and reads a lockfile without them as complete. npm 10,
// 11.0-11.2 and 11.15 or later leave it as it is; 11.3 to 11.14 rewrite it (peer flags).
// NSS_TEST_NPM names the npm to check with (CI and .ci/run: `npx -y npm@10.8.2`).
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
    const [npm, ...first] = process.env.NSS_TEST_NPM?.split(' ').filter(Boolean) ?? [process.platform === 'win32' ? 'npm.cmd' : 'npm'];
    const r = spawnSync(npm, [...first, 'install', '--package-lock-only', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      encoding: 'utf8',
      shell: process.platform === 'win32',
      timeout: 120_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).toBe(true);
  }, 150_000);
});
