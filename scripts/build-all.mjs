// `npm run build:all [-- --only=<platform>[,<platform>...]] [-- --no-install]`
//
// Cross-builds the addon for every platform package in npm/ on one Linux machine and puts
// each `.node` where its package.json's `main` points, then checks every file's format,
// CPU and Node-API entry point and prints a table. How and why each platform is built
// this way is in docs/platforms.md ("Prebuilt packages").
//
// What a platform needs is installed when it is missing (unless --no-install): the Rust
// target (rustup), zig with cargo-zigbuild (pip) for macOS and Linux,
// MinGW-w64 (apt-get) for Windows.
//
// The committed loader and typings (index.js, index.d.ts) are never written here: every
// build passes `--no-js` and sends its typings to a scratch folder. `npm run build`
// regenerates them, and scripts/check-generated.mjs checks they were committed.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildDaemon, daemonFileName } from './build-daemon.mjs';
import { compareVersions, inspectBinary } from './native-binary.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const BINARY = pkg.napi.binaryName;

// `name` is the npm/ folder, the package's suffix and the `.node` file's infix, spelled as
// the generated loader (index.js) asks for them. `triple` is what cargo builds; `zig` is the
// target handed to cargo-zigbuild, which for Linux names the oldest glibc to link against.
// The floors are Node 20's own (its Linux builds need glibc 2.28, its macOS builds 10.15,
// and Apple silicon starts at macOS 11): the addon runs wherever that Node runs.
const GLIBC = '2.28';
const PLATFORMS = [
  { name: 'linux-x64-gnu', triple: 'x86_64-unknown-linux-gnu', zig: `x86_64-unknown-linux-gnu.${GLIBC}`, format: 'ELF', arch: 'x64' },
  { name: 'linux-arm64-gnu', triple: 'aarch64-unknown-linux-gnu', zig: `aarch64-unknown-linux-gnu.${GLIBC}`, format: 'ELF', arch: 'arm64' },
  { name: 'darwin-x64', triple: 'x86_64-apple-darwin', zig: 'x86_64-apple-darwin', macos: '10.15', format: 'Mach-O', arch: 'x64' },
  { name: 'darwin-arm64', triple: 'aarch64-apple-darwin', zig: 'aarch64-apple-darwin', macos: '11.0', format: 'Mach-O', arch: 'arm64' },
  // The loader asks for `-msvc` on the official (MSVC-built) Node for Windows; the MSVC
  // toolchain cannot be had on Linux, so the MinGW target builds it (docs/platforms.md).
  { name: 'win32-x64-msvc', triple: 'x86_64-pc-windows-gnu', format: 'PE32+', arch: 'x64' },
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
    const daemon = daemonFileName(p.name.split('-')[0]);
    if (!platformPkg.files?.includes(daemon)) problems.push(`files does not list ${daemon}`);
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

function ensureTools(platforms, install, env) {
  const installed = (output('rustup', ['target', 'list', '--installed']) ?? '').split('\n');
  const missingTargets = platforms.map((p) => p.triple).filter((t) => !installed.includes(t));
  if (missingTargets.length) {
    if (!install) throw new Error(`missing Rust targets: ${missingTargets.join(' ')} (rustup target add ...)`);
    run('rustup', ['target', 'add', ...missingTargets]);
  }

  if (platforms.some((p) => strategy(p) === 'zig')) {
    // cargo-zigbuild finds zig on PATH or, failing that, as Python's `ziglang` module.
    const zigOk = () => output('cargo', ['zigbuild', '--help'], env) !== null && (output('zig', ['version'], env) !== null || output('python3', ['-c', 'import ziglang'], env) !== null);
    if (!zigOk()) {
      if (!install) throw new Error('cargo-zigbuild and zig are missing (pip install ziglang cargo-zigbuild)');
      run('python3', ['-m', 'pip', 'install', '--quiet', 'ziglang', 'cargo-zigbuild']);
      env.PATH = [...pythonScriptDirs(), env.PATH].join(delimiter);
      if (!zigOk()) throw new Error('cargo-zigbuild or zig still not found after pip install');
    }
  }

  if (platforms.some((p) => strategy(p) === 'mingw')) {
    const mingwOk = () => has('x86_64-w64-mingw32-gcc', env) && has('x86_64-w64-mingw32-dlltool', env);
    if (!mingwOk()) {
      if (!install) throw new Error('MinGW-w64 is missing (apt-get install gcc-mingw-w64-x86-64)');
      run('apt-get', ['update', '-qq'], { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } });
      run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'gcc-mingw-w64-x86-64'], { env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } });
      if (!mingwOk()) throw new Error('x86_64-w64-mingw32-gcc or -dlltool still not found');
    }
  }
}

