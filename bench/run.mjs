#!/usr/bin/env node
// The side-by-side benchmark: this addon (called, driven by its output events, and
// behind its drop-in for the Gemini CLI's ShellExecutionService) against node-pty,
// node-pty + @xterm/headless, the Gemini CLI's own ShellExecutionService,
// child_process pipes and the physical limit. The drop-in runs from dist/compat:
// `npm run build:compat` first.
//
//   npm run bench                 the full run (the documented sizes)
//   npm run bench -- --quick      smaller sizes, fewer repetitions (under two minutes)
//   options: --reps=N  --only=spawn,cat,...,spawn-floor,sandbox-cost,unix-connect,e2b-remote  --peers=addon-text,gemini,...
//            --json=FILE (all raw results)  --md=FILE (the table as Markdown)
//            --strict: exit 1 if a run of this addon failed, came back incomplete or
//            lost bytes (CI's smoke run; the figures themselves are never judged)
//
// Every (scenario, peer, repetition) runs in a fresh Node process (worker.mjs), so
// the memory and event-loop numbers of one peer never include another's. The sandbox's
// cost (Linux, with the addon-sandbox peer) is the one pair measured in one process:
// bench/sandbox-cost.mjs, plain and sandboxed services taking turns block by block,
// because the difference (tenths of a millisecond) is smaller than the drift between
// separate runs on a loaded machine. The daemon's envd face (with the addon-daemon peer)
// is measured by bench/e2b-remote.mjs, through E2B's SDKs beside the unix socket and in
// process, in one process too.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const quick = Boolean(args.quick);
const MiB = 1024 * 1024;

// ------------------------------------------------------------------ sizes
const SIZES = quick
  ? { catMiB: 8, seqLines: 200_000, spawnN: 30, rttN: 50, idleN: 50, idleSeconds: 2, concN: 200, lostRuns: 10, reps: 2, heavyReps: 1, idleReps: 1 }
  : { catMiB: 64, seqLines: 2_000_000, spawnN: 200, rttN: 200, idleN: 50, idleSeconds: 10, concN: 200, lostRuns: 100, reps: 5, heavyReps: 3, idleReps: 3 };
if (args.reps) SIZES.reps = SIZES.heavyReps = SIZES.idleReps = Number(args.reps);
const LINE = 64; // bytes per line of the generated text file, newline included
const HEAD_BYTES = 1_000_000; // `head -c` in the completeness runs: 15625 whole lines

