// `npm test` (`node scripts/test.mjs`): the README's test command. Builds the addon, the
// daemon and the restart tests' second daemon, runs the type, generated-file,
// import-cycle and shared-dependency checks, then cargo test and vitest at the same time
// (both run to their end), stopping at the first step that fails, then prints a table of each step's wall time and CPU time (user + system of
// it and all it ran, from /proc/self/stat on Linux) and the machine's load, so a slow run
// says where its time went and whether the machine was busy (CONTRIBUTING.md: what a run
// costs), and the run as a fresh clone's figure.
//
// `cargo test` runs in the release profile, for this machine's triple named as `napi
// build` names it: it then reuses every dependency `npm run build` just compiled (one
// compilation of them for the whole command, see scripts/build-daemon.mjs), where a
// debug `cargo test` compiled all of them once more.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { hostTriple } from './build-daemon.mjs';
import { childrenCpuSeconds } from './run-measured.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const triple = hostTriple();
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(ROOT, process.env.CARGO_TARGET_DIR) : join(ROOT, 'target');
// A fresh clone's run: nothing compiled yet for the triple's release build.
const fresh = !existsSync(join(targetDir, triple, 'release', 'deps'));
const serial = process.env.NATIVE_SHELL_TEST_SERIAL === '1';

// [name, command, args, how]: `how.stdout` takes the step's output (the next daemon's path);
// `how.together` names a group of steps run at the same time (see below).
const steps = [
  ['build', npm, ['run', 'build']],
  ['tsc (tests)', npx, ['tsc', '-p', 'tsconfig.test.json']],
  ['check generated files', process.execPath, ['scripts/check-generated.mjs']],
  ['check import cycles', process.execPath, ['scripts/check-cycles.mjs']],
  ['check shared dependencies', process.execPath, ['scripts/check-shared-deps.mjs']],
  // The live-upgrade tests (tests/daemon/daemon_restart.rs, tests/daemon/daemon_restart_jobs.rs)
  // restart a daemon into a second build stamped with another version, to see the
  // version change in place (Linux only): the binary's crate compiled twice, nothing
  // else. One named in NATIVE_SHELL_NEXT_DAEMON is used as it is.
  ...(process.platform !== 'linux' || process.env.NATIVE_SHELL_NEXT_DAEMON
    ? []
    : [['second daemon (restart tests)', 'sh', ['scripts/build-next-daemon.sh'], { stdout: (out) => (process.env.NATIVE_SHELL_NEXT_DAEMON = out.trim().split('\n').pop()) }]]),
  // cargo test and vitest at the same time: vitest needs only what the build made (the
  // addon, the daemon, dist/), and spends most of its time waiting on the programs its
  // tests drive (about 280 CPU seconds in 220), while cargo test's build computes on
  // both cores and its links are serial: one after the other they left a core idle
  // for minutes. Both suites' tests bound time generously (both cores busy), as every
  // test here must. vitest's lines are printed as they come, each after `vitest | `;
  // cargo test's as cargo prints them. NATIVE_SHELL_TEST_SERIAL=1 runs them one after
  // the other (a failure's output then reads without the other's between).
  ['cargo test', 'cargo', ['test', '--quiet', '--release', '--target', triple], { together: serial ? undefined : 'suites' }],
  ['vitest', npx, ['vitest', 'run'], { together: serial ? undefined : 'suites', prefix: serial ? undefined : 'vitest | ' }],
];

const rows = [];
const started = performance.now();
const cpuAtStart = childrenCpuSeconds();
let failed = null;
for (let i = 0; i < steps.length && !failed; ) {
  const group = steps[i][3]?.together;
  if (!group) {
    failed = runOne(steps[i]);
    i += 1;
    continue;
  }
  const together = [];
  while (i < steps.length && steps[i][3]?.together === group) together.push(steps[i++]);
  failed = await runTogether(together);
}

/** Runs one step with the terminal's streams; its failure, or null. */
function runOne([name, command, args, how = {}]) {
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
  if (r.error || r.status !== 0) return { name, why: r.error ? r.error.message : `exit ${r.status ?? r.signal}` };
  if (how.stdout) {
    process.stdout.write(r.stdout);
    how.stdout(r.stdout);
  }
  return null;
}

