// What the daemon's check of who connects costs (src/daemon/peer.rs): a new connection's
// time from `connect()` to the first byte of the daemon's answer, on the unix socket (a
// `hello`) and on a tokenless loopback HTTP port (`GET /health`), for one or more daemon
// binaries, interleaved in rounds so the machine's load falls on each alike. With
// `--sockets=N`, N other loopback TCP connections stay open meanwhile (what a scan of
// /proc/net/tcp paid for, and another user's connection flood made it pay).
//
//   node bench/peer-check.mjs [--rounds=5] [--n=200] [--sockets=0] NAME=BINARY...
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const opts = { rounds: 5, n: 200, sockets: 0 };
const binaries = [];
for (const a of process.argv.slice(2)) {
  const m = /^--(\w+)=(\d+)$/.exec(a);
  if (m) opts[m[1]] = Number(m[2]);
  else if (a.includes('=')) binaries.push(a.split('=', 2));
}
if (binaries.length === 0) {
  console.error('usage: node bench/peer-check.mjs [--rounds=5] [--n=200] [--sockets=0] NAME=BINARY...');
  process.exit(2);
}

const frame = (m) => {
  const body = Buffer.from(JSON.stringify(m));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
};
const HELLO = frame({ id: 1, method: 'hello', params: { version: 'bench', protocol: 1, pid: process.pid } });
const HEALTH = Buffer.from('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');

/** ms from connect() to the first byte back, for one connection. */
function once(target, request) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const s = createConnection(target);
    s.once('connect', () => s.write(request));
    s.once('data', () => {
      resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      s.destroy();
    });
    s.once('error', reject);
    s.once('close', () => reject(new Error('closed without an answer')));
  });
}

async function start(bin) {
  const dir = mkdtempSync(join(tmpdir(), 'nss-peer-bench-'));
  const socket = join(dir, 'run', 'daemon.sock');
  const child = spawn(bin, ['--socket', socket, '--listen', '127.0.0.1:0', '--project-root', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  for (let i = 0; i < 400 && !/listening on http:\/\/([\d.]+):(\d+)/.test(err); i++) await new Promise((r) => setTimeout(r, 25));
  const m = /listening on http:\/\/([\d.]+):(\d+)/.exec(err);
  if (!m) throw new Error(`${bin} did not listen: ${err}`);
  return { child, dir, socket, tcp: { host: m[1], port: Number(m[2]) } };
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

// Other sockets, open the whole time: a listener of ours and its clients.
const others = [];
if (opts.sockets > 0) {
  const server = createServer((c) => others.push(c)).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  for (let i = 0; i < opts.sockets; i++) {
    const c = createConnection(server.address().port, '127.0.0.1');
    await new Promise((r) => c.once('connect', r));
    others.push(c);
  }
  others.push(server);
}

const times = Object.fromEntries(binaries.map(([name]) => [name, { unix: [], http: [] }]));
for (let round = 0; round < opts.rounds; round++) {
  for (const [name, bin] of binaries) {
    const d = await start(bin);
    for (let i = 0; i < 10; i++) await once(d.socket, HELLO); // warm up
    for (let i = 0; i < opts.n; i++) times[name].unix.push(await once(d.socket, HELLO));
    for (let i = 0; i < opts.n; i++) times[name].http.push(await once(d.tcp, HEALTH));
    d.child.kill('SIGTERM');
    await new Promise((r) => d.child.once('exit', r));
    rmSync(d.dir, { recursive: true, force: true });
  }
}
for (const o of others) (o.destroy ?? o.close).call(o);

console.log(`connect → first byte, ms: median (p90, p99), ${opts.rounds}×${opts.n} per door; ${opts.sockets} other TCP connections open`);
for (const [name] of binaries) {
  const f = (xs) => `${quantile(xs, 0.5).toFixed(3)} (${quantile(xs, 0.9).toFixed(3)}, ${quantile(xs, 0.99).toFixed(3)})`;
  console.log(`${name}: unix ${f(times[name].unix)}; http ${f(times[name].http)}`);
}