/**
 * How a platform is built: zig links Linux and macOS (also the host's own Linux target, so
 * the package gets the glibc floor above rather than this machine's glibc); MinGW links
 * Windows (napi's `--cross-compile` would send a Windows target to cargo-xwin, which needs
 * the MSVC SDK's download server).
 */
function strategy(p) {
  return p.zig ? 'zig' : 'mingw';
}

/**
 * napi-build, for a `windows-gnu` target, links the addon against `libnode.dll` from
 * LIBNODE_PATH and stops the build without one. With napi's `dyn-symbols` feature (checked
 * before each build) the addon looks Node-API up at run time in the process that loaded
 * it, so it takes no symbol from that library: an import library that names `node.exe`
 * and one function satisfies the linker, and the finished `.node` imports nothing from it
 * (checked after the build).
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

/**
 * What napi (the Node-API crate) is compiled with for `triple`, or null when the addon
 * does not depend on it there: then no build can produce a Node addon for that platform.
 */
function napiFeatures(triple, env) {
  const meta = output('cargo', ['metadata', '--format-version', '1', '--filter-platform', triple], env);
  if (!meta) throw new Error(`cargo metadata --filter-platform ${triple} failed`);
  const { packages, resolve: graph } = JSON.parse(meta);
  const napi = packages.find((x) => x.name === 'napi');
  const node = napi && graph.nodes.find((n) => n.id === napi.id);
  return node ? node.features : null;
}

function build(p, scratch, env) {
  const features = napiFeatures(p.triple, env);
  if (!features) throw new Error(`the addon has no Node-API binding for ${p.triple}: napi is not a dependency there (src/binding/Cargo.toml)`);
  // Without it napi links Node-API by name at build time, which the libnode stub cannot
  // give; with it the addon finds Node-API in whatever process loaded it (docs/platforms.md).
  if (strategy(p) === 'mingw' && !features.includes('dyn-symbols')) {
    throw new Error(`napi is built without its dyn-symbols feature for ${p.triple}: add it to the Windows napi dependency in src/binding/Cargo.toml`);
  }
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const napi = join(ROOT, 'node_modules', '.bin', 'napi');
  // The flags of `npm run build`, less its loader and typings (see the top of this file).
  const args = ['build', '--platform', '--release', '--package', 'native-shell-service-node', '--target', p.zig ?? p.triple];
  args.push('--no-js', '--dts', 'typings.d.ts', '--output-dir', scratch);
  const buildEnv = { ...env };
  if (strategy(p) === 'zig') args.push('--cross-compile'); // napi runs `cargo zigbuild`
  // zig's own default is its newest macOS, which older Macs would refuse to load.
  if (p.macos) buildEnv.MACOSX_DEPLOYMENT_TARGET = env.MACOSX_DEPLOYMENT_TARGET ?? p.macos;
  run(napi, args, { env: buildEnv });
  const built = readdirSync(scratch).filter((f) => f.endsWith('.node'));
  if (built.length !== 1) throw new Error(`expected one .node in ${scratch}, found ${built.join(', ') || 'none'}`);
  return join(scratch, built[0]);
}

/**
 * The daemon binary for `p`, built as the addon is (zig or MinGW), from the core's
 * crate (it links no Node-API), and checked to be an executable for `p`'s format and CPU.
 */
function buildDaemonFor(p, env) {
  const windows = strategy(p) === 'mingw';
  const built = buildDaemon({ cargo: windows ? ['build'] : ['zigbuild'], triple: p.zig ?? p.triple, env, targetDir: env.CARGO_TARGET_DIR, windows });
  const info = inspectBinary(built);
  if (info.format !== p.format || info.arch !== p.arch) throw new Error(`the daemon is ${info.format} ${info.arch}, not ${p.format} ${p.arch}`);
  return built;
}

