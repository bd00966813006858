// Turning the native service's text/screen/raw views into what upstream emits:
// AnsiOutput grids, the final `output` string, binary sniffing, and line deltas.
import type { AnsiLine, AnsiOutput, AnsiToken } from './types.js';

function token(text: string): AnsiToken {
  return {
    text,
    bold: false,
    italic: false,
    underline: false,
    dim: false,
    inverse: false,
    isUninitialized: text.length === 0,
    fg: '',
    bg: '',
  };
}

/** One AnsiLine per text line (no colours: the native views carry none yet). */
export function toAnsiOutput(lines: readonly string[]): AnsiOutput {
  return lines.map((line): AnsiLine => (line.length > 0 ? [token(line)] : []));
}

/** The text of a grid, one line per row, trailing empty rows dropped. */
export function gridLines(grid: AnsiOutput): string {
  const lines = grid.map((line) => line.map((t) => t.text).join(''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

/** The last `max` lines of `text`, trailing blank lines dropped unless `keepTrailing`. */
export function lastLines(text: string, max: number, keepTrailing = false): string[] {
  const lines = text.split('\n');
  if (!keepTrailing) {
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  }
  return lines.length > max ? lines.slice(lines.length - max) : lines;
}

/**
 * Upstream's PTY `output`: the last `maxLines` lines of the terminal buffer (the line
 * the cursor sits on counts), as written, trailing empty lines dropped.
 */
export function ptyOutput(text: string, maxLines: number): string {
  let lines = text.split('\n');
  if (lines.length > maxLines) lines = lines.slice(lines.length - maxLines);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

/** Upstream's pipes `output`: the whole text trimmed. */
export function pipesOutput(text: string): string {
  return text.trim();
}

const ALT_ON = /\x1b\[\?(?:1049|1047|47)h/g;
const ALT_OFF = /\x1b\[\?(?:1049|1047|47)l/g;

function lastIndex(re: RegExp, s: string): number {
  let at = -1;
  re.lastIndex = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) at = m.index;
  return at;
}

/** Whether the raw tail leaves the terminal in the alternate screen (vim, less, top). */
export function inAlternateScreen(rawTail: string): boolean {
  const on = lastIndex(ALT_ON, rawTail);
  return on >= 0 && on > lastIndex(ALT_OFF, rawTail);
}

// ECMA-48 CSI/OSC/other escapes, enough to measure what a terminal would show.
const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/**
 * Upstream's binary sniff on the first bytes of output: pipes mode calls any NUL
 * in the first 512 bytes binary; PTY mode strips escapes first and asks for more
 * than 10% NULs.
 */
export function looksBinary(head: Buffer, pty: boolean): boolean {
  const sample = head.subarray(0, 512);
  if (!pty) return sample.includes(0);
  const stripped = Buffer.from(sample.toString('latin1').replace(ANSI, ''), 'latin1');
  if (stripped.length === 0) return false;
  let nul = 0;
  for (const b of stripped) if (b === 0) nul += 1;
  return nul / stripped.length > 0.1;
}

const OMITTED = /\n?\[\.\.\. (\d+) bytes omitted \.\.\.\]\n/;
const SIGNATURE = 256;
const GAP_MARKER = '[... output omitted ...]\n';

/**
 * Follows a text view that only grows at its end (the committed lines) and yields
 * what is new since the last call. While the job runs only whole lines are taken,
 * because the line being written can still be redrawn by `\r`. Once the view is
 * head+tail bounded (a flood), the resume point is found again by the last text
 * handed out; if that scrolled into the omitted middle, a marker says so.
 */
export class LineDeltas {
  private taken = 0;
  private signature = '';
  private bounded = false;

  next(view: string, final: boolean): string {
    const end = final ? view.length : view.lastIndexOf('\n') + 1;
    if (end <= 0) return '';
    const omitted = OMITTED.exec(view);
    if (!omitted && !this.bounded) {
      const start = Math.min(this.taken, end);
      return this.take(view.slice(start, end), end);
    }
    const headEnd = omitted ? omitted.index : 0;
    const tailStart = omitted ? omitted.index + omitted[0].length : 0;
    if (!this.bounded && omitted && this.taken <= headEnd) {
      // First time bounded: the head is still where it was; only the middle is gone.
      this.bounded = true;
      const head = view.slice(this.taken, headEnd);
      const gap = head.length > 0 && !head.endsWith('\n') ? '\n' : '';
      return this.take(`${head}${gap}${GAP_MARKER}${view.slice(tailStart, end)}`, end);
    }
    this.bounded = true;
    const found = this.signature ? view.lastIndexOf(this.signature, end - this.signature.length) : -1;
    if (found >= tailStart) return this.take(view.slice(found + this.signature.length, end), end);
    // What was handed out last has scrolled into the omitted middle.
    return this.take(GAP_MARKER + view.slice(tailStart, end), end);
  }

  private take(fresh: string, end: number): string {
    this.taken = end;
    if (fresh) this.remember(fresh);
    return fresh;
  }

  private remember(fresh: string): void {
    this.signature = (this.signature + fresh).slice(-SIGNATURE);
  }
}
