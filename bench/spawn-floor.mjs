#!/usr/bin/env node
// A spawn against its floor, in one run: `run('true')` in a PTY with its files (this
// addon, in this Node process) beside a C program's forkpty + exec of `bash -c true` +
// read to EOF + waitpid (bench/limit/floor.c, compiled here with `cc`), block by block,
// so the machine's load hits both alike:
//
//   node bench/spawn-floor.mjs [--n=100] [--rounds=10] [--addon=PATH]... [--alternate] [--json]
//
// Each round runs a block of `n` spawns of every addon given (default: this package's
// index.js) and one of the floor, their order turning round by round. `--alternate`:
// the turns are taken spawn by spawn instead (the floor a process that spawns once per
// line it reads, `floor --serve`), so that the host's state after a pause hits both
// alike: on a 2-vCPU virtual machine here a block that follows a pause is slower all
// through, and the floor's block, which keeps one vCPU busy, is such a pause for the
// service's second vCPU (BENCHMARKS.md, "Twenty-fourth session"). Printed: per
// column the median of the blocks' median ms per spawn with its min–max over the
// blocks, and each addon's ratio to the floor (the medians' ratio, and per round the
// ratio of the two blocks that ran back to back: median, min–max); the JS thread's CPU
// per spawn, block by block only (its schedstat: what the host's event loop pays,
// whatever the wall time);
// the load average before and after. `--json`: a `RESULT {...}` line as well. Linux
// (forkpty, /proc). Several addons in one run share this process (each with its own
// runtime threads): for figures a user would see, give one addon per run.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { load, median, serviceIn, spawnBlock, summary } from './spawn-blocks.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const options = { n: 100, rounds: 10, addon: [], json: false, alternate: false };
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, '').split('=');
  if (key === 'addon') options.addon.push(resolve(value));
  else if (key === 'json') options.json = true;
  else if (key === 'alternate') options.alternate = true;
  else options[key] = Number(value);
}
if (options.addon.length === 0) options.addon.push(join(here, '..', 'index.js'));

/** CPU ns this (JS) thread has run: the first field of its schedstat. */
const jsThreadCpu = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);

/** Compiles the floor once per source change, beside the bench's other builds. */
function buildFloor() {
  const src = join(here, 'limit', 'floor.c');
  const outDir = join(here, '..', 'target', 'bench-limit');
  const bin = join(outDir, 'spawn-floor');
  mkdirSync(outDir, { recursive: true });
  let fresh = false;
  try {
    fresh = statSync(bin).mtimeMs >= statSync(src).mtimeMs;
  } catch {}
  if (!fresh) execFileSync('cc', ['-O2', '-Wall', '-o', bin, src, '-lutil'], { stdio: 'inherit' });
  return bin;
}

const floorBin = buildFloor();
const base = mkdtempSync(join(tmpdir(), 'nss-spawn-floor-'));
const columns = options.addon.map((path, i) => {
  const service = serviceIn(path, join(base, String(i)), 'spawn-floor');
  return { name: options.addon.length > 1 ? path : 'addon run()', service, blocks: [], jsCpu: [] };
});
const floor = { name: 'C forkpty floor', blocks: [] };

async function addonBlock(c, keep) {
  const cpuBefore = jsThreadCpu();
  const samples = await spawnBlock(c.service, options.n);
  if (keep) {
    c.blocks.push(median(samples));
    c.jsCpu.push((jsThreadCpu() - cpuBefore) / options.n / 1000);
  }
}

function floorBlock(keep) {
  const { samples } = JSON.parse(execFileSync(floorBin, [String(options.n)], { encoding: 'utf8' }));
  if (keep) floor.blocks.push(median(samples));
}

/** The floor as a process that spawns once per request (`floor --serve`). */
function floorServer() {
  const child = spawn(floorBin, ['--serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.resolve(Number(line)));
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the floor exited (${code})`));
  });
  return {
    /** One spawn's ms, measured by the floor itself. */
    spawn: () =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write('\n');
      }),
    close: () => child.stdin.end(),
  };
}

/** A round spawn by spawn: each addon, then the floor, `n` times (the order turning). */
async function alternateRound(server, round, keep) {
  const addonSamples = columns.map(() => []);
  const floorSamples = [];
  for (let i = 0; i < options.n; i++) {
    const steps = [
      ...columns.map((c, k) => async () => addonSamples[k].push(...(await spawnBlock(c.service, 1)))),
      async () => floorSamples.push(await server.spawn()),
    ];
    for (const step of (round + i) % 2 ? steps.reverse() : steps) await step();
  }
  if (!keep) return;
  // No JS thread CPU here: reading it around each spawn would cost more than a spawn's.
  columns.forEach((c, k) => c.blocks.push(median(addonSamples[k])));
  floor.blocks.push(median(floorSamples));
}

const loadBefore = load();
try {
  if (options.alternate) {
    const server = floorServer();
    try {
      await alternateRound(server, 0, false); // warm-up
      for (let round = 0; round < options.rounds; round++) await alternateRound(server, round, true);
    } finally {
      server.close();
    }
  } else {
    for (const c of columns) await addonBlock(c, false); // warm-up
    floorBlock(false);
    for (let round = 0; round < options.rounds; round++) {
      const steps = [...columns.map((c) => () => addonBlock(c, true)), () => floorBlock(true)];
      for (const step of round % 2 ? steps.reverse() : steps) await step();
    }
  }
} finally {
  for (const c of columns) await c.service.shutdown();
  rmSync(base, { recursive: true, force: true });
}
const ms = (s) => `${s.median.toFixed(3)} ms (${s.min.toFixed(3)}–${s.max.toFixed(3)})`;
const turns = options.alternate ? 'taking turns spawn by spawn' : 'taking turns block by block';
const result = { n: options.n, rounds: options.rounds, alternate: options.alternate, loadBefore, loadAfter: load(), floor: summary(floor.blocks), addons: [] };
console.log(`load average ${result.loadBefore} before, ${result.loadAfter} after; ${options.n} spawns × ${options.rounds} rounds each, ${turns}`);
console.log(`${floor.name}: ${ms(result.floor)} per spawn`);
for (const c of columns) {
  const perRound = c.blocks.map((b, i) => b / floor.blocks[i]);
  const a = {
    name: c.name,
    ...summary(c.blocks),
    ratio: summary(c.blocks).median / result.floor.median,
    roundRatio: summary(perRound),
    jsCpuMicros: c.jsCpu.length ? summary(c.jsCpu) : null,
  };
  result.addons.push(a);
  console.log(
    `${c.name}: ${ms(a)} per spawn; ${a.ratio.toFixed(2)}× the floor (per round ${a.roundRatio.median.toFixed(2)}×, ${a.roundRatio.min.toFixed(2)}–${a.roundRatio.max.toFixed(2)})` +
      (a.jsCpuMicros ? `; JS thread ${a.jsCpuMicros.median.toFixed(0)} µs CPU per spawn (${a.jsCpuMicros.min.toFixed(0)}–${a.jsCpuMicros.max.toFixed(0)})` : ''),
  );
}
if (options.json) console.log(`RESULT ${JSON.stringify(result)}`);
