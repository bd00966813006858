// `npm run artifacts [-- --cwd DIR]`
//
// Puts the addons a build left at the package root (`npm run build` makes this machine's
// `native-shell-service.<platform>.node` there) into their platform packages in npm/, with
// napi's own `napi artifacts`, so `npm pack npm/<platform>` carries its addon
// (docs/releasing.md, "Packing a platform package").
//
// `napi artifacts` alone refuses a partial set: it wants a `.node` for every target in
// package.json (the release has all five, from `npm run build:all`). Here it is given a
// napi config listing only the targets whose addon is at the root — the same binary name
// and settings otherwise — so one machine's build packs one platform package.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseTriple } from '@napi-rs/cli';

import { daemonFileName } from './build-daemon.mjs';

const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  let cwd = HERE;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--cwd') cwd = resolve(argv[++i] ?? '');
    else if (arg.startsWith('--cwd=')) cwd = resolve(arg.slice('--cwd='.length));
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run artifacts [-- --cwd DIR]   (DIR: the package root, default this checkout)');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  return { cwd };
}

function main() {
  const { cwd } = parseArgs(process.argv.slice(2));
  const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'));
  const napi = pkg.napi;
  const present = napi.targets.filter((t) => existsSync(join(cwd, `${napi.binaryName}.${parseTriple(t).platformArchABI}.node`)));
  if (present.length === 0) {
    const names = napi.targets.map((t) => `${napi.binaryName}.${parseTriple(t).platformArchABI}.node`).join(', ');
    throw new Error(`no addon at ${cwd} (one of ${names}): run \`npm run build\` first`);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'nss-artifacts-'));
  try {
    const config = join(scratch, 'napi.json');
    // The package's napi settings with the targets narrowed; a relative dtsHeaderFile
    // would be looked up beside this file, but `artifacts` reads no typings.
    writeFileSync(config, JSON.stringify({ ...napi, targets: present }));
    const bin = join(HERE, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi');
    // The addons are at the root; napi skips node_modules and npm/ itself when it looks.
    const r = spawnSync(bin, ['artifacts', '--cwd', cwd, '-c', config, '--output-dir', '.', '--npm-dir', 'npm'], {
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    if (r.error) throw new Error(`napi artifacts: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`napi artifacts exited with ${r.status ?? r.signal}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  for (const t of present) {
    const abi = parseTriple(t).platformArchABI;
    const placed = join(cwd, 'npm', abi, `${napi.binaryName}.${abi}.node`);
    if (!existsSync(placed)) throw new Error(`napi artifacts did not put ${placed}`);
    console.log(`npm/${abi}: ${napi.binaryName}.${abi}.node (npm pack npm/${abi} carries it)`);
    // The daemon `npm run build` left at the root is this machine's: it goes with its addon.
    const daemon = daemonFileName(parseTriple(t).platform);
    if (existsSync(join(cwd, daemon)) && abi.startsWith(`${process.platform}-${process.arch}`)) {
      copyFileSync(join(cwd, daemon), join(cwd, 'npm', abi, daemon));
      chmodSync(join(cwd, 'npm', abi, daemon), 0o755);
      console.log(`npm/${abi}: ${daemon}`);
    }
  }
}

try {
  main();
} catch (e) {
  console.error(`artifacts: ${e.message}`);
  process.exit(1);
}
