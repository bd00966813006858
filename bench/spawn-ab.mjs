#!/usr/bin/env node
// Two builds of the addon against each other, in one process: `run('true')` in a PTY
// with its files, blocks of each taking turns, so a change of a few tens of µs shows
// through a machine whose speed drifts by more than that from minute to minute (on the
// 2-vCPU machines here the floor itself moved from 1.5 to 2.0 ms within minutes):
//
//   node bench/spawn-ab.mjs --a=PATH --b=PATH [--blocks=60] [--n=40] [--json]
//
// PATH is an addon's `.node` file or index.js (a copy of a build: `cp
// native-shell-service.*.node /tmp/before.node`). Each round runs a block of `n`
// spawns of each, their order turning round by round. Printed: each build's median of
// its blocks' medians, and the median of the paired differences (B − A of the two
// blocks of a round, ms per spawn) with how many rounds B was the faster in. With
// `--a` and `--b` the same file this prints the noise left (an A/A run). Each build
// has its own service and runtime; the other's threads sleep meanwhile (for a change
// to the threads themselves, spawn-turns.mjs gives each build a process). For figures
// against the C floor use spawn-floor.mjs, one build per run. Linux (/proc/loadavg).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { load, median, serviceIn, spawnBlock } from './spawn-blocks.mjs';

const options = { a: '', b: '', blocks: 60, n: 40, json: false };
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, '').split('=');
  if (key === 'json') options.json = true;
  else if (key === 'a' || key === 'b') options[key] = resolve(value);
  else options[key] = Number(value);
}
if (!options.a || !options.b) {
  console.error('usage: node bench/spawn-ab.mjs --a=PATH --b=PATH [--blocks=60] [--n=40] [--json]');
  process.exit(2);
}

const base = mkdtempSync(join(tmpdir(), 'nss-spawn-ab-'));
const builds = {
  a: serviceIn(options.a, join(base, 'a'), 'spawn-ab'),
  b: serviceIn(options.b, join(base, 'b'), 'spawn-ab'),
};
/** The median ms per spawn of `n` spawns. */
const block = async (s) => median(await spawnBlock(s, options.n));

const loadBefore = load();
await block(builds.a);
await block(builds.b);
const a = [];
const b = [];
const differences = [];
for (let round = 0; round < options.blocks; round++) {
  const order = round % 2 ? ['b', 'a'] : ['a', 'b'];
  const got = {};
  for (const name of order) got[name] = await block(builds[name]);
  a.push(got.a);
  b.push(got.b);
  differences.push(got.b - got.a);
}
await Promise.all(Object.values(builds).map((s) => s.shutdown()));

const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;
const fasterB = differences.filter((d) => d < 0).length;
console.log(`load average ${loadBefore} before, ${load()} after; ${options.blocks} rounds of ${options.n} spawns each`);
console.log(`A ${options.a}: ${median(a).toFixed(3)} ms per spawn`);
console.log(`B ${options.b}: ${median(b).toFixed(3)} ms per spawn`);
console.log(`B − A: ${us(median(differences))} per spawn (median of the rounds' differences); B faster in ${fasterB} of ${differences.length} rounds`);
if (options.json) {
  const result = { a: median(a), b: median(b), difference: median(differences), fasterB, rounds: differences.length };
  console.log(`RESULT ${JSON.stringify(result)}`);
}
