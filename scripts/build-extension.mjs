// `npm run build:extension [-- --all]`
//
// The Gemini CLI extension as one self-contained archive per platform:
// release/<platform>.<arch>.native-shell-service.tar.gz, the names the Gemini CLI looks
// for among a GitHub release's assets (`<platform>.<arch>.` first, then `<platform>.`),
// for `gemini extensions install <owner>/<repo>`. Each holds, at its top level:
//
//   gemini-extension.json, gemini-extension.md   the manifest and its context file
//   dist/native-shell-service.cjs                the MCP server, bundled (scripts/bundle.mjs)
//   dist/THIRD_PARTY_LICENSES.txt, LICENSE       the licenses of what the bundle holds, ours
//   index.js, native-shell-service.<p>.node      the addon's loader and this platform's addon
//   package.json                                 name and version (the server reads them)
//
// No node_modules: `node dist/native-shell-service.cjs mcp` is all the manifest runs.
//
// An addon comes from npm/<p>/ (`npm run build:all`, the cross builds) or, for this
// machine's platform only, from the package root (`npm run build`). Platforms without one
// are listed and skipped; with --all, any missing one fails the run (CI, release).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { daemonFileName } from './build-daemon.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8'));
const BINARY = pkg.napi.binaryName;
const OUT = join(ROOT, 'release');

// The npm/ folder of each platform and the names Node gives it (process.platform, arch).
const PLATFORMS = [
  { name: 'linux-x64-gnu', platform: 'linux', arch: 'x64' },
  { name: 'linux-arm64-gnu', platform: 'linux', arch: 'arm64' },
  { name: 'darwin-x64', platform: 'darwin', arch: 'x64' },
  { name: 'darwin-arm64', platform: 'darwin', arch: 'arm64' },
  { name: 'win32-x64-msvc', platform: 'win32', arch: 'x64' },
];

const SHARED = ['gemini-extension.json', manifest.contextFileName, 'LICENSE', 'index.js', 'dist/native-shell-service.cjs', 'dist/THIRD_PARTY_LICENSES.txt'];

/** Where this platform's addon is, or null. */
function addonOf(p) {
  const file = `${BINARY}.${p.name}.node`;
  const candidates = [join(ROOT, 'npm', p.name, file)];
  if (p.platform === process.platform && p.arch === process.arch) candidates.push(join(ROOT, file));
  return candidates.find((c) => existsSync(c)) ?? null;
}

/** Where this platform's daemon binary is, or null: beside its addon. */
function daemonOf(p) {
  const file = daemonFileName(p.platform);
  const candidates = [join(ROOT, 'npm', p.name, file)];
  if (p.platform === process.platform && p.arch === process.arch) candidates.push(join(ROOT, file));
  return candidates.find((c) => existsSync(c)) ?? null;
}

/** A gzipped tar of `files` (relative to `dir`), the same bytes for the same inputs. */
function tarGz(dir, files, out) {
  // GNU tar: sorted names, no owner, one fixed time (the release commit's, when given).
  const mtime = process.env.SOURCE_DATE_EPOCH ? `@${process.env.SOURCE_DATE_EPOCH}` : '@0';
  const tar = spawnSync(
    'tar',
    ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=${mtime}`, '--mode=u+rw,go+r,go-w', '-C', dir, '-cf', '-', ...files],
    { maxBuffer: 1 << 30 },
  );
  if (tar.status !== 0) throw new Error(`tar failed (GNU tar is needed): ${tar.stderr?.toString() ?? tar.error?.message}`);
  const gz = spawnSync('gzip', ['-9', '-n'], { input: tar.stdout, maxBuffer: 1 << 30 });
  if (gz.status !== 0) throw new Error(`gzip failed: ${gz.stderr?.toString() ?? gz.error?.message}`);
  writeFileSync(out, gz.stdout);
}

function main() {
  const all = process.argv.includes('--all');
  for (const arg of process.argv.slice(2)) if (arg !== '--all') throw new Error(`unknown argument ${arg} (only --all)`);
  for (const f of SHARED) {
    if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
  }
  mkdirSync(OUT, { recursive: true });
  const rows = [];
  const missing = [];
  for (const p of PLATFORMS) {
    const addon = addonOf(p);
    const archive = join(OUT, `${p.platform}.${p.arch}.${pkg.name}.tar.gz`);
    rmSync(archive, { force: true }); // never leave an earlier build's archive as this one
    if (!addon) {
      missing.push(p.name);
      continue;
    }
    const stage = join(OUT, 'stage', p.name);
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(join(stage, 'dist'), { recursive: true });
    for (const f of SHARED) copyFileSync(join(ROOT, f), join(stage, f));
    const node = `${BINARY}.${p.name}.node`;
    copyFileSync(addon, join(stage, node));
    // What the server reads of its package (contract/addon.ts finds the folder by it).
    const meta = { name: pkg.name, version: pkg.version, description: pkg.description, license: pkg.license, repository: pkg.repository, homepage: pkg.homepage, private: true };
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(meta, null, 2)}\n`);
    // The daemon goes beside the addon, where clients look for it first.
    const daemon = daemonOf(p);
    const extra = daemon ? [daemonFileName(p.platform)] : [];
    if (daemon) copyFileSync(daemon, join(stage, extra[0]));
    tarGz(stage, [...SHARED, node, ...extra, 'package.json'], archive);
    rows.push({ archive: relative(ROOT, archive), bytes: statSync(archive).size, addon: relative(ROOT, addon), daemon: daemon ? relative(ROOT, daemon) : 'none' });
  }
  rmSync(join(OUT, 'stage'), { recursive: true, force: true });
  for (const r of rows) console.log(`${r.archive}  ${r.bytes} bytes  (addon: ${r.addon}, daemon: ${r.daemon})`);
  if (missing.length) {
    console.log(`missing: ${missing.join(', ')} (no addon in npm/<platform>/: \`npm run build:all\` cross-builds them)`);
    if (all) throw new Error(`--all: ${missing.length} of ${PLATFORMS.length} platforms have no addon`);
  }
  if (rows.length === 0) throw new Error('no archive built: no platform has an addon (`npm run build` or `npm run build:all`)');
}

try {
  main();
} catch (e) {
  console.error(`build:extension: ${e.message}`);
  process.exit(1);
}