const ALL_PEERS = ['addon-text', 'addon-screen', 'addon-pipes', 'addon-events', 'addon-daemon', 'addon-sandbox', 'addon-bwrap', 'node-pty', 'xterm', 'gemini', 'compat', 'pipes', 'limit-pty', 'limit-pipe'];
const LABEL = {
  'addon-text': 'addon PTY, text view',
  'addon-screen': 'addon PTY, screen view',
  'addon-pipes': 'addon pipes',
  'addon-poll': 'addon, 100 ms polling',
  'addon-events': 'addon PTY, onOutput events',
  'addon-daemon': 'addon PTY through its daemon',
  'addon-sandbox': 'addon PTY, sandboxed',
  'addon-bwrap': 'addon PTY, command in bwrap',
  'node-pty': 'node-pty raw',
  xterm: 'node-pty + xterm 300k',
  gemini: 'Gemini CLI 0.61.0',
  compat: 'Gemini drop-in (this addon)',
  pipes: 'child_process pipes',
  'limit-pty': 'limit: PTY',
  'limit-pipe': 'limit: pipe',
};
/** Peers measured in some scenarios only: bwrap's cost is its start (docs/sandbox.md). */
const SPAWN_ONLY = new Set(['addon-bwrap']);
const haveBwrap = (() => {
  try {
    execFileSync('bwrap', ['--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
// The sandbox needs Landlock (Linux 5.13+); bwrap needs the program and user namespaces.
const peers = (args.peers ? String(args.peers).split(',') : ALL_PEERS).filter((p) => {
  if (p === 'addon-bwrap' && !haveBwrap) {
    console.error('# addon-bwrap left out: bwrap is missing or cannot run here (apt-get install bubblewrap)');
    return false;
  }
  if (p === 'addon-sandbox' && process.platform !== 'linux') return false;
  if (p === 'addon-daemon' && process.platform === 'win32') return false; // no daemon there yet (docs/daemon.md)
  return true;
});
const HEAVY = new Set(['xterm', 'gemini']);
/** This addon's peers: `--strict` judges their runs. */
const ours = (peer) => peer.startsWith('addon') || peer === 'compat';

// ------------------------------------------------------------------ set-up
function line(i) {
  const head = `${String(i).padStart(8, '0')} `;
  return head + 'the quick brown fox jumps over the lazy dog 0123456789'.padEnd(LINE - head.length - 1, '.') + '\n';
}

function makeData(dir, mib) {
  const path = join(dir, `text-${mib}MiB.txt`);
  const lines = (mib * MiB) / LINE;
  const fd = openSync(path, 'w');
  const batch = 16384;
  for (let i = 0; i < lines; i += batch) {
    let chunk = '';
    for (let j = i; j < Math.min(lines, i + batch); j++) chunk += line(j);
    writeSync(fd, chunk);
  }
  closeSync(fd);
  return { path, lines, lastLine: line(lines - 1).trimEnd() };
}

function buildLimit() {
  execFileSync(
    'cargo',
    ['build', '--release', '--quiet', '--manifest-path', join(here, 'limit', 'Cargo.toml'), '--target-dir', join(root, 'target', 'bench-limit')],
    { stdio: 'inherit' },
  );
  return join(root, 'target', 'bench-limit', 'release', 'nss-bench-limit');
}

/** Where every worker makes its scratch directory; removed with the run's data. */
let scratchRoot;

function runWorker(peer, scenario, params) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(here, 'worker.mjs'), peer, scenario, JSON.stringify(params)], {
      cwd: root,
      env: { ...process.env, NSS_BENCH_SCRATCH: scratchRoot },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), params.timeoutMs ?? 600_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const m = /^RESULT (.*)$/m.exec(out);
      if (code === 0 && m) return resolve(JSON.parse(m[1]));
      const why = `${peer}/${scenario} failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' | ')}`;
      console.error(`  ! ${why}`);
      resolve({ error: why });
    });
  });
}

