#!/usr/bin/env node
// What the per-job sandbox adds to a spawn (docs/sandbox.md, "What it costs"), in one
// Node process, so two builds can be set side by side under the same load:
//
//   node bench/sandbox-cost.mjs [--n=100] [--rounds=8] [--addon=PATH]... [--json]
//
// For each addon (default: this package's index.js) two services over one project,
// plain and sandboxed (`sandbox: true`), run blocks of `n` jobs (`true`, start to exit,
// one after another), the services taking turns block by block so a machine whose load
// drifts hits each alike. Per job, the median over the blocks of: the JS thread's CPU
// time (from /proc: the spawn path's own work — the sandbox's rules, its TMPDIR; not the
// child, which runs as its own task), the whole Node process's CPU time (its helper
// threads too), and the wall time; and the cost itself, sandboxed minus plain of the
// same addon, per round (the two blocks of a round ran back to back): median and
// range. `--threads`: also each thread's CPU time and times run per job, by thread
// name, for the blocks of each service (the service's helper threads: the TMPDIR
// helper, the unix socket supervisor; what a spawn wakes, and what their work takes
// from the job and the JS thread on a small machine). `--json`: one `RESULT {...}` line as well, for bench/run.mjs, which puts the
// figure in `npm run bench`'s report. Linux only (/proc, and the sandbox).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const options = { n: 100, rounds: 8, addon: [], json: false, threads: false };
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, '').split('=');
  if (key === 'addon') options.addon.push(resolve(value));
  else if (key === 'json') options.json = true;
  else if (key === 'threads') options.threads = true;
  else options[key] = Number(value);
}
if (options.addon.length === 0) options.addon.push(join(here, '..', 'index.js'));

const threadNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
// Every thread of this process: name, CPU time (ns) and times run (/proc schedstat).
function threadTable() {
  const table = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const [cpu, , runs] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      table.set(tid, { name: tid === String(process.pid) ? 'JS thread' : name, cpu, runs });
    } catch {}
  }
  return table;
}
// Per thread name: CPU and runs between two tables (a thread gone meanwhile is missed).
function threadDelta(before, after, into) {
  for (const [tid, now] of after) {
    const was = before.get(tid) ?? { cpu: 0, runs: 0 };
    const sum = into.get(now.name) ?? { cpu: 0, runs: 0 };
    into.set(now.name, { cpu: sum.cpu + now.cpu - was.cpu, runs: sum.runs + now.runs - was.runs });
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const project = mkdtempSync('/var/tmp/nss-sandbox-cost-');
const services = [];
for (const path of options.addon) {
  const { ShellExecutionService } = require(path);
  for (const sandbox of [false, true]) {
    const service = new ShellExecutionService({ projectRoot: project, persistOutput: false, sandbox });
    services.push({ name: `${path} ${sandbox ? 'sandboxed' : 'plain'}`, service, js: [], cpu: [], wall: [], threads: new Map(), jobs: 0 });
  }
}

async function block(s, keep) {
  const threads0 = keep && options.threads ? threadTable() : null;
  const [js0, cpu0, wall0] = [threadNs(), process.cpuUsage(), process.hrtime.bigint()];
  for (let i = 0; i < options.n; i++) {
    const job = s.service.start('true');
    await s.service.waitFor(job.handle, { timeoutMs: 30_000 });
    s.service.removeProcess(job.handle);
  }
  if (!keep) return;
  const cpu = process.cpuUsage(cpu0);
  if (threads0) {
    threadDelta(threads0, threadTable(), s.threads);
    s.jobs += options.n;
  }
  s.js.push((threadNs() - js0) / 1e3 / options.n);
  s.cpu.push((cpu.user + cpu.system) / options.n);
  s.wall.push(Number(process.hrtime.bigint() - wall0) / 1e6 / options.n);
}

for (const s of services) await block(s, false); // warm-up
for (let round = 0; round < options.rounds; round++) {
  for (const s of round % 2 ? services : [...services].reverse()) await block(s, true);
}
console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; ${options.n} jobs × ${options.rounds} blocks each`);
for (const s of services) {
  console.log(
    `${s.name}: JS thread ${median(s.js).toFixed(0)} µs, Node process ${median(s.cpu).toFixed(0)} µs CPU per job; wall ${median(s.wall).toFixed(3)} ms per job`,
  );
}
if (options.threads) {
  for (const s of services) {
    const rows = [...s.threads].filter(([, t]) => t.cpu > 0).sort((a, b) => b[1].cpu - a[1].cpu);
    const per = rows.map(([name, t]) => `${name} ${(t.cpu / 1e3 / s.jobs).toFixed(0)} µs, ${(t.runs / s.jobs).toFixed(1)} runs`);
    console.log(`${s.name}, threads per job: ${per.join('; ')}`);
  }
}
const costs = [];
for (let i = 0; i < services.length; i += 2) {
  const [plain, boxed] = [services[i], services[i + 1]];
  const per = (key) => boxed[key].map((v, round) => v - plain[key][round]);
  const cost = {
    addon: options.addon[i / 2],
    plainMs: median(plain.wall),
    sandboxedMs: median(boxed.wall),
    wallMs: median(per('wall')),
    wallRangeMs: [Math.min(...per('wall')), Math.max(...per('wall'))],
    jsUs: median(per('js')),
    processUs: median(per('cpu')),
  };
  costs.push(cost);
  console.log(
    `${cost.addon}: the sandbox costs ${cost.wallMs >= 0 ? '+' : ''}${cost.wallMs.toFixed(3)} ms per job ` +
      `(rounds ${cost.wallRangeMs.map((v) => v.toFixed(3)).join(' to ')}); JS thread +${cost.jsUs.toFixed(0)} µs, ` +
      `Node process +${cost.processUs.toFixed(0)} µs CPU`,
  );
}
if (options.json) {
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`RESULT ${JSON.stringify({ n: options.n, rounds: options.rounds, uid: process.getuid?.(), load, costs })}`);
}
for (const s of services) await s.service.shutdown();
rmSync(project, { recursive: true, force: true });
