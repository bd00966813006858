// The daemon's spawn and round trip against in process, for one or more package trees
// taking turns (a build before a change and one after), so that every tree meets the same
// load: `node bench/daemon-turns.mjs [--rounds=8] [--n=100] [--only=spawn,rtt] [--root=DIR]...`
//
// A round runs, for each tree in turn (the order alternating from round to round), the
// `addon-text` peer (in process) and then the `addon-daemon` peer (a daemon of its own,
// the tree's `native-shell-daemon`) in fresh Node processes, through that tree's own
// bench/worker.mjs, so each tree's client and daemon are the ones measured. A round's
// figure is a worker's median over `n` spawns (`bash -c true`) or Python round trips; the
// ratio is taken within the round (the in-process and daemon runs that followed each
// other). Printed: per tree, the median over the rounds (min–max) of each figure and of
// the ratio, and the load average around each round. Without `--root`, this tree alone.
// `--json`: one line `RESULT <json>` with every round's figures.
import { spawn } from 'node:child_process';
import { loadavg as osLoad } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const found = args.find((a) => a.startsWith(`--${name}=`));
  return found ? found.slice(name.length + 3) : fallback;
};
const rounds = Number(option('rounds', '8'));
const n = Number(option('n', '100'));
const only = option('only', 'spawn,rtt').split(',');
const json = args.includes('--json');
const roots = args.filter((a) => a.startsWith('--root=')).map((a) => resolve(a.slice(7)));
if (roots.length === 0) roots.push(resolve(here, '..'));

const PEERS = ['addon-text', 'addon-daemon'];

/** One worker of `root`'s bench; its median, or null when it failed (said on stderr). */
function worker(root, peer, scenario) {
  const params = scenario === 'rtt' ? { n, warmup: 5 } : { n };
  return new Promise((done) => {
    const env = { ...process.env };
    // Each tree's own daemon (bench/peers.mjs takes the tree's `native-shell-daemon`).
    delete env.NATIVE_SHELL_DAEMON_BIN;
    const child = spawn(process.execPath, ['--expose-gc', join(root, 'bench', 'worker.mjs'), peer, scenario, JSON.stringify(params)], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const m = /^RESULT (.*)$/m.exec(out);
      if (code === 0 && m) {
        const samples = JSON.parse(m[1]).samples ?? [];
        return done(samples.length ? median(samples) : null);
      }
      console.error(`  ! ${root} ${peer}/${scenario} failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' | ')}`);
      done(null);
    });
  });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length;
  return k % 2 ? s[(k - 1) / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
}

const fmt = (x) => (x >= 1 ? x.toFixed(2) : x.toFixed(3));
const spread = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x));
  return v.length ? `${fmt(median(v))} (${fmt(Math.min(...v))}–${fmt(Math.max(...v))})` : '—';
};
const load = () => osLoad().map((l) => l.toFixed(1)).join(' ');

// figures[root][scenario] = [{ inProcess, daemon, ratio, load }]
const figures = Object.fromEntries(roots.map((r) => [r, Object.fromEntries(only.map((s) => [s, []]))]));
for (let round = 0; round < rounds; round++) {
  const order = round % 2 ? [...roots].reverse() : roots;
  for (const root of order) {
    for (const scenario of only) {
      const before = load();
      const [inProcess, daemon] = [await worker(root, PEERS[0], scenario), await worker(root, PEERS[1], scenario)];
      const ratio = inProcess && daemon ? daemon / inProcess : NaN;
      figures[root][scenario].push({ inProcess, daemon, ratio, load: before });
      if (!json) console.error(`  round ${round + 1} ${root} ${scenario}: ${fmt(inProcess ?? NaN)} / ${fmt(daemon ?? NaN)} ms, ${ratio.toFixed(2)}× (load ${before})`);
    }
  }
}

if (json) {
  process.stdout.write(`RESULT ${JSON.stringify(figures)}\n`);
} else {
  console.log(`${rounds} rounds × ${n}; node ${process.version}; load now ${load()}`);
  console.log('| tree | scenario | in process, ms | daemon, ms | ratio |');
  console.log('|---|---|---|---|---|');
  for (const root of roots) {
    for (const scenario of only) {
      const rows = figures[root][scenario];
      console.log(
        `| ${root} | ${scenario} | ${spread(rows.map((r) => r.inProcess ?? NaN))} | ${spread(rows.map((r) => r.daemon ?? NaN))} | ${spread(rows.map((r) => r.ratio))}× |`,
      );
    }
  }
}
