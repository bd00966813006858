// Spawn and round trip in process and through one or more daemon binaries, in one Node
// process, block by block in turn, so every column meets the same moment's load (finer
// than bench/daemon-turns.mjs, whose workers each take seconds):
// `node bench/daemon-blocks.mjs [--rounds=12] [--spawns=20] [--trips=50] --bin=A [--bin=B]...`
//
// Each `--bin` is a `native-shell-daemon` (a build before a change, one after) serving a
// client of this tree; the in-process column is this tree's addon. A round runs, for
// every column in turn (the order rotating from round to round), a block of `spawns`
// × `bash -c true` to its exit and a block of `trips` Python round trips
// (`sendInput(print(K))` to the prompt); a round's figure is the block's median, the
// ratio is taken against the in-process block of the same round. Printed: per column, the
// median over the rounds (min–max) of each figure and ratio, and the load average.
import { loadavg } from 'node:os';
import { resolve } from 'node:path';

import { PEERS } from './peers.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const found = args.find((a) => a.startsWith(`--${name}=`));
  return found ? found.slice(name.length + 3) : fallback;
};
const rounds = Number(option('rounds', '12'));
const spawns = Number(option('spawns', '20'));
const trips = Number(option('trips', '50'));
const bins = args.filter((a) => a.startsWith('--bin=')).map((a) => resolve(a.slice(6)));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length;
  return k % 2 ? s[(k - 1) / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
};
const fmt = (x) => (x >= 1 ? x.toFixed(2) : x.toFixed(3));
const spread = (xs) => `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

const columns = [{ name: 'in process', peer: await PEERS['addon-text']() }];
for (const bin of bins) {
  // bench/peers.mjs takes the daemon from this variable when it is set.
  process.env.NATIVE_SHELL_DAEMON_BIN = bin;
  columns.push({ name: bin, peer: await PEERS['addon-daemon']() });
}
for (const c of columns) {
  c.repl = await c.peer.repl();
  c.spawn = [];
  c.rtt = [];
  for (let k = 0; k < 5; k++) {
    await c.peer.exec('true');
    await c.repl.roundTrip(k);
  }
}

const loads = [load()];
let k = 1_000_000;
for (let round = 0; round < rounds; round++) {
  const shift = round % columns.length;
  for (const c of [...columns.slice(shift), ...columns.slice(0, shift)]) {
    const spawned = [];
    for (let i = 0; i < spawns; i++) spawned.push((await c.peer.exec('true')).exitMs);
    const tripped = [];
    for (let i = 0; i < trips; i++) tripped.push(await c.repl.roundTrip(k++));
    c.spawn.push(median(spawned));
    c.rtt.push(median(tripped));
  }
  loads.push(load());
  console.error(`  round ${round + 1}: ${columns.map((c) => `${fmt(c.spawn.at(-1))} / ${fmt(c.rtt.at(-1))}`).join(' | ')} (load ${loads.at(-1)})`);
}

const [base] = columns;
console.log(`${rounds} rounds × (${spawns} spawns, ${trips} round trips); node ${process.version}; load average ${loads[0]} at the start, ${loads.at(-1)} at the end`);
console.log('| column | spawn `bash -c true`, ms | ratio to in process | Python round trip, ms | ratio to in process |');
console.log('|---|---|---|---|---|');
for (const c of columns) {
  const ratio = (key) => (c === base ? '—' : `${spread(c[key].map((v, i) => v / base[key][i]))}×`);
  console.log(`| ${c.name} | ${spread(c.spawn)} | ${ratio('spawn')} | ${spread(c.rtt)} | ${ratio('rtt')} |`);
}
for (const c of columns) {
  await c.repl.close();
  await c.peer.close();
}
process.exit(0);
