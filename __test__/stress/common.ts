// Shared by the torture suites: the scale, resource snapshots of this (worker) process,
// process-tree helpers, and a figures log.
//
// STRESS_SCALE=full runs the documented sizes (docs/reliability.md); anything else (the
// default) runs the reduced sizes CI can afford. STRESS_SCALE=<number> multiplies the
// full sizes by that factor (0.1 = a tenth).
import { appendFileSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

const raw = process.env.STRESS_SCALE ?? 'ci';
/** The factor applied to every full-size figure. */
export const SCALE = raw === 'full' ? 1 : Number.isFinite(Number(raw)) && Number(raw) > 0 ? Number(raw) : 0.1;
export const SCALE_NAME = raw === 'full' ? 'full' : raw === 'ci' || !Number.isFinite(Number(raw)) ? 'ci' : `x${raw}`;

/** `full` scaled, at least `min`. */
export function scaled(full: number, min = 1): number {
  return Math.max(min, Math.round(full * SCALE));
}

export interface Snapshot {
  /** Open descriptors but the held `cgroupEvents`. */
  fds: number;
  /** `cgroup.events` files held open (src/platform/linux/cgroup.rs): one per spare
   * cgroup and the latest job's, at most `MAX_HELD_CGROUP_EVENTS` whatever the number
   * of jobs. */
  cgroupEvents: number;
  threads: number;
  ptmx: number;
  zombies: number;
  /** Live (non-zombie) descendants of this process, the watchdog included. */
  descendants: number;
  rssMiB: number;
}

interface Proc {
  pid: number;
  ppid: number;
  state: string;
}

export function procs(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(name), state: rest[0], ppid: Number(rest[1]) });
    } catch {
      // gone between readdir and read
    }
  }
  return out;
}

/** Every descendant of `root` (any depth), zombies included. */
export function descendants(root = process.pid): Proc[] {
  const all = procs();
  const children = new Map<number, Proc[]>();
  for (const p of all) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const found: Proc[] = [];
  const queue = [root];
  while (queue.length) {
    for (const c of children.get(queue.pop()!) ?? []) {
      found.push(c);
      queue.push(c.pid);
    }
  }
  return found;
}

/** The `cgroup.events` files a process holds open at most: one per spare cgroup (16
 * at most) and the latest job's. */
export const MAX_HELD_CGROUP_EVENTS = 17;

export function snapshot(): Snapshot {
  const fds = readdirSync('/proc/self/fd');
  let ptmx = 0;
  let cgroupEvents = 0;
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === '/dev/ptmx' || target === '/dev/pts/ptmx') ptmx += 1;
      if (target.endsWith('/cgroup.events')) cgroupEvents += 1;
    } catch {
      // the fd of the readdir itself, already closed
    }
  }
  const desc = descendants();
  return {
    fds: fds.length - cgroupEvents,
    cgroupEvents,
    threads: readdirSync('/proc/self/task').length,
    ptmx,
    zombies: desc.filter((p) => p.state === 'Z').length,
    descendants: desc.filter((p) => p.state !== 'Z' && p.state !== 'X').length,
    rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
  };
}

export function fmt(s: Snapshot): string {
  return `fds=${s.fds} cgroupEvents=${s.cgroupEvents} threads=${s.threads} ptmx=${s.ptmx} zombies=${s.zombies} descendants=${s.descendants} rss=${s.rssMiB}MiB`;
}

const FIGURES_DIR = join(__dirname, '..', '..', 'target', 'stress');

/** Prints one figure line and appends it to target/stress/figures.jsonl. */
export function report(name: string, figures: Record<string, unknown>): void {
  const line = { scale: SCALE_NAME, name, at: new Date().toISOString(), ...figures };
  // eslint-disable-next-line no-console
  console.log(`[stress ${SCALE_NAME}] ${name}: ${JSON.stringify(figures)}`);
  try {
    mkdirSync(FIGURES_DIR, { recursive: true });
    appendFileSync(join(FIGURES_DIR, 'figures.jsonl'), `${JSON.stringify(line)}\n`);
  } catch {
    // figures are a convenience; the console line is the record
  }
}

/** Waits until `predicate` holds, polling every 50 ms, at most `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (predicate()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with the snapshot once fds, ptmx and zombies are back to `before` and the
 * thread count (unless `threads` is false) is at most `before`'s (tokio's idle blocking
 * threads linger ~10 s). */
export async function settle(before: Snapshot, timeoutMs = 20_000, threads = true): Promise<Snapshot> {
  let now = snapshot();
  await until(() => {
    now = snapshot();
    return (
      now.fds <= before.fds &&
      now.ptmx <= before.ptmx &&
      now.zombies <= before.zombies &&
      (!threads || now.threads <= before.threads) &&
      now.descendants <= before.descendants
    );
  }, timeoutMs);
  return now;
}

/** Pids a command printed as `p <pid>` lines. */
export function pidsIn(output: string): number[] {
  return [...output.matchAll(/\bp (\d+)/g)].map((m) => Number(m[1]));
}

/** Runs `fn` over `items` with at most `width` in flight. */
export async function pool<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return results;
}
