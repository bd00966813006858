#!/usr/bin/env node
// What the unix socket supervisor (src/platform/linux/sandbox/supervise/) adds to a
// job's calls: below Landlock ABI 9 a sandboxed job's `connect`, `sendmsg` and
// addressed `sendto` are made by the service (docs/sandbox.md, "Unix sockets").
//
//   node bench/unix-connect.mjs [--n=2000] [--rounds=5] [--json]
//
// A server of this process listens on a unix socket; two services, plain and sandboxed
// with that socket in `unixSockets`, take turns running one Python job per round that
// times, call by call (perf_counter_ns around the call only), `n` connects to the
// socket, `n` datagrams sent with `sendto` to an address and `n` `sendmsg` on a
// connected `socketpair` (which the filter cannot tell from an addressed one). Per
// kind: the median call of each job, then the median over the rounds, plain and
// sandboxed, their difference, and the jobs' lowest and highest median (a run whose
// jobs differ widely was bimodal: docs/sandbox.md, "What it costs"); the load average
// before and after. `--json`: one `RESULT {...}` line as well. Linux.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const options = { n: 2000, rounds: 5, json: false };
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, '').split('=');
  if (key === 'json') options.json = true;
  else options[key] = Number(value);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync('/var/tmp/nss-unix-bench-');
const stream = join(dir, 's.sock');
const server = createServer((c) => c.destroy());
await new Promise((r) => server.listen(stream, r));
const { ShellExecutionService } = require(join(here, '..', 'index.js'));
const services = {
  plain: new ShellExecutionService({ projectRoot: dir, persistOutput: false, sandbox: false }),
  sandboxed: new ShellExecutionService({ projectRoot: dir, persistOutput: false, sandbox: { unixSockets: [stream] } }),
};

// The datagram socket is the job's own (in the project: reachable without a list).
const job = `/usr/bin/python3 - <<'PYEOF'
import socket, time, os
n = ${options.n}
def med(xs): return sorted(xs)[len(xs) // 2] / 1000
clock = time.perf_counter_ns
connects = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    t = clock(); s.connect(${JSON.stringify(stream)}); connects.append(clock() - t)
    s.close()
d = os.path.join(${JSON.stringify(dir)}, 'd%d.sock' % os.getpid())
r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind(d)
w = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sends = []
for i in range(n):
    t = clock(); w.sendto(b'x', d); sends.append(clock() - t)
    r.recv(8)
a, b = socket.socketpair()
msgs = []
for i in range(n):
    t = clock(); a.sendmsg([b'x']); msgs.append(clock() - t)
    b.recv(8)
os.unlink(d)
print('connect=%.1f sendto=%.1f sendmsg=%.1f' % (med(connects), med(sends), med(msgs)))
PYEOF`;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const loadBefore = load();
const kinds = ['connect', 'sendto', 'sendmsg'];
const seen = { plain: { connect: [], sendto: [], sendmsg: [] }, sandboxed: { connect: [], sendto: [], sendmsg: [] } };
for (let round = 0; round < options.rounds + 1; round++) {
  const order = round % 2 ? ['plain', 'sandboxed'] : ['sandboxed', 'plain'];
  for (const name of order) {
    const r = await services[name].run(job, { mode: 'pipes', timeoutMs: 120_000 });
    const line = r.output.trim().split('\n').pop() ?? '';
    const values = Object.fromEntries(line.split(' ').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
    if (kinds.some((k) => !Number.isFinite(values[k]))) throw new Error(`the ${name} job said: ${r.output}${r.error ?? ''}`);
    if (round > 0) for (const k of kinds) seen[name][k].push(values[k]); // round 0 warms up
  }
}
const result = {};
const range = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
for (const k of kinds) {
  const [plain, boxed] = [median(seen.plain[k]), median(seen.sandboxed[k])];
  result[k] = {
    plainUs: plain,
    sandboxedUs: boxed,
    costUs: boxed - plain,
    plainRangeUs: [Math.min(...seen.plain[k]), Math.max(...seen.plain[k])],
    sandboxedRangeUs: [Math.min(...seen.sandboxed[k]), Math.max(...seen.sandboxed[k])],
  };
  console.log(
    `${k}: plain ${plain.toFixed(1)} µs (${range(seen.plain[k])}), sandboxed ${boxed.toFixed(1)} µs (${range(seen.sandboxed[k])}) per call (+${(boxed - plain).toFixed(1)} µs), median of ${options.rounds} jobs × ${options.n} calls`,
  );
}
result.load = { before: loadBefore, after: load() };
console.log(`load average (1, 5, 15 min): ${result.load.before} before, ${result.load.after} after`);
if (options.json) console.log(`RESULT ${JSON.stringify(result)}`);
for (const s of Object.values(services)) await s.shutdown();
server.close();
rmSync(dir, { recursive: true, force: true });
