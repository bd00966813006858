#!/usr/bin/env node
// Builds of the addon against each other, each in a Node process of its own, as a user
// has it: `run('true')` in a PTY with its files, and what the whole process (every
// thread: JS, runtime, the rest) spent in CPU per spawn:
//
//   node bench/spawn-turns.mjs --addon=PATH --addon=PATH [--rounds=6] [--n=1500] [--json]
//
// spawn-ab.mjs puts two builds in one process, which is finer for wall time but gives
// each the other's threads too; here a round starts one fresh process per build (their
// order turning round by round), which runs 50 spawns to warm up and then `n` timed
// ones. Printed per build: the median over the rounds (min–max) of each round's median
// ms per spawn, of the process's CPU µs per spawn (`process.cpuUsage`, user + system, all
// its threads; the jobs' own CPU is not in it), and its thread count at the end; with two
// builds, the median of the rounds' differences (second − first). Linux (/proc).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { load, median, serviceIn, spawnBlock, summary } from './spawn-blocks.mjs';

const options = { addon: [], rounds: 6, n: 1500, json: false, child: '' };
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, '').split('=');
  if (key === 'addon') options.addon.push(resolve(value));
  else if (key === 'child') options.child = resolve(value);
  else if (key === 'json') options.json = true;
  else options[key] = Number(value);
}

/** In the child process: one build's figures, as one JSON line. */
async function measure(path) {
  const base = mkdtempSync(join(tmpdir(), 'nss-spawn-turns-'));
  const service = serviceIn(path, base, 'spawn-turns');
  try {
    await spawnBlock(service, 50);
    const cpuBefore = process.cpuUsage();
    const samples = await spawnBlock(service, options.n);
    const cpu = process.cpuUsage(cpuBefore);
    const threads = Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
    return { ms: median(samples), cpuMicros: (cpu.user + cpu.system) / options.n, threads };
  } finally {
    await service.shutdown();
    rmSync(base, { recursive: true, force: true });
  }
}

if (options.child) {
  console.log(JSON.stringify(await measure(options.child)));
} else {
  if (options.addon.length === 0) options.addon.push(resolve(fileURLToPath(new URL('../index.js', import.meta.url))));
  const script = fileURLToPath(import.meta.url);
  const rounds = options.addon.map(() => []);
  const loadBefore = load();
  for (let round = 0; round < options.rounds; round++) {
    const order = options.addon.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) {
      const out = execFileSync(process.execPath, [script, `--child=${options.addon[i]}`, `--n=${options.n}`], { encoding: 'utf8' });
      rounds[i].push(JSON.parse(out.trim().split('\n').pop()));
    }
  }
  const result = { n: options.n, rounds: options.rounds, loadBefore, loadAfter: load(), builds: [] };
  console.log(`load average ${result.loadBefore} before, ${result.loadAfter} after; ${options.n} spawns × ${options.rounds} processes per build`);
  options.addon.forEach((path, i) => {
    const b = { path, ms: summary(rounds[i].map((r) => r.ms)), cpuMicros: summary(rounds[i].map((r) => r.cpuMicros)), threads: summary(rounds[i].map((r) => r.threads)) };
    result.builds.push(b);
    console.log(
      `${path}: ${b.ms.median.toFixed(3)} ms (${b.ms.min.toFixed(3)}–${b.ms.max.toFixed(3)}) per spawn; process CPU ${b.cpuMicros.median.toFixed(0)} µs per spawn (${b.cpuMicros.min.toFixed(0)}–${b.cpuMicros.max.toFixed(0)}); ${b.threads.median} threads`,
    );
  });
  if (options.addon.length === 2) {
    const dMs = median(rounds[1].map((r, k) => (r.ms - rounds[0][k].ms) * 1000));
    const dCpu = median(rounds[1].map((r, k) => r.cpuMicros - rounds[0][k].cpuMicros));
    const faster = rounds[1].filter((r, k) => r.ms < rounds[0][k].ms).length;
    result.difference = { micros: dMs, cpuMicros: dCpu, secondFaster: faster };
    console.log(`second − first: ${dMs.toFixed(1)} µs per spawn (second faster in ${faster} of ${options.rounds} rounds), ${dCpu.toFixed(0)} µs of process CPU per spawn`);
  }
  if (options.json) console.log(`RESULT ${JSON.stringify(result)}`);
}
