// The cost of the web-page checks (src/daemon/http/browser.rs: Host, Origin, the proof
// of a preflight) on one HTTP round trip: sequential requests on one kept-alive
// HTTP/1.1 connection to a tokenless daemon on 127.0.0.1, each daemon binary given
// measured in alternating rounds (so a busy machine weighs on each alike):
//
//   node bench/http-doors.mjs [--n=2000] [--rounds=4] [--bin=BEFORE --bin=AFTER]
//
// Without --bin: this checkout's native-shell-daemon (`npm run build` puts it at the
// package root). With two, e.g. a
// build of the commit before the checks and one after, the difference of the medians
// is the checks' cost. Rows: `GET /health` (the Host and Origin checks only),
// `POST /filesystem.Filesystem/Stat` (JSON: every check, then a Connect call), `GET
// /files` of a 1 KiB file. Prints medians and p99 in microseconds.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const argv = process.argv.slice(2);
const value = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const N = Number(value('n', 2000));
const ROUNDS = Number(value('rounds', 4));
const bins = argv.filter((a) => a.startsWith('--bin=')).map((a) => a.slice('--bin='.length));
if (bins.length === 0) bins.push(join(root, 'native-shell-daemon'));

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function start(bin) {
  const dir = mkdtempSync(join(tmpdir(), 'nss-doors-bench-'));
  const file = join(dir, 'one-kib');
  writeFileSync(file, 'x'.repeat(1024));
  const child = spawn(bin, ['--socket', join(dir, 'run', 'daemon.sock'), '--listen', '127.0.0.1:0', '--project-root', dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      log += d;
      const m = /listening on http:\/\/[\d.]+:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`${bin} exited: ${log}`)));
  });
  return { child, dir, file, port };
}

function once(agent, port, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, method, path, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode && res.statusCode < 300 ? resolve() : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function measure(daemon) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const stat = JSON.stringify({ path: daemon.file });
  const rows = {
    'GET /health': () => once(agent, daemon.port, 'GET', '/health', {}),
    'POST Filesystem/Stat': () =>
      once(agent, daemon.port, 'POST', '/filesystem.Filesystem/Stat', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(stat) }, stat),
    'GET /files 1 KiB': () => once(agent, daemon.port, 'GET', `/files?path=${encodeURIComponent(daemon.file)}`, {}),
  };
  const out = {};
  for (const [name, run] of Object.entries(rows)) {
    for (let i = 0; i < 50; i++) await run();
    const times = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await run();
      times.push((performance.now() - t) * 1000);
    }
    out[name] = times;
  }
  agent.destroy();
  return out;
}

const daemons = [];
for (const bin of bins) daemons.push(await start(bin));
const all = daemons.map(() => ({}));
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, daemon] of daemons.entries()) {
      const got = await measure(daemon);
      for (const [name, times] of Object.entries(got)) (all[i][name] ??= []).push(...times);
    }
  }
} finally {
  for (const d of daemons) {
    d.child.kill('SIGTERM');
    rmSync(d.dir, { recursive: true, force: true });
  }
}
console.log(`${N} requests x ${ROUNDS} rounds per row, sequential on one kept-alive connection; µs`);
for (const [i, bin] of bins.entries()) {
  console.log(bin);
  for (const [name, times] of Object.entries(all[i])) {
    console.log(`  ${name.padEnd(22)} median ${quantile(times, 0.5).toFixed(1).padStart(7)}   p99 ${quantile(times, 0.99).toFixed(1).padStart(7)}`);
  }
}