/**
 * Runs steps at the same time, each through scripts/run-measured.mjs (its own CPU
 * seconds), and waits for all of them; the first failure, or null. A step with
 * `how.prefix` has its lines printed after that prefix, the others' as they write them.
 */
async function runTogether(group) {
  const load = loadavg()[0];
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'nss-test-'));
  const runs = group.map(([name, command, args, how = {}], index) => {
    console.log(`== ${name} (at the same time as ${group.filter((_, j) => j !== index).map(([other]) => other).join(', ')}): ${[command, ...args].join(' ')}`);
    const cpuFile = join(dir, `${index}.json`);
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-measured.mjs'), cpuFile, command, ...args], {
      cwd: ROOT,
      stdio: ['ignore', how.prefix ? 'pipe' : 'inherit', how.prefix ? 'pipe' : 'inherit'],
    });
    if (how.prefix) {
      for (const [stream, out] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
        createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => out.write(`${how.prefix}${line}\n`));
      }
    }
    return new Promise((done) => {
      child.on('error', (e) => done({ name, why: e.message, cpuFile, wall: (performance.now() - t0) / 1000 }));
      child.on('close', (code, signal) => {
        const wall = (performance.now() - t0) / 1000;
        console.log(`== ${name} ended (${code === 0 ? 'passed' : `exit ${code ?? signal}`}) after ${wall.toFixed(0)} s`);
        done({ name, why: code === 0 ? null : `exit ${code ?? signal}`, cpuFile, wall });
      });
    });
  });
  const ended = await Promise.all(runs);
  const loadAfter = loadavg()[0];
  for (const { name, cpuFile, wall } of ended) {
    let cpu = null;
    try {
      cpu = JSON.parse(readFileSync(cpuFile, 'utf8')).cpu;
    } catch {
      // The wrapper did not get to write it (killed): the step's CPU is unknown.
    }
    rows.push({ name, wall, cpu, load, loadAfter, together: group[0][3].together });
  }
  rmSync(dir, { recursive: true, force: true });
  const failure = ended.find((run) => run.why);
  return failure ? { name: failure.name, why: failure.why } : null;
}

const fmt = (s) => (s === null ? '     -' : s.toFixed(0).padStart(6));
const cpuAtEnd = childrenCpuSeconds();
console.log('== npm test: seconds (wall, CPU = user + system of the step and all it ran, 1-minute load when it began)');
for (const row of rows) console.log(`${fmt(row.wall)} ${fmt(row.cpu)}  load ${row.load.toFixed(1).padStart(4)}  ${row.name}${row.together ? ` (at the same time as ${rows.filter((other) => other !== row && other.together === row.together).map((other) => other.name).join(', ')})` : ''}`);
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
 * waits on programs); steps run at the same time as one, their CPU added up and the
 * longest wall. An estimate, printed with how it was made; the table is the
 * measurement.
 */
function freshCloneFigure() {
  const state = fresh
    ? `a fresh clone's run (nothing compiled in ${join(targetDir, triple, 'release')} when it began): ${total.toFixed(0)} s`
    : `a warm run (dependencies compiled before; a fresh clone's figure is in CONTRIBUTING.md): ${total.toFixed(0)} s`;
  if (rows.some((row) => row.cpu === null)) return `== npm test: ${state}`;
  // Steps run at the same time count as one: their CPU added up, the longest wall.
  const units = [];
  for (const row of rows) {
    const unit = row.together && units.find((u) => u.together === row.together);
    if (unit) {
      unit.cpu += row.cpu;
      unit.wall = Math.max(unit.wall, row.wall);
    } else units.push({ ...row });
  }
  const idle = units.reduce((sum, row) => {
    const load = Math.max(2, (row.load + row.loadAfter) / 2);
    return sum + Math.max(row.cpu / 2, (row.wall * 2) / load);
  }, 0);
  // Under a heavy load the share of the wall time spent waiting (sleeping programs,
  // timers) is scaled down with the rest: the estimate is then too low, and says so.
  const loaded = rows.some((row) => (row.load + row.loadAfter) / 2 > 4);
  return `== npm test: ${state}; on two idle cores about ${idle.toFixed(0)} s (${(idle / 60).toFixed(1)} min; each step's CPU / 2 or its wall × 2 / load, the longer${loaded ? '; at a load above 4 this undercounts what waited rather than computed' : ''})`;
}
