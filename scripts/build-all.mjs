// `npm run build:all [-- --only=<platform>[,<platform>...]] [-- --no-install]`
//
// Cross-builds the addon for every platform package in npm/ on one Linux machine and puts
// each `.node` where its package.json's `main` points, then checks every file's format,
// CPU and Node-API entry point and prints a table. How and why each platform is built
// this way is in docs/platforms.md ("Prebuilt packages").
//
// What a platform needs is installed when it is missing (unless --no-install): the Rust
// target (rustup), zig with cargo-zigbuild (pip) for macOS and for a Linux CPU that is
// not the host's, MinGW-w64 (apt-get) for Windows.
//
// The committed loader and typings (index.js, index.d.ts) are never written here: every
// build passes `--no-js` and sends its typings to a scratch folder. `npm run build`
// regenerates them, and scripts/check-generated.mjs checks they were committed.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { inspectBinary } from './native-binary.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const BINARY = pkg.napi.binaryName;

// `name` is the npm/ folder, the package's suffix and the `.node` file's infix, spelled as
// the generated loader (index.js) asks for them. `triple` is what cargo builds.
const PLATFORMS = [
  { name: 'linux-x64-gnu', triple: 'x86_64-unknown-linux-gnu', format: 'ELF', arch: 'x64', entry: 'napi_register_module_v1' },
  { name: 'linux-arm64-gnu', triple: 'aarch64-unknown-linux-gnu', format: 'ELF', arch: 'arm64', entry: 'napi_register_module_v1' },
  { name: 'darwin-x64', triple: 'x86_64-apple-darwin', format: 'Mach-O', arch: 'x64', entry: '_napi_register_module_v1' },
  { name: 'darwin-arm64', triple: 'aarch64-apple-darwin', format: 'Mach-O', arch: 'arm64', entry: '_napi_register_module_v1' },
  // The loader asks for `-msvc` on the official (MSVC-built) Node for Windows; the MSVC
  // toolchain cannot be had on Linux, so the MinGW target builds it (docs/platforms.md).
  { name: 'win32-x64-msvc', triple: 'x86_64-pc-windows-gnu', format: 'PE32+', arch: 'x64', entry: 'napi_register_module_v1' },
];

// A Windows addon that needs one of these would not load on a stock Windows: they are
// MinGW's runtime DLLs (not on a user's PATH) and Node's own executable under a name
// (`node.exe`, `libnode.dll`) that an embedder such as Electron does not have.
const FORBIDDEN_WINDOWS_IMPORTS = /^(libgcc_s|libwinpthread|libstdc\+\+|node\.exe$|libnode)/i;

