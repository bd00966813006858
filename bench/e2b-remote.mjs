// The daemon's envd face measured through E2B's own SDKs, beside the
// same calls through the daemon's unix socket and in process. One Node process, one
// daemon of its own (own socket, own XDG_RUNTIME_DIR, a free port):
//
//   node bench/e2b-remote.mjs [--n=200] [--concurrent=100] [--jobs=200] [--json]
//
// Rows: `commands.run('true')` through the e2b npm SDK (which runs `/bin/bash -l -c
// true`: a login shell), the same command line and plain `true` through the unix-socket
// client and in process (`new ShellExecutionService()`); a Python REPL round trip
// (`print(k)` in, `k` out) through the SDK (sendStdin + the Connect stream), the unix
// socket and in process; the e2b PyPI SDK's `commands.run('true')` and round trip
// (bench/e2b_python.py, when Python has `e2b`); `n` concurrent `commands.run('true')`
// from one SDK client; the daemon's RSS with `jobs` running `sleep 600` jobs started
// through the SDK. `--json`: a last line `RESULT {...}` for bench/run.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const N = Number(args.n ?? 200);
const CONCURRENT = Number(args.concurrent ?? 100);
const JOBS = Number(args.jobs ?? 200);
const WARMUP = 5;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => quantile(xs, 0.5);
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
const stats = (xs) => ({ median: median(xs), p99: quantile(xs, 0.99), n: xs.length });

function daemonBin() {
  const c = [process.env.NATIVE_SHELL_DAEMON_BIN, join(root, 'native-shell-daemon'), join(root, 'target/release/native-shell-daemon')].filter(
    (p) => p && existsSync(p),
  );
  if (!c.length) throw new Error('no native-shell-daemon: npm run build');
  process.env.NATIVE_SHELL_DAEMON_BIN = c[0];
  return c[0];
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : null;
}

async function times(n, f) {
  for (let i = 0; i < WARMUP; i++) await f(i);
  return timed(n, f);
}

async function timed(n, f) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/** A Python REPL on pipes through the SDK: each round trip one SendInput and the stream's answer. */
async function sdkRepl(sandbox) {
  let out = '';
  let waiter = null;
  const h = await sandbox.commands.run('exec python3 -q -u -i', {
    background: true,
    stdin: true,
    timeoutMs: 0,
    onStdout: (d) => {
      out += d;
      if (waiter && out.includes(waiter.want)) waiter.done();
    },
  });
  return {
    roundTrip: (k) =>
      new Promise((resolve) => {
        const want = `${k}\n`;
        waiter = { want, done: () => ((waiter = null), (out = ''), resolve()) };
        sandbox.commands.sendStdin(h.pid, `print(${k})\n`);
      }),
    close: () => sandbox.commands.kill(h.pid),
  };
}

/** The same REPL through our service (in process or the daemon's client): a PTY, sendInput with a pattern. */
async function serviceRepl(svc) {
  const r = await svc.run('python3 -q -i', { callbackPattern: '>>> $' });
  return {
    roundTrip: async (k) => {
      const o = await svc.sendInput(r.handle, `print(${k})`, { pattern: '>>> $', timeoutMs: 10_000 });
      if (o.status !== 'matched') throw new Error(`round trip: ${o.status}`);
    },
    close: () => svc.kill(r.handle, { graceMs: 100 }),
  };
}