// ------------------------------------------------------------------ statistics
const sorted = (xs) => [...xs].sort((a, b) => a - b);
function quantile(xs, q) {
  const s = sorted(xs);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
const median = (xs) => {
  const s = sorted(xs);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

/** One repeated value: median over repetitions, with min and max. */
function stat(values) {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length === 0) return null;
  return { median: median(v), min: Math.min(...v), max: Math.max(...v), n: v.length };
}

// ------------------------------------------------------------------ the scenarios
function scenarios(data, limitBin) {
  const cat = `cat ${data.path}`;
  const seq = `seq 1 ${SIZES.seqLines}`;
  const head = `head -c ${HEAD_BYTES} ${data.path}`;
  const headLines = HEAD_BYTES / LINE;
  const common = { limitBin };
  return [
    { id: 'spawn', worker: 'spawn', params: { ...common, n: SIZES.spawnN } },
    { id: 'cat', worker: 'stream', params: { ...common, cmd: cat, lastLine: data.lastLine }, heavy: true },
    { id: 'seq', worker: 'stream', params: { ...common, cmd: seq, lastLine: String(SIZES.seqLines) }, heavy: true },
    { id: 'rtt', worker: 'rtt', params: { ...common, n: SIZES.rttN, warmup: 5 } },
    { id: 'rtt-flood', worker: 'rtt', params: { ...common, n: SIZES.rttN, warmup: 5, flood: `while :; do cat ${data.path}; done` }, only: ['addon-text', 'addon-daemon'] },
    { id: 'rtt-poll', worker: 'rtt', params: { ...common, n: Math.min(SIZES.rttN, quick ? 10 : 50), warmup: 1, polling: true }, only: ['addon-text'], reps: SIZES.idleReps },
    { id: 'idle', worker: 'idle', params: { ...common, n: SIZES.idleN, seconds: SIZES.idleSeconds }, skip: ['limit-pty', 'limit-pipe', 'addon-screen'], reps: SIZES.idleReps },
    { id: 'concurrency', worker: 'concurrency', params: { ...common, n: SIZES.concN, cmd: 'sleep 1; echo done' }, skip: ['limit-pty', 'limit-pipe', 'addon-screen'], reps: quick ? 1 : SIZES.reps },
    // One repetition of `lostRuns` runs: the count over all runs is the result.
    { id: 'lost', worker: 'lost', params: { ...common, cmd: head, runs: SIZES.lostRuns, textBytes: HEAD_BYTES, ptyBytes: HEAD_BYTES + headLines }, skip: ['addon-screen'], reps: 1 },
  ];
}

// ------------------------------------------------------------------ the table
const fmt = (x, digits) => {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : Math.abs(x) >= 1 ? 2 : 3);
  return x.toFixed(d);
};
const cell = (s, digits) => (s ? (s.n > 1 ? `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : fmt(s.median, digits)) : '—');

/** Rows: [label, (peer) => stat | string]. */
function rows(results) {
  const get = (id, peer) => results[id]?.[peer] ?? [];
  const ok = (r) => r && !r.error;
  const perRep = (id, peer, f) => stat(get(id, peer).filter(ok).map(f));
  const mibs = (id, key) => (peer) => perRep(id, peer, (r) => (SIZES.catMiB * MiB) / MiB / (r[key] / 1000));
  const flag = (id) => (peer) => {
    const bad = get(id, peer).filter((r) => ok(r) && r.ok === false).length;
    return bad ? ` ⚠ ${bad}× incomplete` : '';
  };
  return [
    [`spawn: \`bash -c true\` ×${SIZES.spawnN}, median ms per spawn`, (p) => perRep('spawn', p, (r) => median(r.samples))],
    [`spawn: p99 ms`, (p) => perRep('spawn', p, (r) => quantile(r.samples, 0.99))],
    [`cat ${SIZES.catMiB} MiB: MiB/s until exit`, mibs('cat', 'exitMs'), flag('cat')],
    [`cat ${SIZES.catMiB} MiB: MiB/s until the text is readable`, mibs('cat', 'readableMs'), flag('cat')],
    [`cat: event-loop delay p99, ms`, (p) => perRep('cat', p, (r) => r.loopP99Ms)],
    [`cat: event-loop delay max, ms`, (p) => perRep('cat', p, (r) => r.loopMaxMs)],
    [`cat: peak RSS growth, MiB`, (p) => perRep('cat', p, (r) => r.rssGrowthMiB)],
    [`cat: main-thread (JS) CPU ms per MiB`, (p) => perRep('cat', p, (r) => r.jsCpuMs / SIZES.catMiB)],
    [`cat: process CPU ms per MiB (all its threads)`, (p) => perRep('cat', p, (r) => r.cpuMs / SIZES.catMiB)],
    [`seq 1 ${SIZES.seqLines}: ms until the last line is readable`, (p) => perRep('seq', p, (r) => r.readableMs), flag('seq')],
    [`seq: event-loop delay p99, ms`, (p) => perRep('seq', p, (r) => r.loopP99Ms)],
    [`seq: event-loop delay max, ms`, (p) => perRep('seq', p, (r) => r.loopMaxMs)],
    [`seq: main-thread (JS) CPU ms`, (p) => perRep('seq', p, (r) => r.jsCpuMs)],
    [`seq: peak RSS growth, MiB`, (p) => perRep('seq', p, (r) => r.rssGrowthMiB)],
    [`Python round trip ×${SIZES.rttN}: median ms`, (p) => perRep(p === 'addon-poll' ? 'rtt-poll' : 'rtt', p === 'addon-poll' ? 'addon-text' : p, (r) => median(r.samples))],
    [`Python round trip: p99 ms`, (p) => perRep(p === 'addon-poll' ? 'rtt-poll' : 'rtt', p === 'addon-poll' ? 'addon-text' : p, (r) => quantile(r.samples, 0.99))],
    [`Python round trip while another client's job floods (cat in a loop): median ms`, (p) => perRep('rtt-flood', p, (r) => median(r.samples))],
    [`round trip beside a flood: p99 ms`, (p) => perRep('rtt-flood', p, (r) => quantile(r.samples, 0.99))],
    [`${SIZES.idleN} idle jobs: CPU ms over ${SIZES.idleSeconds} s`, (p) => perRep('idle', p, (r) => r.cpuMs)],
    [`idle: RSS per job, KiB`, (p) => perRep('idle', p, (r) => r.rssPerJobKiB)],
    [`idle: the daemon's RSS with ${SIZES.idleN} idle jobs, MiB (per job, KiB)`, (p) => {
      const rs = get('idle', p).filter((r) => ok(r) && r.daemonRssMiB !== undefined);
      return rs.length ? `${fmt(median(rs.map((r) => r.daemonRssMiB)))} (${fmt(median(rs.map((r) => r.daemonRssPerJobKiB)))})` : '—';
    }],
    [`idle: descriptors per job (in the daemon's process for a daemon peer)`, (p) => {
      const rs = get('idle', p).filter(ok);
      const per = rs.map((r) => r.daemonFdsPerJob ?? r.fdsPerJob).filter((v) => v !== undefined);
      return per.length ? fmt(median(per)) : '—';
    }],
    [`idle: threads before → with ${SIZES.idleN} jobs`, (p) => {
      const rs = get('idle', p).filter(ok);
      return rs.length ? `${median(rs.map((r) => r.threads0))} → ${median(rs.map((r) => r.threads1))}` : '—';
    }],
    [`${SIZES.concN} × \`sleep 1; echo done\`: wall ms`, (p) => perRep('concurrency', p, (r) => r.wallMs), (p) => {
      const bad = get('concurrency', p).filter((r) => ok(r) && r.okCount !== SIZES.concN).length;
      return bad ? ` ⚠ ${bad}× missing output` : '';
    }],
    [`concurrency: peak RSS growth, MiB`, (p) => perRep('concurrency', p, (r) => r.rssGrowthMiB)],
    [`concurrency: peak threads (before)`, (p) => {
      const rs = get('concurrency', p).filter(ok);
      return rs.length ? `${median(rs.map((r) => r.peakThreads))} (${median(rs.map((r) => r.threads0))})` : '—';
    }],
    [`concurrency: peak fds (before)`, (p) => {
      const rs = get('concurrency', p).filter(ok);
      return rs.length ? `${median(rs.map((r) => r.peakFds))} (${median(rs.map((r) => r.fds0))})` : '—';
    }],
    [`bytes lost at exit, ${SIZES.lostRuns} × \`head -c ${HEAD_BYTES}\` (runs with loss)`, (p) => {
      const rs = get('lost', p).filter(ok);
      if (!rs.length) return '—';
      const lost = rs.reduce((a, r) => a + r.lostBytes, 0);
      const runs = rs.reduce((a, r) => a + r.runsWithLoss, 0);
      const total = rs.reduce((a, r) => a + r.runs, 0);
      const file = rs.reduce((a, r) => a + (r.fileLoss ?? 0), 0);
      return `${lost} (${runs}/${total})${rs.some((r) => r.fileLoss !== undefined && r.fileLoss !== 0) || (p.startsWith('addon') && file) ? `; on disk ${file}` : ''}`;
    }],
  ];
}

