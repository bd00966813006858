// One measurement in a fresh Node process, so that memory and event-loop delay of one
// peer never pollute another's. Usage: node bench/worker.mjs <peer> <scenario> <params-json>
// Prints one line `RESULT <json>` on stdout.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import { PEERS } from './peers.mjs';

const [peerName, scenario, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson ?? '{}');
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const MiB = 1024 * 1024;

function threads() {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/^Threads:\s+(\d+)/m.exec(status)[1]);
}
const fds = () => readdirSync('/proc/self/fd').length;
const rss = () => process.memoryUsage.rss();
const maxRss = () => process.resourceUsage().maxRSS * 1024;

// The main thread's CPU time, apart from the addon's native threads: the JS thread's
// cost. Its tid is the pid. Its schedstat's first field is its time on a CPU in ns;
// a kernel without it still has utime and stime, fields 14 and 15 of its stat line,
// in clock ticks (usually 10 ms: coarse for a small file).
const mainTask = `/proc/self/task/${process.pid}`;
let tickMs;
function mainThreadCpuMs() {
  if (existsSync(`${mainTask}/schedstat`)) {
    return Number(readFileSync(`${mainTask}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  }
  const stat = readFileSync(`${mainTask}/stat`, 'utf8');
  // Field 2, `(comm)`, may hold spaces: count from field 3, just after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  tickMs ??= 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  return (Number(fields[14 - 3]) + Number(fields[15 - 3])) * tickMs;
}
const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** What `bytes` means for each peer, and so what a complete `head -c N` run delivers. */
function expectedBytes(peer, { textBytes, ptyBytes }) {
  switch (peer) {
    case 'addon-text':
    case 'addon-screen':
    case 'node-pty':
    case 'xterm':
    case 'limit-pty':
      return ptyBytes; // raw PTY bytes: every \n arrives as \r\n
    case 'gemini':
    case 'compat':
      return textBytes - 1; // lines joined with \n, the final newline trimmed
    default:
      return textBytes; // pipes: the bytes as written; addon-events: the committed text
  }
}

// ------------------------------------------------------------------ the physical limit
function limit(args) {
  const out = execFileSync(params.limitBin, args, { encoding: 'utf8', maxBuffer: 64 * MiB });
  return JSON.parse(out);
}

async function runLimit() {
  const kind = peerName === 'limit-pty' ? 'pty' : 'pipe';
  switch (scenario) {
    case 'spawn':
      return { samples: limit(['spawn', kind, String(params.n)]).samples };
    case 'stream': {
      const r = limit(['stream', kind, params.cmd]);
      return { exitMs: r.exitMs, readableMs: r.exitMs, bytes: r.bytes, ok: r.tail.includes(params.lastLine) };
    }
    case 'rtt':
      if (kind !== 'pty') return null;
      return { samples: limit(['rtt', String(params.n + params.warmup)]).samples.slice(params.warmup) };
    case 'lost': {
      const expected = expectedBytes(peerName, params);
      const counts = limit(['lost', kind, params.cmd, String(params.runs)]).bytes;
      return lostSummary(counts.map((b) => Math.max(0, expected - b)));
    }
    default:
      return null;
  }
}

function lostSummary(losses) {
  return {
    lostBytes: losses.reduce((a, b) => a + b, 0),
    runsWithLoss: losses.filter((l) => l > 0).length,
    runs: losses.length,
  };
}

// ------------------------------------------------------------------ Node peers
async function runNode() {
  const build = PEERS[peerName];
  if (!build) throw new Error(`unknown peer ${peerName}`);
  const peer = await build();
  try {
    switch (scenario) {
      case 'spawn': {
        await peer.exec('true'); // warm-up: first-use costs are not spawn latency
        const samples = [];
        for (let i = 0; i < params.n; i++) samples.push((await peer.exec('true')).exitMs);
        return { samples };
      }
      case 'stream': {
        const loop = monitorEventLoopDelay({ resolution: 1 });
        const rss0 = rss();
        loop.enable();
        const jsCpu0 = mainThreadCpuMs();
        const cpu0 = processCpuMs();
        const r = await peer.exec(params.cmd);
        const jsCpuMs = mainThreadCpuMs() - jsCpu0;
        const cpuMs = processCpuMs() - cpu0;
        // The turn that resolved the result counts too: the histogram records a late
        // turn only when its timer fires next.
        await new Promise((res) => setTimeout(res, 10));
        loop.disable();
        return {
          exitMs: r.exitMs,
          readableMs: r.readableMs,
          bytes: r.bytes,
          ok: r.text.includes(params.lastLine),
          loopP99Ms: loop.percentile(99) / 1e6,
          loopMaxMs: loop.max / 1e6,
          rssGrowthMiB: (maxRss() - rss0) / MiB,
          jsCpuMs,
          cpuMs,
        };
      }
      case 'rtt': {
        if (params.polling && !peer.pollingRepl) return null;
        // Another client's job floods all along (a flood in one job must not delay
        // other clients' round trips more than in process).
        const flooder = params.flood ? await peer.sibling() : null;
        const flooding = flooder ? flooder.exec(params.flood).catch(() => null) : null;
        if (flooder) await sleep(500);
        const repl = params.polling ? await peer.pollingRepl() : await peer.repl();
        const samples = [];
        try {
          for (let k = 0; k < params.n + params.warmup; k++) {
            const ms = await repl.roundTrip(1_000_000 + k);
            if (k >= params.warmup) samples.push(ms);
          }
        } finally {
          await repl.close();
          // The flood's call settles when its job is killed, or rejects DAEMON_LOST: either way ignored.
          if (flooder) await flooder.close();
          void flooding;
        }
        return { samples };
      }
      case 'idle': {
        const rss0 = rss();
        const threads0 = threads();
        const daemon0 = peer.daemonRssKiB?.() ?? null;
        const fds0 = fds();
        const daemonFds0 = peer.daemonFds?.() ?? null;
        const jobs = [];
        for (let i = 0; i < params.n; i++) jobs.push(await peer.idle('sleep 600'));
        await sleep(1000);
        const rss1 = rss();
        const daemon1 = peer.daemonRssKiB?.() ?? null;
        const fds1 = fds();
        const daemonFds1 = peer.daemonFds?.() ?? null;
        const threads1 = threads();
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await sleep(params.seconds * 1000);
        const cpu = process.cpuUsage(cpu0);
        const wall = performance.now() - t0;
        await Promise.all(jobs.map((j) => j.stop()));
        const cpuMs = (cpu.user + cpu.system) / 1000;
        return {
          cpuMs,
          cpuPct: (100 * cpuMs) / wall,
          rssPerJobKiB: (rss1 - rss0) / params.n / 1024,
          fdsPerJob: (fds1 - fds0) / params.n,
          ...(daemon1 !== null ? { daemonRssMiB: daemon1 / 1024, daemonRssPerJobKiB: (daemon1 - daemon0) / params.n } : {}),
          ...(daemonFds1 !== null ? { daemonFdsPerJob: (daemonFds1 - daemonFds0) / params.n } : {}),
          threads0,
          threads1,
        };
      }
      case 'concurrency': {
        const rss0 = rss();
        const threads0 = threads();
        const fds0 = fds();
        let peakThreads = threads0;
        let peakFds = fds0;
        const sample = () => {
          peakThreads = Math.max(peakThreads, threads());
          peakFds = Math.max(peakFds, fds());
        };
        const timer = setInterval(sample, 20);
        const t0 = performance.now();
        const results = await Promise.all(Array.from({ length: params.n }, () => peer.exec(params.cmd)));
        const wallMs = performance.now() - t0;
        clearInterval(timer);
        sample();
        return {
          wallMs,
          okCount: results.filter((r) => r.text.includes('done')).length,
          rssGrowthMiB: (maxRss() - rss0) / MiB,
          threads0,
          peakThreads,
          fds0,
          peakFds,
        };
      }
      case 'lost': {
        const expected = expectedBytes(peerName, params);
        const losses = [];
        let fileLoss = 0;
        for (let i = 0; i < params.runs; i++) {
          const r = await peer.exec(params.cmd, { remove: true });
          losses.push(Math.max(0, expected - r.bytes));
          // The addon also persists the text: check that nothing is missing there either.
          if (r.outputDir) fileLoss += Math.max(0, params.textBytes - statSync(join(r.outputDir, 'stdout.txt')).size);
        }
        return { ...lostSummary(losses), fileLoss };
      }
      default:
        throw new Error(`unknown scenario ${scenario}`);
    }
  } finally {
    await peer.close();
  }
}

const result = peerName.startsWith('limit-') ? await runLimit() : await runNode();
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
// Peers may leave handles (PTY sockets, timers) behind; the measurement is done.
process.exit(0);
