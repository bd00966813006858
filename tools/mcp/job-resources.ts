// Each job's persisted files as MCP resources: `shell-job://<job>/<file>`, where <job> is
// the job's directory under the session's output directory (its handle, or `<handle>-2`
// when the name was taken, see src/output/persist.rs) and <file> is stdout.txt,
// stderr.txt or info.json. A read returns one page from `?offset=` (bytes) on, of
// `?length=` bytes at most (PAGE_BYTES by default), so a large output comes in pieces:
// `_meta.next` is the URI of the next piece.
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';

import type { AnyShellExecutionService as ShellExecutionService, RunOptions } from '../../contract/addon.js';

export const JOB_SCHEME = 'shell-job';
export const JOB_URI_TEMPLATE = `${JOB_SCHEME}://{job}/{file}{?offset,length}`;
/**
 * What a read returns at most by default (bytes of the file): a page a model's client
 * shows whole. Claude Code puts a tool result over 50,000 characters in a file and shows
 * the model a 2 KB preview (a 64 KiB page is about 76 KB of JSON); Codex cuts one to
 * about 12 KB. 8 KiB of text stays under both once escaped as JSON.
 */
export const PAGE_BYTES = 8 * 1024;
/** The most `?length=` may ask for (a program reading a whole file). */
export const MAX_PAGE_BYTES = 1024 * 1024;

const FILES: Record<string, { mimeType: string; label: string }> = {
  'stdout.txt': { mimeType: 'text/plain', label: 'output' },
  'stderr.txt': { mimeType: 'text/plain', label: 'stderr' },
  'info.json': { mimeType: 'application/json', label: 'info' },
};
const JOB_DIR = /^(\d+)(?:-(\d+))?$/;

/** A read of something that is not a job file of this session. */
export class ResourceNotFound extends Error {}

export interface JobResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  size: number;
}

export interface JobResourceContents {
  uri: string;
  mimeType: string;
  text: string;
  /**
   * `size`: the file's bytes (a running terminal job's stdout.txt: its committed text,
   * when this page reaches its end); `omitted`: bytes before this page that nothing
   * holds any more; `running`: the job still writes.
   */
  _meta: { offset: number; nextOffset: number; size?: number; next?: string; omitted?: number; running?: boolean };
}

/** A job file's URI; `length` only when it is not the default page. */
export function jobResourceUri(job: string, file: string, offset = 0, length = PAGE_BYTES): string {
  const query = [...(offset > 0 ? [`offset=${offset}`] : []), ...(length !== PAGE_BYTES ? [`length=${length}`] : [])];
  return `${JOB_SCHEME}://${job}/${file}${query.length > 0 ? `?${query.join('&')}` : ''}`;
}

function jobOrder(a: string, b: string): number {
  const [, ha = '0', sa = '1'] = JOB_DIR.exec(a) ?? [];
  const [, hb = '0', sb = '1'] = JOB_DIR.exec(b) ?? [];
  return Number(ha) - Number(hb) || Number(sa) - Number(sb);
}

/** Every job file in `outputDir`, oldest job first. */
export function listJobResources(outputDir: string): JobResource[] {
  let jobs: string[];
  try {
    jobs = readdirSync(outputDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && JOB_DIR.test(e.name))
      .map((e) => e.name)
      .sort(jobOrder);
  } catch {
    return []; // no job has run yet: the directory does not exist
  }
  return jobs.flatMap((job) => jobFileResources(join(outputDir, job), job));
}

/**
 * The files of one job's folder `dir` as resources named `job` (a daemon's jobs: the
 * daemon's handle, whichever session's folder holds them).
 */
export function jobFileResources(dir: string, job: string): JobResource[] {
  const resources: JobResource[] = [];
  {
    let info: { command?: string; status?: string } = {};
    try {
      info = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')) as typeof info;
    } catch {
      // written at the job's first update; the output files exist before it
    }
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return []; // removed meanwhile (old job directories are pruned)
    }
    for (const [file, { mimeType, label }] of Object.entries(FILES)) {
      if (!entries.includes(file)) continue;
      let size = 0;
      try {
        const fd = openSync(join(dir, file), constants.O_RDONLY | constants.O_NOFOLLOW);
        size = fstatSync(fd).size;
        closeSync(fd);
      } catch {
        continue;
      }
      resources.push({
        uri: jobResourceUri(job, file),
        name: `${job}/${file}`,
        title: `Job ${job} ${label}${info.command ? `: ${info.command}` : ''}`,
        description: info.status ? `status: ${info.status}` : 'status: unknown',
        mimeType,
        size,
      });
    }
  }
  return resources;
}