function table(results, columns) {
  const head = `| scenario | ${columns.map((p) => LABEL[p]).join(' | ')} |`;
  const sep = `|---|${columns.map(() => '---').join('|')}|`;
  const body = rows(results).map(([label, f, note]) => {
    const cells = columns.map((p) => {
      const v = f(p);
      const text = typeof v === 'string' ? v : cell(v);
      return text + (note && text !== '—' ? note(p) : '');
    });
    return `| ${label} | ${cells.join(' | ')} |`;
  });
  return [head, sep, ...body].join('\n');
}

/**
 * Ratios from the medians: the addon (text view) against each peer and the limit; the
 * addon driven by events against raw node-pty; the drop-in against the Gemini CLI's
 * own service and node-pty + xterm. Only pairs whose two peers both ran.
 */
function ratios(results) {
  const r = rows(results);
  const value = (label, peer) => {
    const row = r.find(([l]) => l.startsWith(label));
    const v = row?.[1](peer);
    return v && typeof v === 'object' ? v.median : NaN;
  };
  const others = ['node-pty', 'xterm', 'gemini', 'pipes', 'limit-pty', 'limit-pipe', 'addon-pipes'];
  const pairs = [
    ...others.map((p) => ['addon-text', p]),
    ['addon-events', 'node-pty'],
    ['compat', 'gemini'],
    ['compat', 'xterm'],
    ['addon-sandbox', 'addon-text'],
    ['addon-sandbox', 'addon-bwrap'],
    // Issue 32's goals: through the daemon ≤ 1.5× the in-process time, ≥ 50 % of its cat throughput.
    ['addon-daemon', 'addon-text'],
  ];
  const catLabel = `cat ${SIZES.catMiB} MiB: MiB/s until the text`;
  const seqLabel = `seq 1 ${SIZES.seqLines}`;
  const x = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—');
  // [column, (me, peer) => ratio]: higher is better for `me` in every column.
  const columns = [
    ['cat throughput (× faster)', (me, p) => x(value(catLabel, me), value(catLabel, p))],
    ['seq time (× faster)', (me, p) => x(value(seqLabel, p), value(seqLabel, me))],
    ['spawn (× faster)', (me, p) => x(value('spawn: `bash', p), value('spawn: `bash', me))],
    ['round-trip median (× faster)', (me, p) => x(value('Python round trip ×', p), value('Python round trip ×', me))],
    ['cat RSS growth (× less)', (me, p) => x(value('cat: peak RSS', p), value('cat: peak RSS', me))],
    ['cat JS CPU per MiB (× less)', (me, p) => x(value('cat: main-thread (JS) CPU', p), value('cat: main-thread (JS) CPU', me))],
    ['seq JS CPU (× less)', (me, p) => x(value('seq: main-thread (JS) CPU', p), value('seq: main-thread (JS) CPU', me))],
    ['cat loop delay p99 (× less)', (me, p) => x(value('cat: event-loop delay p99', p), value('cat: event-loop delay p99', me))],
    ['seq loop delay p99 (× less)', (me, p) => x(value('seq: event-loop delay p99', p), value('seq: event-loop delay p99', me))],
  ];
  const lines = [`| pair | ${columns.map(([c]) => c).join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`];
  for (const [me, p] of pairs.filter((pair) => pair.every((q) => peers.includes(q)))) {
    lines.push(`| ${LABEL[me]} vs. ${LABEL[p]} | ${columns.map(([, f]) => f(me, p)).join(' | ')} |`);
  }
  return lines.join('\n');
}

