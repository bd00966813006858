// `npm test` (`node scripts/test.mjs`): the README's test command. Builds the addon and
// the daemon, runs the type, generated-file, import-cycle and shared-dependency checks,
// cargo test and vitest, stopping at the first that fails, then prints a table of each
// step's wall time and CPU time (user + system of it and all it ran, from
// /proc/self/stat on Linux) and the machine's load, so a slow run says where its time
// went and whether the machine was busy (CONTRIBUTING.md: what a run costs).
//
// `cargo test` runs in the release profile, for this machine's triple named as `napi
// build` names it: it then reuses every dependency `npm run build` just compiled (one
// compilation of them for the whole command, see scripts/build-daemon.mjs), where a
// debug `cargo test` compiled all of them once more.
import { spawnSync, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hostTriple } from './build-daemon.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const steps = [
  ['build', npm, ['run', 'build']],
  ['tsc (tests)', npx, ['tsc', '-p', 'tsconfig.test.json']],
  ['check generated files', process.execPath, ['scripts/check-generated.mjs']],
  ['check import cycles', process.execPath, ['scripts/check-cycles.mjs']],
  ['check shared dependencies', process.execPath, ['scripts/check-shared-deps.mjs']],
  ['cargo test', 'cargo', ['test', '--quiet', '--release', '--target', hostTriple()]],
  ['vitest', npx, ['vitest', 'run']],
];

/** CPU seconds (user + system) of this process's waited-for children so far, or null. */
function childrenCpuSeconds() {
  try {
    // Fields after the command's `(...)`: state is field 3, cutime 16 and cstime 17.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / clockTicks();
  } catch {
    return null;
  }
}

let ticks;
function clockTicks() {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

const rows = [];
const started = performance.now();
const cpuAtStart = childrenCpuSeconds();
let failed = null;
for (const [name, command, args] of steps) {
  const load = loadavg()[0];
  const cpu0 = childrenCpuSeconds();
  const t0 = performance.now();
  console.log(`== ${name}: ${[command === process.execPath ? 'node' : command, ...args].join(' ')}`);
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  const cpu1 = childrenCpuSeconds();
  rows.push({ name, wall: (performance.now() - t0) / 1000, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, load });
  if (r.error || r.status !== 0) {
    failed = { name, why: r.error ? r.error.message : `exit ${r.status ?? r.signal}` };
    break;
  }
}

const fmt = (s) => (s === null ? '     -' : s.toFixed(0).padStart(6));
const cpuAtEnd = childrenCpuSeconds();
console.log('== npm test: seconds (wall, CPU = user + system of the step and all it ran, 1-minute load when it began)');
for (const row of rows) console.log(`${fmt(row.wall)} ${fmt(row.cpu)}  load ${row.load.toFixed(1).padStart(4)}  ${row.name}`);
console.log(`${fmt((performance.now() - started) / 1000)} ${fmt(cpuAtStart === null || cpuAtEnd === null ? null : cpuAtEnd - cpuAtStart)}  load ${loadavg()[0].toFixed(1).padStart(4)}  total`);
if (failed) {
  console.error(`npm test: ${failed.name} failed (${failed.why})`);
  process.exit(1);
}
