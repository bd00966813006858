// What spawn-floor.mjs and spawn-ab.mjs share: a service of a given build in a folder of
// its own, a block of `run('true')` spawns timed one by one, medians, the load average.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);

export const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

/** The median of `xs` with their min and max. */
export const summary = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** The 1-, 5- and 15-minute load averages. Linux. */
export const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** A service of the build at `path` (its index.js or a `.node` file), its project and
 * output in `dir`. */
export function serviceIn(path, dir, sessionId) {
  const { ShellExecutionService } = require(path);
  mkdirSync(join(dir, 'project'), { recursive: true });
  return new ShellExecutionService({ projectRoot: join(dir, 'project'), ioDir: join(dir, 'io'), sessionId, maxJobs: 100_000 });
}

/** `n` spawns of `run('true')` in an 80×24 PTY, each removed once it ended: the ms each
 * took. Throws if one did not exit 0. */
export async function spawnBlock(service, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await service.run('true', { cols: 80, rows: 24 });
    samples.push(performance.now() - t0);
    if (r.status !== 'exited' || r.exitCode !== 0) throw new Error(`run('true'): ${r.status} ${r.exitCode}`);
    service.removeProcess(r.handle);
  }
  return samples;
}
