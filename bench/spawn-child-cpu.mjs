#!/usr/bin/env node
// The spawn child's own CPU time, plain and sandboxed (docs/sandbox.md, "What it costs"),
// measured where wall time cannot be: under load. One Node process, builds side by side:
//
//   node bench/spawn-child-cpu.mjs [--n=30] [--rounds=10] [--addon=PATH]...
//
// `start()` returns once the child has exec'd (the launch is vfork-style), so the CPU
// time the child's task has used by then (`/proc/<pid>/schedstat`, read at once) is its
// work between clone and exec — the sandbox's steps: capabilities, Landlock layers, the
// seccomp filter — and the start of the exec. Other processes waiting for the CPU do not
// count in it, which is what makes it usable on a busy machine. The reading is
// bimodal: when the job (`sleep 0.001`) got a CPU before the read, its own run is in it
// too (milliseconds); only the readings under 0.6 ms, taken before that, are kept, and
// their median printed per addon, plain and sandboxed, with the difference. Blocks of
// `n` jobs take turns. Linux only.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const options = { n: 30, rounds: 10, addon: [] };
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, '').split('=');
  if (key === 'addon') options.addon.push(resolve(value));
  else options[key] = Number(value);
}
if (options.addon.length === 0) options.addon.push(join(here, '..', 'index.js'));

const project = mkdtempSync('/var/tmp/nss-child-cpu-');
const services = [];
for (const path of options.addon) {
  const { ShellExecutionService } = require(path);
  for (const sandbox of [false, true]) {
    const service = new ShellExecutionService({ projectRoot: project, persistOutput: false, sandbox });
    services.push({ path, sandbox, service, cpu: [] });
  }
}

async function block(s, keep) {
  for (let i = 0; i < options.n; i++) {
    const job = s.service.start('sleep 0.001');
    let us = NaN;
    try {
      us = Number(readFileSync(`/proc/${job.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e3;
    } catch {}
    await s.service.waitFor(job.handle, { timeoutMs: 30_000 });
    s.service.removeProcess(job.handle);
    if (keep && us < 600) s.cpu.push(us);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const s of services) await block(s, false); // warm-up
for (let round = 0; round < options.rounds; round++) {
  for (const s of round % 2 ? services : [...services].reverse()) await block(s, true);
}
console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; ${options.n} jobs × ${options.rounds} blocks each`);
for (let i = 0; i < services.length; i += 2) {
  const [plain, boxed] = [services[i], services[i + 1]];
  const [p, b] = [median(plain.cpu), median(boxed.cpu)];
  console.log(
    `${plain.path}: the child's CPU to its exec, plain ${p.toFixed(0)} µs (${plain.cpu.length} readings), ` +
      `sandboxed ${b.toFixed(0)} µs (${boxed.cpu.length}): the sandbox +${(b - p).toFixed(0)} µs`,
  );
}
for (const s of services) await s.service.shutdown();
rmSync(project, { recursive: true, force: true });
