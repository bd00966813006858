// `npm run artifacts` (scripts/platform-artifacts.mjs: napi's own `napi artifacts`) puts
// the addon `npm run build` made into its platform package, so `npm pack` of that package
// carries it (docs/releasing.md, "Packing a platform package"). Run on a copy of what the
// flow reads and writes (package.json, index.js, npm/, the addon), so the checkout is
// untouched; the copy's platform package first packs without its addon (the control).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// The platform package this machine loads, as the generated loader names it.
const host = `${process.platform}-${process.arch}${process.platform === 'linux' ? '-gnu' : process.platform === 'win32' ? '-msvc' : ''}`;
const binary = `${pkg.napi.binaryName}.${host}.node`;

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nss-platform-pack-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What `npm pack --dry-run --json` of the copy's platform package would put in the tarball. */
function packed(): Array<{ path: string; size: number }> {
  const out = execFileSync(NPM, ['pack', '--dry-run', '--json'], {
    cwd: join(dir, 'npm', host),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    shell: process.platform === 'win32',
    timeout: 120_000,
  });
  return (JSON.parse(out) as Array<{ files: Array<{ path: string; size: number }> }>)[0]!.files;
}

const daemon = process.platform === 'win32' ? 'native-shell-daemon.exe' : 'native-shell-daemon';

describe.skipIf(!existsSync(join(ROOT, binary)) || !existsSync(join(ROOT, daemon)))(`npm pack of npm/${host}`, () => {
  it('carries the addon once `npm run artifacts` has run', () => {
    for (const f of ['package.json', 'index.js', binary, daemon]) copyFileSync(join(ROOT, f), join(dir, f));
    cpSync(join(ROOT, 'npm'), join(dir, 'npm'), { recursive: true, filter: (src) => !src.endsWith('.node') && !src.endsWith(daemon) });

    expect(packed().map((f) => f.path)).not.toContain(binary);
    expect(packed().map((f) => f.path)).not.toContain(daemon);

    execFileSync(process.execPath, [join(ROOT, 'scripts', 'platform-artifacts.mjs'), '--cwd', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    const files = packed();
    expect(files.map((f) => f.path).sort()).toEqual(['README.md', binary, daemon, 'package.json'].sort());
    expect(files.find((f) => f.path === binary)?.size).toBe(statSync(join(ROOT, binary)).size);
    // The daemon `npm run build` put at the root goes with it.
    expect(files.find((f) => f.path === daemon)?.size).toBe(statSync(join(ROOT, daemon)).size);
    // napi wrote nothing else of the package: the loader is as committed.
    expect(readFileSync(join(dir, 'index.js'), 'utf8')).toBe(readFileSync(join(ROOT, 'index.js'), 'utf8'));
  }, 300_000);
});
