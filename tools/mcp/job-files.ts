// One MCP server's view of its jobs' files (`shell-job://<handle>/<file>`): which jobs it
// can name, and a read of one page, current when it is made. Running or finished, in
// process or in the daemon:
//
// * A job's folder is remembered from the results that named it (`outputDir`), because
//   the tools forget a finished job in the service once the model has seen its end
//   (tools/base.ts `settle`), and a daemon then no longer answers for its handle. A
//   daemon remembers the folders of the jobs its clients removed (src/daemon/ended.rs),
//   so a new session (another `--daemon` server, another HTTP session) reads and lists
//   an earlier session's finished jobs by handle too.
// * A PTY job's `stdout.txt` is read through the service (`readOutput`), not the disk:
//   the file holds only committed text, and a terminal's last screenful is committed
//   once it scrolls off or the job ends, so right after a call that printed a banner the
//   file is still empty. The lines not yet committed are added as a note of their own
//   (they may still be redrawn, so they get no offset).
// * Paging is in the contents, not only in `_meta` (which some clients drop): a page
//   that stops before the end is followed by a second item saying which URI reads on.
import { join } from 'node:path';

import type {
  AnyShellExecutionService as ShellExecutionService,
  DaemonShellExecutionService,
  EndedJob,
  ProcessInfo,
} from '../../contract/addon.js';
import {
  jobFileResources,
  type JobResource,
  type JobResourceContents,
  jobResourceUri,
  listJobResources,
  parseJobUri,
  readJobResource,
  ResourceNotFound,
} from './job-resources.js';

/**
 * How many jobs' folders a server remembers (a long session starts thousands of jobs;
 * the service's retention prunes old folders anyway, docs/reliability.md).
 */
const REMEMBERED = 1000;

/**
 * How many of the jobs the daemon remembers as removed (its newest 1000, for 24 hours)
 * `resources/list` shows, newest first: the rest stay readable by URI.
 */
export const LISTED_ENDED = 100;

/** How much of a running terminal job's latest text is looked at for lines not yet committed. */
const PENDING_BYTES = 64 * 1024;

/** A second content item: what is not the file's bytes (where to read on, lines not final yet). */
export interface JobFileNote {
  uri: string;
  mimeType: 'text/plain';
  text: string;
  _meta: { note: true };
}

function note(uri: string, text: string): JobFileNote {
  return { uri, mimeType: 'text/plain', text, _meta: { note: true } };
}

/**
 * The part of `latest` (the end of the job's text as a person reads it) that is not in
 * `committed` (the end of its committed text): `latest` is a suffix of the committed
 * text followed by the lines not committed yet. The longest match wins, at line ends
 * (committed text is whole lines); with no match all of `latest` is new.
 */
export function uncommitted(latest: string, committed: string): string {
  if (committed === '') return latest;
  for (let k = latest.lastIndexOf('\n') + 1; k > 0; k = latest.lastIndexOf('\n', k - 2) + 1) {
    if (k <= committed.length && committed.endsWith(latest.slice(0, k))) return latest.slice(k);
    if (k === 1) break;
  }
  return latest;
}

export class JobFiles {
  /** Each job's folder, as a result named it (handle → folder). */
  private readonly dirs = new Map<number, string>();

  constructor(
    private readonly service: ShellExecutionService,
    private readonly inDaemon: boolean,
  ) {}

  /** Keeps the folder a result named for `handle` (no folder: nothing to keep); the newest REMEMBERED. */
  remember(handle: number, dir: unknown): void {
    if (typeof dir !== 'string' || dir === '') return;
    this.dirs.delete(handle);
    this.dirs.set(handle, dir);
    while (this.dirs.size > REMEMBERED) this.dirs.delete(this.dirs.keys().next().value as number);
  }

  private async job(handle: number): Promise<ProcessInfo | undefined> {
    return (await this.service.getActiveProcesses()).find((p) => p.handle === handle);
  }

  /**
   * A job's folder: remembered, else asked of the service (a daemon's job of another
   * session), else of the daemon's record of removed jobs (an earlier session's).
   */
  async dir(handle: number): Promise<string | null> {
    const known = this.dirs.get(handle);
    if (known) return known;
    try {
      const dir = (await this.service.getResult(handle, { maxOutputSize: 1 })).outputDir;
      this.remember(handle, dir);
      return dir;
    } catch {
      // no such job (any more): removed, perhaps by an earlier session
    }
    const [ended] = await this.ended({ handle, limit: 1 });
    if (!ended) return null;
    this.remember(handle, ended.outputDir);
    return ended.outputDir;
  }

  /** The daemon's record of removed jobs of the project (none in process, or from a daemon that predates it). */
  private async ended(options: { handle?: number; limit: number }): Promise<EndedJob[]> {
    if (!this.inDaemon) return [];
    try {
      return await (this.service as DaemonShellExecutionService).getEndedJobs(options);
    } catch {
      return [];
    }
  }