// ------------------------------------------------------------------ main
async function main() {
  const started = Date.now();
  const limitBin = buildLimit();
  require_addon();
  const dir = mkdtempSync(join(tmpdir(), 'nss-bench-data-'));
  scratchRoot = join(dir, 'scratch');
  mkdirSync(scratchRoot);
  try {
    const data = makeData(dir, SIZES.catMiB);
    const only = args.only ? new Set(String(args.only).split(',')) : null;
    const list = scenarios(data, limitBin).filter((s) => !only || only.has(s.id));
    const results = {};
    const machine = {
      nproc: cpus().length,
      cpu: cpus()[0]?.model,
      kernel: release(),
      node: process.version,
      rustc: execFileSync('rustc', ['--version'], { encoding: 'utf8' }).trim(),
      loadBefore: loadavg().map((l) => l.toFixed(2)).join(' '),
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      quick,
      sizes: SIZES,
    };
    console.error(`# ${machine.command}: ${machine.nproc} × ${machine.cpu}, Linux ${machine.kernel}, node ${machine.node}, load ${machine.loadBefore}`);
    for (const s of list) {
      results[s.id] = {};
      const targets = peers.filter(
        (p) => (!s.only || s.only.includes(p)) && !(s.skip ?? []).includes(p) && (s.id === 'spawn' || !SPAWN_ONLY.has(p)),
      );
      const reps = s.reps ?? SIZES.reps;
      // Repetitions interleave the peers, so a burst of load hits all of them alike.
      for (let rep = 0; rep < reps; rep++) {
        for (const p of targets) {
          if (s.heavy && HEAVY.has(p) && rep >= SIZES.heavyReps) continue;
          const t = Date.now();
          const r = await runWorker(p, s.worker, s.params);
          if (r === null) continue;
          (results[s.id][p] ??= []).push(r);
          console.error(`  ${s.id} ${p} #${rep + 1}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
        }
      }
    }
    const spawnFloor = peers.includes('addon-text') && (!only || only.has('spawn-floor')) ? await measureSpawnFloor() : null;
    if (spawnFloor) results['spawn-floor'] = spawnFloor.result;
    const sandboxCost = peers.includes('addon-sandbox') && (!only || only.has('sandbox-cost')) ? await measureSandboxCost() : null;
    if (sandboxCost) results['sandbox-cost'] = sandboxCost;
    const unixConnect = peers.includes('addon-sandbox') && (!only || only.has('unix-connect')) ? await measureUnixConnect() : null;
    if (unixConnect) results['unix-connect'] = unixConnect.result;
    const e2bRemote = peers.includes('addon-daemon') && (!only || only.has('e2b-remote')) ? await measureE2bRemote() : null;
    if (e2bRemote) results['e2b-remote'] = e2bRemote.result;
    machine.loadAfter = loadavg().map((l) => l.toFixed(2)).join(' ');
    machine.seconds = Math.round((Date.now() - started) / 1000);
    const columns = [...peers.filter((p) => p !== 'limit-pty' && p !== 'limit-pipe'), ...(peers.includes('addon-text') ? ['addon-poll'] : []), ...peers.filter((p) => p.startsWith('limit-'))];
    const md = [
      `Machine: ${machine.nproc} × ${machine.cpu}, Linux ${machine.kernel}, node ${machine.node}, ${machine.rustc}.`,
      `Command: \`${machine.command}\`; load average (1/5/15 min) ${machine.loadBefore} before, ${machine.loadAfter} after; ${machine.seconds} s.`,
      `Each cell: median over ${SIZES.reps} runs, each in a fresh Node process (${SIZES.heavyReps} for xterm and Gemini on the two floods; ${SIZES.idleReps} for idle and polling; the completeness row counts all ${SIZES.lostRuns} runs), (min–max) across runs.`,
      '',
      table(results, columns),
      '',
      ...(spawnFloor ? [`Spawn against its floor (bench/spawn-floor.mjs: \`run('true')\` in a PTY with its files, beside a C forkpty + \`bash -c true\` + read to EOF + waitpid, in one process, taking turns block by block, then spawn by spawn; goal ≤ 1.15×):`, '', spawnFloor.text, ''] : []),
      ...(sandboxCost ? [sandboxCostLine(sandboxCost), ''] : []),
      ...(unixConnect ? [`Supervised unix sockets (bench/unix-connect.mjs; goal: an allowed connect within +50 µs, docs/sandbox.md):`, '', unixConnect.text, ''] : []),
      ...(e2bRemote ? [e2bRemote.text, ''] : []),
      ratios(results),
      '',
    ].join('\n');
    console.log(md);
    if (args.md) writeFileSync(String(args.md), md);
    if (args.json) writeFileSync(String(args.json), JSON.stringify({ machine, results }, null, 1));
    const failures = addonFailures(results);
    for (const f of failures) console.error(`  ! ${f}`);
    if (args.strict && failures.length > 0) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs a measuring script of bench/ that ends its output with a `RESULT <json>` line:
 * the figures and the text printed before them, or null (said on stderr) when it failed.
 */
function runResultScript(script, scriptArgs) {
  const t = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(here, `${script}.mjs`), ...scriptArgs, '--json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const m = /^RESULT (.*)$/m.exec(out);
      if (code === 0 && m) {
        console.error(`  ${script}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
        return resolve({ result: JSON.parse(m[1]), text: out.slice(0, m.index).trim() });
      }
      console.error(`  ! ${script} failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' | ')}`);
      resolve(null);
    });
  });
}

/** `run()` against the C forkpty floor (bench/spawn-floor.mjs), taking turns block by
 * block and then spawn by spawn: the two texts and figures, or null. */
async function measureSpawnFloor() {
  const args = quick ? ['--n=40', '--rounds=4'] : ['--n=100', '--rounds=10'];
  const blocks = await runResultScript('spawn-floor', args);
  const spawns = await runResultScript('spawn-floor', [...args, '--alternate']);
  if (!blocks || !spawns) return null;
  return { text: `${blocks.text}\n\n${spawns.text}`, result: { blocks: blocks.result, spawns: spawns.result } };
}

/** The sandbox's cost per job, from bench/sandbox-cost.mjs, or null. */
async function measureSandboxCost() {
  const [n, rounds] = quick ? [30, 6] : [50, 20];
  const run = await runResultScript('sandbox-cost', [`--n=${n}`, `--rounds=${rounds}`]);
  return run && run.result;
}

/** What the unix socket supervisor adds to a sandboxed job's calls (bench/unix-connect.mjs), or null. */
function measureUnixConnect() {
  return runResultScript('unix-connect', quick ? ['--n=300', '--rounds=3'] : ['--n=2000', '--rounds=9']);
}

/** bench/e2b-remote.mjs's table (its text) and figures, or null. */
function measureE2bRemote() {
  return runResultScript('e2b-remote', [`--n=${quick ? 50 : 200}`]);
}

function sandboxCostLine(r) {
  const c = r.costs[0];
  const ms = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(3)} ms`;
  return (
    `Sandbox cost (bench/sandbox-cost.mjs, uid ${r.uid}: ${r.n} \`true\` jobs per block, plain and sandboxed taking turns, ${r.rounds} rounds; load ${r.load}): ` +
    `**${ms(c.wallMs)}** per job, start to exit (rounds ${ms(c.wallRangeMs[0])} to ${ms(c.wallRangeMs[1])}; plain ${c.plainMs.toFixed(3)} ms, sandboxed ${c.sandboxedMs.toFixed(3)} ms); ` +
    `JS thread +${c.jsUs.toFixed(0)} µs, Node process +${c.processUs.toFixed(0)} µs CPU. Goal: within 0.2 ms (docs/sandbox.md, "What it costs").`
  );
}

/** What went wrong in this addon's own runs: an error, output cut short, bytes lost. */
function addonFailures(results) {
  const failures = [];
  for (const [id, byPeer] of Object.entries(results)) {
    for (const [peer, runs] of Object.entries(byPeer)) {
      if (!ours(peer)) continue;
      runs.forEach((r, i) => {
        const where = `${id} ${peer} #${i + 1}`;
        if (r.error) failures.push(`${where}: ${r.error}`);
        else if (r.ok === false) failures.push(`${where}: the output came back incomplete`);
        else if (r.lostBytes > 0) failures.push(`${where}: ${r.lostBytes} bytes lost in ${r.runsWithLoss} of ${r.runs} runs`);
        else if (r.fileLoss > 0) failures.push(`${where}: ${r.fileLoss} bytes missing from stdout.txt`);
      });
    }
  }
  return failures;
}

function require_addon() {
  try {
    execFileSync(process.execPath, ['-e', "require('./index.js')"], { cwd: root, stdio: 'ignore' });
  } catch {
    throw new Error('the addon does not load: run `npm run build` first');
  }
}

await main();