/** Whether the file is what a loader on `p` needs; a text for the table, or a throw. */
function check(p, file) {
  const info = inspectBinary(file);
  const entry = p.format === 'Mach-O' ? '_napi_register_module_v1' : 'napi_register_module_v1';
  const problems = [];
  const notes = [];
  if (info.format !== p.format) problems.push(`is ${info.format}, not ${p.format}`);
  if (info.arch !== p.arch) problems.push(`is for ${info.arch}, not ${p.arch}`);
  if (!info.shared) problems.push('is not a shared library');
  if (!info.exports.includes(entry)) problems.push(`does not export ${entry}`);
  if (p.format === 'ELF') {
    if (info.glibc && compareVersions(info.glibc, GLIBC) > 0) problems.push(`needs glibc ${info.glibc}, over the ${GLIBC} floor`);
    notes.push(`glibc >= ${info.glibc ?? '?'}`);
  } else if (p.format === 'Mach-O') {
    if (!info.minOs || compareVersions(info.minOs, p.macos) > 0) problems.push(`says macOS ${info.minOs ?? '?'}, not ${p.macos}`);
    // macOS on Apple silicon refuses unsigned code; zig's linker signs ad hoc, as Apple's does.
    if (p.arch === 'arm64' && !info.signed) problems.push('has no code signature that matches its pages');
    notes.push(`macOS >= ${info.minOs}${info.signed ? ', ad-hoc signed' : ''}`);
  } else {
    const bad = info.libraries.filter((l) => FORBIDDEN_WINDOWS_IMPORTS.test(l));
    if (bad.length) problems.push(`imports ${bad.join(', ')}`);
    notes.push('system DLLs only');
  }
  if (problems.length) throw new Error(`the built file ${problems.join('; ')}`);
  const kind = { ELF: 'shared object', 'Mach-O': 'dylib', 'PE32+': 'DLL' }[p.format];
  return `${p.format} ${p.arch} ${kind} (${notes.join(', ')}), exports ${entry}`;
}

/**
 * The package built for this very machine is loaded and runs a command: the one file of
 * the five that can be run here (the install test does the same through npm).
 */
function smokeTest(p, file) {
  const host = `${process.platform}-${process.arch}`;
  if (!p.name.startsWith(`${host}-`) && p.name !== host) return null;
  const script = `
    const { ShellExecutionService } = require(${JSON.stringify(file)});
    const s = new ShellExecutionService({ projectRoot: process.cwd(), persistOutput: false });
    s.run('echo hi', { mode: 'pipes' }).then(async (r) => { await s.shutdown(); console.log(r.exitCode + ' ' + r.stdout.trim()); });`;
  const out = output(process.execPath, ['-e', script]);
  if (out?.trim() !== '0 hi') throw new Error(`loaded here, \`echo hi\` gave ${JSON.stringify(out)}`);
  return 'ran echo hi here';
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

  const env = { ...process.env, PATH: [...pythonScriptDirs(), process.env.PATH].join(delimiter) };
  ensureTools(platforms, options.install, env);
  const work = join(cargoTargetDir(), 'build-all');
  // A cargo target folder of its own: the zig-linked host target would otherwise share
  // target/x86_64-unknown-linux-gnu with `npm run build`, and each would relink the other's.
  env.CARGO_TARGET_DIR = join(work, 'cargo');
  if (platforms.some((p) => strategy(p) === 'mingw')) env.LIBNODE_PATH = libnodeStub(join(work, 'libnode'));

  const generated = hashGenerated();
  const rows = [];
  const started = Date.now();
  for (const p of platforms) {
    const t0 = Date.now();
    const row = { name: p.name, triple: p.zig ?? p.triple, file: '-', bytes: '-', seconds: '', check: '' };
    console.log(`\n=== ${p.name} (${p.zig ?? p.triple}, ${strategy(p)}) ===`);
    const dest = join(ROOT, 'npm', p.name, `${BINARY}.${p.name}.node`);
    const daemonDest = join(ROOT, 'npm', p.name, daemonFileName(p.name.split('-')[0]));
    // An earlier run's file must not survive a failed build and be packed as this one.
    rmSync(dest, { force: true });
    rmSync(daemonDest, { force: true });
    try {
      const built = build(p, join(work, p.name), env);
      row.bytes = statSync(built).size;
      row.check = check(p, built);
      const ran = smokeTest(p, built);
      if (ran) row.check += `; ${ran}`;
      const daemon = buildDaemonFor(p, env);
      copyFileSync(built, dest);
      copyFileSync(daemon, daemonDest);
      chmodSync(daemonDest, 0o755);
      row.file = relative(ROOT, dest);
      row.check += `; daemon ${statSync(daemon).size} bytes`;
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
