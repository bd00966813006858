// The file a backgrounded execution's output goes to (`getLogFilePath(pid)`), which the
// model reads back (`read_background_output` reads its last lines). It holds the job's
// committed text — final, appended as it is read (compat/text.ts) — followed by the text
// not committed yet (`setPending`): a PTY job's lines still on its screen, which a
// program may still redraw, and the unfinished last line, rewritten in place as they
// change, so the file shows what the job printed so far and every line once. Upstream
// appends each raw chunk as it comes; without the pending part a PTY job's lines would
// reach the file only as they scroll off the screen, a screenful behind (or after half
// a second of quiet), and a prompt without a newline not at all while it waits.
//
// Writes go through one descriptor at explicit positions, one after another in the
// order they were asked for; a failure stops the logging (best effort, as upstream).
import { close, ftruncate, openSync, write } from 'node:fs';

function writeAt(fd: number, data: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      if (offset >= data.length) return resolve();
      write(fd, data, offset, data.length - offset, position + offset, (error, written) => {
        if (error) reject(error);
        else step(offset + written);
      });
    };
    step(0);
  });
}

function truncateAt(fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => ftruncate(fd, length, (error) => (error ? reject(error) : resolve())));
}

/** Upstream's text for a finished background command, with its own truncation. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}...[TRUNCATED]`;
}

/** The last characters of `text` kept to check the log's end by (whole characters). */
export function keepEnd(text: string): string {
  if (text.length <= 256) return text;
  const end = text.slice(-256);
  // A surrogate pair cut in two would not encode as the bytes it stands for.
  return /^[\uDC00-\uDFFF]/u.test(end) ? end.slice(1) : end;
}

export class BackgroundLog {
  /** Bytes of committed text in the file: where the pending text starts. */
  private committed = 0;
  /** How long the file is (or will be, once the queued writes are done). */
  private end = 0;
  /** The pending text the file holds after the committed text. */
  private pending = '';
  private queue: Promise<void> = Promise.resolve();
  private failed = false;
  private closed = false;

  private constructor(private readonly fd: number) {}

  /** Creates the file (it must not exist, as upstream's `wx`). Throws when it cannot. */
  static create(path: string): BackgroundLog {
    return new BackgroundLog(openSync(path, 'wx'));
  }

  /** Appends committed text: it replaces the pending text, which it usually contains. */
  append(text: string): void {
    if (!text || this.closed) return;
    const data = Buffer.from(text, 'utf8');
    const at = this.committed;
    this.committed += data.length;
    this.pending = '';
    const stale = this.end > this.committed;
    this.end = this.committed;
    const length = this.committed;
    this.enqueue(async () => {
      await writeAt(this.fd, data, at);
      if (stale) await truncateAt(this.fd, length);
    });
  }

  /** The text after the committed text now (a PTY job's screen lines not yet committed). */
  setPending(text: string): void {
    if (this.closed || text === this.pending) return;
    this.pending = text;
    const data = Buffer.from(text, 'utf8');
    const at = this.committed;
    const length = at + data.length;
    const shrinks = this.end > length;
    this.end = length;
    this.enqueue(async () => {
      if (data.length > 0) await writeAt(this.fd, data, at);
      if (shrinks) await truncateAt(this.fd, length);
    });
  }

  /**
   * Closes the file once the queued writes are done. The pending text stays: it is
   * what the job showed last (an ended job's is committed, and so already replaced).
   */
  close(): Promise<void> {
    if (this.closed) return this.queue;
    this.closed = true;
    this.queue = this.queue.then(() => new Promise<void>((resolve) => close(this.fd, () => resolve())));
    return this.queue;
  }

  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.failed) return;
      try {
        await step();
      } catch {
        // logging is best effort, as upstream's; the file keeps what it got
        this.failed = true;
      }
    });
  }
}