  /** Every job file this server can name: the session's folder, the daemon's jobs, and the jobs results named. */
  async list(): Promise<JobResource[]> {
    const byJob = new Map<string, JobResource[]>();
    if (!this.inDaemon) {
      for (const r of listJobResources(await this.service.outputDir)) {
        const job = r.name.slice(0, r.name.indexOf('/'));
        byJob.set(job, [...(byJob.get(job) ?? []), r]);
      }
    } else {
      for (const job of await this.service.getActiveProcesses()) {
        const dir = await this.dir(job.handle);
        if (dir) byJob.set(String(job.handle), jobFileResources(dir, String(job.handle)));
      }
      // Earlier sessions' finished jobs, the newest LISTED_ENDED.
      for (const job of await this.ended({ limit: LISTED_ENDED })) {
        if (!byJob.has(String(job.handle))) byJob.set(String(job.handle), jobFileResources(job.outputDir, String(job.handle)));
      }
    }
    for (const [handle, dir] of this.dirs) {
      if (!byJob.has(String(handle))) byJob.set(String(handle), jobFileResources(dir, String(handle)));
    }
    const order = (job: string) => Number(job.split('-')[0]);
    return [...byJob.entries()].sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b)).flatMap(([, r]) => r);
  }

  /** One page of `uri`, then a note when there is more to read or the job still runs. */
  async read(uri: string): Promise<Array<JobResourceContents | JobFileNote>> {
    const { job, file, offset, length } = parseJobUri(uri);
    const handle = /^\d+$/.test(job) ? Number(job) : null;
    if (handle !== null && file === 'stdout.txt') {
      const info = await this.job(handle);
      if (info?.mode === 'pty') {
        const live = await this.readThroughService(uri, info, offset, length);
        if (live) return live;
      }
    }
    const outputDir = await this.service.outputDir;
    // In process a job's folder is also found by its name in the session's folder (`3-2`).
    const dir = handle !== null ? await this.dir(handle) : null;
    if (!dir && this.inDaemon) throw new ResourceNotFound(`${uri}: no job ${job} here`);
    let page: JobResourceContents;
    try {
      page = readJobResource(outputDir, uri, dir ?? join(outputDir, job));
    } catch (e) {
      // A running job's info.json is first written a moment after it starts (the service
      // spares the file to the many commands that end at once): until then the service's
      // own word about the job stands in for it.
      const live = file === 'info.json' && handle !== null ? await this.job(handle) : undefined;
      if (!live) throw e;
      page = { uri, mimeType: 'application/json', text: `${JSON.stringify(live, null, 2)}\n`, _meta: { offset: 0, nextOffset: 0, running: true } };
    }
    return page._meta.next ? [page, note(page._meta.next, continues(page._meta.next, page._meta.nextOffset, page._meta.size ?? 0))] : [page];
  }

  /**
   * A PTY job's committed text from `offset` (memory, and the file for a middle that
   * left memory), and while it runs the lines not committed yet. Null when the service
   * no longer has the job (read its file instead).
   */
  private async readThroughService(
    uri: string,
    info: ProcessInfo,
    offset: number,
    length: number,
  ): Promise<Array<JobResourceContents | JobFileNote> | null> {
    const handle = info.handle;
    let chunk: { text: string; next: number; omitted: number };
    let atEnd: boolean;
    try {
      chunk = await this.service.readOutput(handle, { since: offset, maxBytes: length });
      atEnd = (await this.service.readOutput(handle, { since: chunk.next, maxBytes: 1 })).next === chunk.next;
    } catch (e) {
      const err = e as { code?: string; message?: string };
      if (err.code === 'INVALID_ARGUMENT') throw new ResourceNotFound(`${uri}: ${err.message ?? 'offset out of range'}`);
      return null; // removed meanwhile
    }
    const running = info.status === 'running';
    const page: JobResourceContents = {
      uri,
      mimeType: 'text/plain',
      text: chunk.text,
      _meta: {
        offset,
        nextOffset: chunk.next,
        ...(atEnd ? { size: chunk.next } : {}),
        ...(atEnd ? {} : { next: jobResourceUri(String(handle), 'stdout.txt', chunk.next, length) }),
        ...(chunk.omitted > 0 ? { omitted: chunk.omitted } : {}),
        ...(running ? { running: true } : {}),
      },
    };
    const readOn = jobResourceUri(String(handle), 'stdout.txt', chunk.next, length);
    const gap = chunk.omitted > 0 ? `(${chunk.omitted} bytes before this page are lost: neither memory nor the file holds them.) ` : '';
    if (!atEnd) return [page, note(readOn, `${gap}… continues: read ${readOn}`)];
    if (!running) return gap ? [page, note(uri, gap.trim())] : [page];
    const pending = await this.pendingLines(handle, chunk);
    const text = pending.trim() === ''
      ? `${gap}The job is still running; nothing more yet. Read on later from ${readOn}`
      : `${gap}The job is still running. Its latest lines, not final yet (a terminal may still redraw them):\n${pending.replace(/\n$/, "")}\n… read on later from ${readOn}`;
    return [page, note(readOn, text)];
  }

  /** The running job's lines not yet committed (its screen below the committed text). */
  private async pendingLines(handle: number, chunk: { text: string; next: number }): Promise<string> {
    try {
      const latest = await this.service.getProcessOutput(handle, { view: 'text', tailBytes: PENDING_BYTES });
      let committed = chunk.text;
      if (Buffer.byteLength(committed) < PENDING_BYTES && chunk.next > Buffer.byteLength(committed)) {
        // The page began late: fetch the committed end that `latest` overlaps. An offset
        // inside a character is refused, so step back to the character's start.
        for (let since = Math.max(0, chunk.next - PENDING_BYTES), tries = 0; tries < 4; since = Math.max(0, since - 1), tries++) {
          try {
            committed = (await this.service.readOutput(handle, { since, maxBytes: PENDING_BYTES + 4 })).text;
            break;
          } catch {
            // inside a character
          }
        }
      }
      return uncommitted(latest, committed);
    } catch {
      return ''; // ended or removed meanwhile
    }
  }
}

function continues(next: string, nextOffset: number, size: number): string {
  return `… continues: read ${next} (bytes ${nextOffset} to ${size} of the file are not in this page)`;
}