async function main() {
  const { Sandbox } = await import('e2b');
  const { ShellExecutionService } = require('../service.js');
  const bin = daemonBin();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-e2b-bench-')));
  const run = join(base, 'run');
  mkdirSync(run, { mode: 0o700 });
  mkdirSync(join(base, 'project'));
  mkdirSync(join(base, 'home'));
  // Every client's jobs get this HOME: in process and the unix socket's inherit this
  // process's environment, the envd face's the daemon's (below).
  process.env.HOME = join(base, 'home');
  const socket = join(run, 'daemon.sock');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const daemon = spawn(bin, ['--socket', socket, '--listen', `127.0.0.1:${port}`, '--project-root', join(base, 'project')], {
    // A scratch HOME: the SDK runs every command in a login shell (`bash -l`), which would
    // otherwise source the machine's profile (pyenv's rehash here: tens of ms, and a lock
    // that concurrent login shells queue on), not what is measured.
    env: { ...process.env, XDG_RUNTIME_DIR: run, HOME: join(base, 'home') },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const result = { load: loadavg().map((l) => l.toFixed(2)).join(' '), n: N };
  let inProc = null;
  let viaSocket = null;
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 400) throw new Error('the daemon did not answer /health');
      await sleep(25);
    }
    const sandbox = await Sandbox.create({ debug: true, sandboxUrl: url });
    const opts = { projectRoot: join(base, 'project'), ioDir: join(base, 'io'), maxJobs: 4096 };
    inProc = new ShellExecutionService(opts);
    viaSocket = new ShellExecutionService({ ...opts, daemon: { socket } });
    await viaSocket.sessionId;

    // commands.run('true'), interleaved in blocks of 20 so load drifts hit all alike.
    const rows = {
      sdk: [],
      socketLogin: [],
      socketTrue: [],
      inProcLogin: [],
      inProcTrue: [],
    };
    const calls = {
      sdk: () => sandbox.commands.run('true'),
      socketLogin: () => viaSocket.run('/bin/bash -l -c true', { mode: 'pipes' }),
      socketTrue: () => viaSocket.run('true', { mode: 'pipes' }),
      inProcLogin: () => inProc.run('/bin/bash -l -c true', { mode: 'pipes' }),
      inProcTrue: () => inProc.run('true', { mode: 'pipes' }),
    };
    for (const f of Object.values(calls)) for (let i = 0; i < WARMUP; i++) await f();
    for (let done = 0; done < N; done += 20) {
      for (const [k, f] of Object.entries(calls)) rows[k].push(...(await timed(Math.min(20, N - done), f)));
    }
    result.run = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, stats(v)]));

    // Python round trips.
    const repls = { sdk: await sdkRepl(sandbox), socket: await serviceRepl(viaSocket), inProc: await serviceRepl(inProc) };
    result.rtt = {};
    for (const [k, r] of Object.entries(repls)) {
      result.rtt[k] = stats(await times(N, (i) => r.roundTrip(1_000_000 + i)));
      await r.close();
    }

    // The e2b Python SDK, if this Python has it.
    const python = process.env.PYTHON ?? 'python3';
    const py = spawnSync(python, [join(here, 'e2b_python.py'), String(N)], {
      encoding: 'utf8',
      env: { ...process.env, E2B_DEBUG: 'true', E2B_SANDBOX_URL: url },
      timeout: 600_000,
    });
    const pm = /^RESULT (.*)$/m.exec(py.stdout ?? '');
    result.python = pm ? JSON.parse(pm[1]) : { skipped: (py.stderr || String(py.error)).trim().split('\n').slice(-1)[0] };

    // Concurrent commands.run('true') from one client.
    const t0 = performance.now();
    const failures = [];
    const each = (
      await Promise.all(
        Array.from({ length: CONCURRENT }, async () => {
          const s = performance.now();
          try {
            await sandbox.commands.run('true');
          } catch (e) {
            failures.push(String(e?.message ?? e).slice(0, 200));
            return null;
          }
          return performance.now() - s;
        }),
      )
    ).filter((ms) => ms !== null);
    result.concurrent = { n: CONCURRENT, failed: failures.length, firstFailure: failures[0], totalMs: performance.now() - t0, p50: median(each), p99: quantile(each, 0.99) };

    // The daemon's memory with JOBS running jobs, started through the SDK.
    await sleep(500);
    const rss0 = rssKiB(daemon.pid);
    const pids = [];
    for (let i = 0; i < JOBS; i++) {
      const h = await sandbox.commands.run('sleep 600', { background: true, timeoutMs: 0 });
      await h.disconnect();
      pids.push(h.pid);
    }
    await sleep(1000);
    const rss1 = rssKiB(daemon.pid);
    const listed = (await sandbox.commands.list()).length;
    await Promise.all(pids.map((p) => sandbox.commands.kill(p)));
    result.memory = { jobs: JOBS, listed, rssBeforeMiB: rss0 / 1024, rssMiB: rss1 / 1024, perJobKiB: (rss1 - rss0) / JOBS };
  } finally {
    await inProc?.shutdown();
    await viaSocket?.shutdown({ killJobs: true });
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    rmSync(base, { recursive: true, force: true });
  }
  const ms = (s) => `${s.median.toFixed(2)} (${s.p99.toFixed(2)})`;
  const r = result.run;
  console.log(`e2b-remote: load ${result.load}; medians (p99), ms, n=${N}`);
  console.log(`| | e2b SDK → daemon (HTTP) | unix-socket client | in process |`);
  console.log(`|---|---|---|---|`);
  console.log(`| commands.run('true') = \`/bin/bash -l -c true\` | ${ms(r.sdk)} | ${ms(r.socketLogin)} | ${ms(r.inProcLogin)} |`);
  console.log(`| plain \`true\` | — | ${ms(r.socketTrue)} | ${ms(r.inProcTrue)} |`);
  console.log(`| Python \`print(k)\` round trip | ${ms(result.rtt.sdk)} | ${ms(result.rtt.socket)} | ${ms(result.rtt.inProc)} |`);
  if (result.python.run) {
    console.log(`| e2b Python SDK: commands.run('true'); round trip | ${ms(result.python.run)}; ${ms(result.python.rtt)} | | |`);
  } else console.log(`e2b Python SDK: not measured (${result.python.skipped})`);
  const c = result.concurrent;
  console.log(
    `${c.n} concurrent commands.run('true'), one SDK client: ${c.totalMs.toFixed(0)} ms in all, p50 ${c.p50?.toFixed(1)} ms, p99 ${c.p99?.toFixed(1)} ms` +
      (c.failed ? `; ${c.failed} failed (${c.firstFailure})` : ''),
  );
  const m = result.memory;
  console.log(
    `daemon RSS: ${m.rssBeforeMiB.toFixed(1)} MiB → ${m.rssMiB.toFixed(1)} MiB with ${m.jobs} running \`sleep 600\` jobs (${m.perJobKiB.toFixed(0)} KiB a job; listed ${m.listed})`,
  );
  if (args.json) console.log(`RESULT ${JSON.stringify(result)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