function parseArgs(argv) {
  const options = { only: null, install: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(`usage: npm run build:all [-- --only=<platform>[,<platform>...]] [-- --no-install]\nplatforms: ${PLATFORMS.map((p) => p.name).join(', ')}`);
      process.exit(0);
    } else if (arg === '--no-install') options.install = false;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      options.only = (value ?? '').split(',').filter(Boolean);
    } else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  if (options.only) {
    const unknown = options.only.filter((n) => !PLATFORMS.some((p) => p.name === n));
    if (unknown.length || options.only.length === 0) {
      throw new Error(`--only: unknown platform ${unknown.join(', ') || '(none given)'}; one of ${PLATFORMS.map((p) => p.name).join(', ')}`);
    }
  }
  return options;
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { stdio: 'inherit', cwd: ROOT, ...options });
  if (r.error) throw new Error(`${command}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

function output(command, args, env = process.env) {
  const r = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return r.status === 0 ? r.stdout : null;
}

const has = (command, env = process.env) => output(command, ['--version'], env) !== null;

/** The package folders and the root package.json must agree, or a user gets no binary. */
function checkPackages(platforms) {
  for (const p of platforms) {
    const file = `${BINARY}.${p.name}.node`;
    const dir = join(ROOT, 'npm', p.name);
    const platformPkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const problems = [];
    if (platformPkg.name !== `${pkg.name}-${p.name}`) problems.push(`name is ${platformPkg.name}`);
    if (platformPkg.main !== file) problems.push(`main is ${platformPkg.main}, not ${file}`);
    if (!platformPkg.files?.includes(file)) problems.push(`files does not list ${file}`);
    if (platformPkg.version !== pkg.version) problems.push(`version ${platformPkg.version} is not ${pkg.version}`);
    if (pkg.optionalDependencies?.[platformPkg.name] !== pkg.version) problems.push(`not in optionalDependencies at ${pkg.version}`);
    if (problems.length) throw new Error(`npm/${p.name}/package.json: ${problems.join('; ')}`);
  }
}

/** Python's script folders, where pip puts cargo-zigbuild, go on PATH for the builds. */
function pythonScriptDirs() {
  const out = output('python3', ['-c', "import os, sysconfig; print(sysconfig.get_path('scripts')); print(sysconfig.get_path('scripts', os.name + '_user'))"]);
  return out ? out.split('\n').filter(Boolean) : [];
}

function ensureTools(platforms, host, install, env) {
  const installed = (output('rustup', ['target', 'list', '--installed']) ?? '').split('\n');
  const missingTargets = platforms.map((p) => p.triple).filter((t) => !installed.includes(t));
  if (missingTargets.length) {
    if (!install) throw new Error(`missing Rust targets: ${missingTargets.join(' ')} (rustup target add ...)`);
    run('rustup', ['target', 'add', ...missingTargets]);
  }

  if (platforms.some((p) => strategy(p, host) === 'zig')) {
    // cargo-zigbuild finds zig on PATH or, failing that, as Python's `ziglang` module.
    const zigOk = () => output('cargo', ['zigbuild', '--help'], env) !== null && (output('zig', ['version'], env) !== null || output('python3', ['-c', 'import ziglang'], env) !== null);
    if (!zigOk()) {
      if (!install) throw new Error('cargo-zigbuild and zig are missing (pip install ziglang cargo-zigbuild)');
      run('python3', ['-m', 'pip', 'install', '--quiet', 'ziglang', 'cargo-zigbuild']);
      env.PATH = [...pythonScriptDirs(), env.PATH].join(delimiter);
      if (!zigOk()) throw new Error('cargo-zigbuild or zig still not found after pip install');
    }
  }

  if (platforms.some((p) => strategy(p, host) === 'mingw')) {
    const mingwOk = () => has('x86_64-w64-mingw32-gcc', env) && has('x86_64-w64-mingw32-dlltool', env);
    if (!mingwOk()) {
      if (!install) throw new Error('MinGW-w64 is missing (apt-get install gcc-mingw-w64-x86-64)');
      run('apt-get', ['update', '-qq'], { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } });
      run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'gcc-mingw-w64-x86-64'], { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } });
      if (!mingwOk()) throw new Error('x86_64-w64-mingw32-gcc or -dlltool still not found');
    }
  }
}

/** How a platform is built from this host: its own toolchain, zig, or MinGW. */
function strategy(p, host) {
  if (p.triple === host) return 'native';
  return p.triple.includes('windows') ? 'mingw' : 'zig';
}

/**
 * napi-build, for a `windows-gnu` target, links the addon against `libnode.dll` from
 * LIBNODE_PATH and stops the build without one. The addon looks Node-API up at run time
 * in the process that loaded it (napi-rs's default on Windows), so it takes no symbol from
 * that library: an import library that names `node.exe` and one function satisfies the
 * linker, and the finished `.node` imports nothing from it (checked after the build).
 */
function libnodeStub(dir) {
  mkdirSync(dir, { recursive: true });
  const def = join(dir, 'node.def');
  writeFileSync(def, 'LIBRARY node.exe\nEXPORTS\n  napi_module_register\n');
  run('x86_64-w64-mingw32-dlltool', ['-d', def, '-l', join(dir, 'libnode.dll.a')]);
  // napi-build looks for this name in LIBNODE_PATH; the linker uses libnode.dll.a, found first.
  writeFileSync(join(dir, 'libnode.dll'), '');
  return dir;
}

function cargoTargetDir() {
  const meta = output('cargo', ['metadata', '--format-version', '1', '--no-deps']);
  return meta ? JSON.parse(meta).target_directory : join(ROOT, 'target');
}

function build(p, host, scratch, env) {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const napi = join(ROOT, 'node_modules', '.bin', 'napi');
  // The same flags as `npm run build`, so the host's build reuses its compiled crate.
  const args = ['build', '--platform', '--release', '--features', 'node', '--target', p.triple];
  args.push('--no-js', '--dts', 'typings.d.ts', '--output-dir', scratch);
  if (strategy(p, host) === 'zig') args.push('--cross-compile'); // napi runs `cargo zigbuild`
  run(napi, args, { env });
  const built = readdirSync(scratch).filter((f) => f.endsWith('.node'));
  if (built.length !== 1) throw new Error(`expected one .node in ${scratch}, found ${built.join(', ') || 'none'}`);
  return join(scratch, built[0]);
}

/** Whether the file is what a loader on `p` needs; a text for the table, or a throw. */
function check(p, file) {
  const info = inspectBinary(file);
  const problems = [];
  if (info.format !== p.format) problems.push(`is ${info.format}, not ${p.format}`);
  if (info.arch !== p.arch) problems.push(`is for ${info.arch}, not ${p.arch}`);
  if (!info.shared) problems.push('is not a shared library');
  if (!info.exports.includes(p.entry)) problems.push(`does not export ${p.entry}`);
  if (p.format === 'PE32+') {
    const bad = info.libraries.filter((l) => FORBIDDEN_WINDOWS_IMPORTS.test(l));
    if (bad.length) problems.push(`imports ${bad.join(', ')}`);
  }
  if (problems.length) throw new Error(`the built file ${problems.join('; ')}`);
  const kind = { ELF: 'shared object', 'Mach-O': 'dylib', 'PE32+': 'DLL' }[p.format];
  return `${p.format} ${p.arch} ${kind}, exports ${p.entry}`;
}

function hashGenerated() {
  return ['index.js', 'index.d.ts'].map((f) => (existsSync(join(ROOT, f)) ? createHash('sha256').update(readFileSync(join(ROOT, f))).digest('hex') : '')).join();
}

function table(rows) {
  const head = ['platform', 'rust target', 'file', 'bytes', 'seconds', 'check'];
  const cells = [head, ...rows.map((r) => [r.name, r.triple, r.file, r.bytes, r.seconds, r.check])];
  const widths = head.map((_, i) => Math.max(...cells.map((c) => String(c[i]).length)));
  const line = (c) => c.map((v, i) => (i === 3 || i === 4 ? String(v).padStart(widths[i]) : String(v).padEnd(widths[i]))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const platforms = options.only ? PLATFORMS.filter((p) => options.only.includes(p.name)) : PLATFORMS;
  checkPackages(platforms);
  const host = (output('rustc', ['-vV']) ?? '').match(/^host: (\S+)$/m)?.[1];
  if (!host) throw new Error('rustc -vV did not name the host target');

  const env = { ...process.env, PATH: [...pythonScriptDirs(), process.env.PATH].join(delimiter) };
  ensureTools(platforms, host, options.install, env);
  const work = join(cargoTargetDir(), 'build-all');
  if (platforms.some((p) => strategy(p, host) === 'mingw')) env.LIBNODE_PATH = libnodeStub(join(work, 'libnode'));

  const generated = hashGenerated();
  const rows = [];
  const started = Date.now();
  for (const p of platforms) {
    const t0 = Date.now();
    const row = { name: p.name, triple: p.triple, file: '-', bytes: '-', seconds: '', check: '' };
    console.log(`\n=== ${p.name} (${p.triple}, ${strategy(p, host)}) ===`);
    const dest = join(ROOT, 'npm', p.name, `${BINARY}.${p.name}.node`);
    // An earlier run's file must not survive a failed build and be packed as this one.
    rmSync(dest, { force: true });
    try {
      const built = build(p, host, join(work, p.name), env);
      row.bytes = statSync(built).size;
      row.check = check(p, built);
      copyFileSync(built, dest);
      row.file = relative(ROOT, dest);
    } catch (e) {
      row.check = `FAILED: ${e.message}`;
      row.failed = true;
    }
    row.seconds = ((Date.now() - t0) / 1000).toFixed(0);
    rows.push(row);
  }
  if (hashGenerated() !== generated) {
    rows.push({ name: '-', triple: '-', file: 'index.js / index.d.ts', bytes: '-', seconds: '', check: 'FAILED: changed by the build', failed: true });
  }
  console.log(`\n${table(rows)}\n\n${rows.filter((r) => !r.failed).length} of ${platforms.length} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (rows.some((r) => r.failed)) process.exit(1);
}

try {
  main();
} catch (e) {
  console.error(`build:all: ${e.message}`);
  process.exit(1);
}