export function parseJobUri(uri: string): { job: string; file: string; offset: number; length: number } {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ResourceNotFound(`${uri} is not a URI`);
  }
  const job = url.host;
  const file = url.pathname.replace(/^\//, '');
  if (url.protocol !== `${JOB_SCHEME}:` || !JOB_DIR.test(job) || !Object.hasOwn(FILES, file)) {
    throw new ResourceNotFound(`${uri} is not a job file: the URIs are ${JOB_URI_TEMPLATE} with file stdout.txt, stderr.txt or info.json`);
  }
  const offsetText = url.searchParams.get('offset') ?? '0';
  if (!/^\d+$/.test(offsetText)) throw new ResourceNotFound(`${uri}: offset must be a number of bytes`);
  const lengthText = url.searchParams.get('length') ?? String(PAGE_BYTES);
  const length = /^\d+$/.test(lengthText) ? Number(lengthText) : 0;
  // At least one whole character (4 bytes in UTF-8), so every page moves the offset on.
  if (length < 4 || length > MAX_PAGE_BYTES) throw new ResourceNotFound(`${uri}: length must be a number of bytes from 4 to ${MAX_PAGE_BYTES}`);
  return { job, file, offset: Number(offsetText), length };
}

/** How many of the first `n` bytes of `buf` end on a whole UTF-8 character. */
function wholeUtf8(buf: Buffer, n: number): number {
  for (let i = n - 1; i >= Math.max(0, n - 4); i--) {
    const byte = buf[i] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i + length <= n ? n : i;
  }
  return n;
}

/**
 * One page of a job file; throws `ResourceNotFound` for anything else. `jobDir`: the
 * job's folder when it is not `<outputDir>/<job>` (a daemon's job, found by its handle).
 */
export function readJobResource(outputDir: string, uri: string, jobDir?: string): JobResourceContents {
  const { job, file, offset, length: pageBytes } = parseJobUri(uri);
  let fd: number;
  try {
    // No symlinks: only the files the service wrote are served.
    fd = openSync(join(jobDir ?? join(outputDir, job), file), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    throw new ResourceNotFound(`${uri}: job ${job} has no ${file} (any more)`);
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.min(offset, size);
    const buf = Buffer.alloc(Math.min(pageBytes, size - start));
    const read = readSync(fd, buf, 0, buf.length, start);
    const end = start + read < size ? wholeUtf8(buf, read) : read;
    const nextOffset = start + end;
    return {
      uri,
      mimeType: (FILES[file] as { mimeType: string }).mimeType,
      text: buf.subarray(0, end).toString('utf8'),
      _meta: { offset: start, nextOffset, size, ...(nextOffset < size ? { next: jobResourceUri(job, file, nextOffset, pageBytes) } : {}) },
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * The service, seen through a proxy that calls `onChange` when a job starts and when it
 * ends (the tools start every job with `start`, tools/base.ts). The service has no
 * event for new jobs; its `onOutput` tells the end.
 */
export function watchJobs(service: ShellExecutionService, onChange: () => void): ShellExecutionService {
  const follow = (handle: number) => {
    onChange();
    let stop: (() => void) | null = null;
    let ended = false;
    const listener = (event: { exited: boolean }) => {
      if (!event.exited) return;
      ended = true;
      onChange();
      try {
        stop?.();
      } catch {
        // ended already
      }
    };
    const stopped = (s: () => void) => {
      stop = s;
      if (ended) s();
    };
    try {
      const subscribed = service.onOutput(handle, listener);
      if (typeof subscribed === 'function') stopped(subscribed);
      else subscribed.then(stopped, () => onChange());
    } catch {
      onChange(); // ended before we could listen
    }
  };
  // In process `start` answers at once, from a daemon later: followed either way.
  const start = (command: string, options?: RunOptions | null) => {
    const job = service.start(command, options);
    if (job instanceof Promise) {
      return job.then((j) => {
        follow(j.handle);
        return j;
      });
    }
    follow(job.handle);
    return job;
  };
  return new Proxy(service, {
    get(target, key) {
      if (key === 'start') return start;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
