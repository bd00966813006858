// The platform packages agree with the root package.json and the generated loader. A
// user's install: the main package and this machine's platform package (npm/<platform>/
// with the addon that `npm run build` made) are packed as npm publishes them and installed
// into a fresh project, with no Rust toolchain on PATH; then a command runs through
// `require('native-shell-service')`, which must find its binary in the platform package
// (the main package ships none). docs/platforms.md, "Prebuilt packages".
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureBuilt, ROOT } from './setup';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const BINARY: string = pkg.napi.binaryName;
// The generated loader's name for this machine (index.js): glibc Linux and the official
// (MSVC-built) Windows Node have an ABI part, macOS none.
const ABI: Record<string, string> = { linux: '-gnu', win32: '-msvc' };
const PLATFORM = `${process.platform}-${process.arch}${ABI[process.platform] ?? ''}`;
const ADDON = join(ROOT, `${BINARY}.${PLATFORM}.node`);

// PATH without the Rust toolchain: the install and the run must not need it.
const PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => dir && !existsSync(join(dir, 'cargo')) && !existsSync(join(dir, 'rustc')))
  .concat(dirname(process.execPath))
  .join(delimiter);
const env = { ...process.env, PATH, npm_config_update_notifier: 'false' };

let base = '';

interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

function pack(dir: string, dest: string, ...extra: string[]): Packed {
  const out = execFileSync('npm', ['pack', dir, '--json', '--pack-destination', dest, ...extra], {
    cwd: dest,
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return (JSON.parse(out) as Packed[])[0]!;
}

beforeAll(() => {
  ensureBuilt();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-install-')));
});

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

// Every platform package, as the loader and npm see it: [folder, os, cpu, libc, napi target].
const PLATFORMS: Array<[string, string, string, string | null, string]> = [
  ['linux-x64-gnu', 'linux', 'x64', 'glibc', 'x86_64-unknown-linux-gnu'],
  ['linux-arm64-gnu', 'linux', 'arm64', 'glibc', 'aarch64-unknown-linux-gnu'],
  ['darwin-x64', 'darwin', 'x64', null, 'x86_64-apple-darwin'],
  ['darwin-arm64', 'darwin', 'arm64', null, 'aarch64-apple-darwin'],
  ['win32-x64-msvc', 'win32', 'x64', null, 'x86_64-pc-windows-msvc'],
];

describe('platform packages', () => {
  it.each(PLATFORMS)('%s: named and filtered as the generated loader and npm expect', (folder, os, cpu, libc, target) => {
    const p = JSON.parse(readFileSync(join(ROOT, 'npm', folder, 'package.json'), 'utf8'));
    const file = `${BINARY}.${folder}.node`;
    expect(p).toMatchObject({ name: `${pkg.name}-${folder}`, version: pkg.version, main: file, files: [file], os: [os], cpu: [cpu] });
    expect(p.libc).toEqual(libc ? [libc] : undefined);
    expect(pkg.optionalDependencies[p.name]).toBe(pkg.version);
    expect(pkg.napi.targets).toContain(target);
    // The committed loader asks for this package by name on its platform.
    expect(readFileSync(join(ROOT, 'index.js'), 'utf8')).toContain(`require('${p.name}')`);
  });

  it('no other platform package is listed', () => {
    expect(Object.keys(pkg.optionalDependencies).sort()).toEqual(PLATFORMS.map(([f]) => `${pkg.name}-${f}`).sort());
    expect([...pkg.napi.targets].sort()).toEqual(PLATFORMS.map(([, , , , t]) => t).sort());
  });
});

describe('installed from packed packages', () => {
  it(`npm pack + npm install of the main and the ${PLATFORM} package, then a command runs`, () => {
    // `npm run build` made the addon; the test checks the package around it.
    expect(existsSync(ADDON), `${ADDON} (run npm run build)`).toBe(true);
    const platformDir = join(ROOT, 'npm', PLATFORM);
    const platformPkg = JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8'));
    expect(pkg.optionalDependencies[platformPkg.name]).toBe(pkg.version);

    // The platform package as published: its own files plus the addon (never left in npm/).
    const staged = join(base, 'platform');
    mkdirSync(staged);
    for (const f of ['package.json', 'README.md']) copyFileSync(join(platformDir, f), join(staged, f));
    copyFileSync(ADDON, join(staged, `${BINARY}.${PLATFORM}.node`));
    const platformTgz = pack(staged, base);
    expect(platformTgz.files.map((f) => f.path)).toContain(`${BINARY}.${PLATFORM}.node`);

    // No prepack: ensureBuilt compiled dist/ already, and the test must not rebuild the repo.
    const mainTgz = pack(ROOT, base, '--ignore-scripts');
    const mainFiles = mainTgz.files.map((f) => f.path);
    expect(mainFiles).toContain('index.js');
    expect(mainFiles.filter((f) => f.endsWith('.node'))).toEqual([]);

    // A fresh project; its dependency (the MCP SDK) comes from npm's cache when it is there.
    // The other platforms' optional packages are skipped by os/cpu or not found: not fatal.
    const app = join(base, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'nss-install-check', version: '1.0.0', private: true }));
    execFileSync(
      'npm',
      ['install', join(base, mainTgz.filename), join(base, platformTgz.filename), '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'],
      { cwd: app, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(existsSync(join(app, 'node_modules', platformPkg.name, platformPkg.main))).toBe(true);

    const script = `
      const { ShellExecutionService } = require('native-shell-service');
      const loaded = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
      const s = new ShellExecutionService({ projectRoot: process.cwd(), persistOutput: false });
      (async () => {
        const hi = await s.run('echo hi');
        const failed = await s.run('echo out; echo err >&2; exit 7', { mode: 'pipes' });
        await s.shutdown();
        console.log(JSON.stringify({ loaded, hi, failed }));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const out = execFileSync(process.execPath, ['-e', script], { cwd: app, env, encoding: 'utf8' });
    const r = JSON.parse(out) as {
      loaded: string[];
      hi: { status: string; exitCode: number; output: string };
      failed: { status: string; exitCode: number; stdout: string; stderr: string };
    };
    expect(r.loaded).toEqual([join(app, 'node_modules', platformPkg.name, platformPkg.main)]);
    expect(r.hi).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(r.hi.output.trim()).toBe('hi');
    expect(r.failed).toMatchObject({ status: 'exited', exitCode: 7, stdout: 'out\n', stderr: 'err\n' });
  }, 300_000);
});
