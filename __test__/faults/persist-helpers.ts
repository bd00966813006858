// Shared by the persistence fault tests: reading a job's whole text the way a caller
// does, and looking for what a job's folder left behind.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import type { Service } from '../helpers';

export interface ReadBack {
  text: string;
  omitted: number;
  next: number;
  reads: number;
}

/**
 * Reads the job's committed text from 0 in steps of `step` bytes until `next` stops
 * moving, as a caller following `next` does. A read that returns nothing before `end`
 * is a stall: thrown, with where it happened (today's fault: `{ text: '', next: same }`
 * for ever).
 */
export function readAll(service: Service, handle: number, end: number, step = 64 * 1024): ReadBack {
  const all: ReadBack = { text: '', omitted: 0, next: 0, reads: 0 };
  // Each read moves by at least one byte or one omitted run: far fewer reads than this.
  const maxReads = Math.ceil(end / step) * 4 + 16;
  while (all.next < end) {
    if (all.reads >= maxReads) throw new Error(`no end after ${all.reads} reads (at ${all.next} of ${end})`);
    const chunk = service.readOutput(handle, { since: all.next, maxBytes: step });
    all.reads += 1;
    if (chunk.next === all.next) {
      throw new Error(`readOutput stalled at ${all.next} of ${end}: ${JSON.stringify({ ...chunk, text: chunk.text.slice(0, 40) })}`);
    }
    all.text += chunk.text;
    all.omitted += chunk.omitted;
    all.next = chunk.next;
  }
  return all;
}

/** Every file under `dir` (recursively) whose name is in `names`, as paths. */
export function filesNamed(dir: string, names: string[]): string[] {
  const found: string[] = [];
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesNamed(path, names));
    else if (names.includes(entry.name)) found.push(path);
  }
  return found;
}

/** The `status` of every info.json under `dir` that says `running`. */
export function runningInfos(dir: string): string[] {
  return filesNamed(dir, ['info.json']).filter((path) => {
    try {
      return JSON.parse(readFileSync(path, 'utf8')).status === 'running';
    } catch {
      // Half a file would be a fault of its own: count it.
      return true;
    }
  });
}

/** The marker a truncated result carries, if it names a file; that file's size then. */
export function namedFile(output: string): { path: string; size: number | null } | null {
  const m = /the full output is in (\S+?)(?: and (\S+?))? \.\.\.\]/.exec(output);
  if (!m) return null;
  const path = m[1];
  return { path, size: existsSync(path) ? statSync(path).size : null };
}
