// `npm test` (`node scripts/test.mjs`): the README's test command. Builds the addon, the
// daemon and the restart tests' second daemon, runs the type, generated-file,
// import-cycle and shared-dependency checks, cargo test and vitest, stopping at the first
// that fails, then prints a table of each step's wall time and CPU time (user + system of
// it and all it ran, from /proc/self/stat on Linux) and the machine's load, so a slow run
// says where its time went and whether the machine was busy (CONTRIBUTING.md: what a run
// costs), and the run as a fresh clone's figure.
//
// `cargo test` runs in the release profile, for this machine's triple named as `napi
// build` names it: it then reuses every dependency `npm run build` just compiled (one
// compilation of them for the whole command, see scripts/build-daemon.mjs), where a
// debug `cargo test` compiled all of them once more.
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hostTriple } from './build-daemon.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const triple = hostTriple();
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(ROOT, process.env.CARGO_TARGET_DIR) : join(ROOT, 'target');
// A fresh clone's run: nothing compiled yet for the triple's release build.
const fresh = !existsSync(join(targetDir, triple, 'release', 'deps'));

// [name, command, args, how]: `how.stdout` takes the step's output (the next daemon's path).
const steps = [
  ['build', npm, ['run', 'build']],
  ['tsc (tests)', npx, ['tsc', '-p', 'tsconfig.test.json']],
  ['check generated files', process.execPath, ['scripts/check-generated.mjs']],
  ['check import cycles', process.execPath, ['scripts/check-cycles.mjs']],
  ['check shared dependencies', process.execPath, ['scripts/check-shared-deps.mjs']],
  // The live-upgrade tests (tests/daemon_restart.rs, tests/daemon_restart_jobs.rs)
  // restart a daemon into a second build stamped with another version, to see the
  // version change in place (Linux only): the binary's crate compiled twice, nothing
  // else. One named in NATIVE_SHELL_NEXT_DAEMON is used as it is.
  ...(process.platform !== 'linux' || process.env.NATIVE_SHELL_NEXT_DAEMON
    ? []
    : [['second daemon (restart tests)', 'sh', ['scripts/build-next-daemon.sh'], { stdout: (out) => (process.env.NATIVE_SHELL_NEXT_DAEMON = out.trim().split('\n').pop()) }]]),
  ['cargo test', 'cargo', ['test', '--quiet', '--release', '--target', triple]],
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
for (const [name, command, args, how = {}] of steps) {
  const load = loadavg()[0];
  const cpu0 = childrenCpuSeconds();
  const t0 = performance.now();
  console.log(`== ${name}: ${[command === process.execPath ? 'node' : command, ...args].join(' ')}`);
  const r = spawnSync(command, args, {
    cwd: ROOT,
    stdio: ['inherit', how.stdout ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  const cpu1 = childrenCpuSeconds();
  rows.push({ name, wall: (performance.now() - t0) / 1000, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, load, loadAfter: loadavg()[0] });
  if (r.error || r.status !== 0) {
    failed = { name, why: r.error ? r.error.message : `exit ${r.status ?? r.signal}` };
    break;
  }
  if (how.stdout) {
    process.stdout.write(r.stdout);
    how.stdout(r.stdout);
  }
}

const fmt = (s) => (s === null ? '     -' : s.toFixed(0).padStart(6));
const cpuAtEnd = childrenCpuSeconds();
console.log('== npm test: seconds (wall, CPU = user + system of the step and all it ran, 1-minute load when it began)');
for (const row of rows) console.log(`${fmt(row.wall)} ${fmt(row.cpu)}  load ${row.load.toFixed(1).padStart(4)}  ${row.name}`);
const total = (performance.now() - started) / 1000;
console.log(`${fmt(total)} ${fmt(cpuAtStart === null || cpuAtEnd === null ? null : cpuAtEnd - cpuAtStart)}  load ${loadavg()[0].toFixed(1).padStart(4)}  total`);
console.log(freshCloneFigure());
if (failed) {
  console.error(`npm test: ${failed.name} failed (${failed.why})`);
  process.exit(1);
}

/**
 * The run as a fresh clone's figure (the goal: `npm install && npm test` in 8 minutes on
 * two cores). Says whether the run began with nothing compiled (a fresh clone's, or an
 * empty CARGO_TARGET_DIR) or warm. Then an estimate for two idle cores: each step takes
 * its CPU time over two cores, or its wall time scaled by the share of two cores the
 * machine's load left it, whichever is longer (a build computes, a test suite mostly
 * waits on programs). An estimate, printed with how it was made; the table is the
 * measurement.
 */
function freshCloneFigure() {
  const state = fresh
    ? `a fresh clone's run (nothing compiled in ${join(targetDir, triple, 'release')} when it began): ${total.toFixed(0)} s`
    : `a warm run (dependencies compiled before; a fresh clone's figure is in CONTRIBUTING.md): ${total.toFixed(0)} s`;
  if (rows.some((row) => row.cpu === null)) return `== npm test: ${state}`;
  const idle = rows.reduce((sum, row) => {
    const load = Math.max(2, (row.load + row.loadAfter) / 2);
    return sum + Math.max(row.cpu / 2, (row.wall * 2) / load);
  }, 0);
  // Under a heavy load the share of the wall time spent waiting (sleeping programs,
  // timers) is scaled down with the rest: the estimate is then too low, and says so.
  const loaded = rows.some((row) => (row.load + row.loadAfter) / 2 > 4);
  return `== npm test: ${state}; on two idle cores about ${idle.toFixed(0)} s (${(idle / 60).toFixed(1)} min; each step's CPU / 2 or its wall × 2 / load, the longer${loaded ? '; at a load above 4 this undercounts what waited rather than computed' : ''})`;
}
