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

// Code points a terminal draws two cells wide (East Asian Wide/Fullwidth, emoji).
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f], [0x231a, 0x231b], [0x2329, 0x232a], [0x23e9, 0x23ec], [0x23f0, 0x23f0],
  [0x23f3, 0x23f3], [0x25fd, 0x25fe], [0x2614, 0x2615], [0x2648, 0x2653], [0x267f, 0x267f],
  [0x2693, 0x2693], [0x26a1, 0x26a1], [0x26aa, 0x26ab], [0x26bd, 0x26be], [0x26c4, 0x26c5],
  [0x26ce, 0x26ce], [0x26d4, 0x26d4], [0x26ea, 0x26ea], [0x26f2, 0x26f3], [0x26f5, 0x26f5],
  [0x26fa, 0x26fa], [0x26fd, 0x26fd], [0x2705, 0x2705], [0x270a, 0x270b], [0x2728, 0x2728],
  [0x274c, 0x274c], [0x274e, 0x274e], [0x2753, 0x2755], [0x2757, 0x2757], [0x2795, 0x2797],
  [0x27b0, 0x27b0], [0x27bf, 0x27bf], [0x2b1b, 0x2b1c], [0x2b50, 0x2b50], [0x2b55, 0x2b55],
  [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xa000, 0xa4cf],
  [0xa960, 0xa97f], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19], [0xfe30, 0xfe6f],
  [0xff00, 0xff60], [0xffe0, 0xffe6], [0x1f004, 0x1f004], [0x1f0cf, 0x1f0cf], [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a], [0x1f200, 0x1f251], [0x1f300, 0x1f64f], [0x1f680, 0x1f6ff], [0x1f7e0, 0x1f7eb],
  [0x1f90c, 0x1f9ff], [0x1fa70, 0x1faff], [0x20000, 0x3fffd],
];
const ZERO_WIDTH = /^[\p{M}\u200b-\u200f\u2060\ufe00-\ufe0f]$/u;

/** Cells a terminal gives one code point. */
export function cellWidth(ch: string): number {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x300) return 1;
  if (ZERO_WIDTH.test(ch)) return 0;
  if (cp < 0x1100) return 1;
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = WIDE[mid]!;
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return 2;
  }
  return 1;
}

/**
 * Splits a text line into the rows a terminal `cols` wide shows it on, tabs expanded to
 * their stops: the grid of a PTY job is a display, laid out like upstream's emulated
 * terminal (the text output keeps the tabs).
 */
export function wrapLine(line: string, cols: number): string[] {
  if (cols <= 0 || (line.length <= cols / 2 && !line.includes('\t'))) return [line];
  const rows: string[] = [];
  let row = '';
  let col = 0;
  for (const ch of line) {
    if (ch === '\t') {
      // To the next stop, but never past the last column (xterm does not wrap on a tab).
      const target = Math.max(col, Math.min(col + 8 - (col % 8), cols - 1));
      row += ' '.repeat(target - col);
      col = target;
      continue;
    }
    const w = cellWidth(ch);
    if (col + w > cols && col > 0) {
      rows.push(row);
      row = '';
      col = 0;
    }
    row += ch;
    col += w;
  }
  rows.push(row);
  return rows;
}

/** One AnsiLine per text line (no colours: the native views carry none yet). */
export function toAnsiOutput(lines: readonly string[]): AnsiOutput {
  return lines.map((line): AnsiLine => (line.length > 0 ? [token(line)] : []));
}

/** The text of a grid, one line per row: cells never written (padding, the cursor) are left out at row ends, empty rows at the end dropped. */
export function gridLines(grid: AnsiOutput): string {
  const lines = grid.map((line) => {
    let end = line.length;
    while (end > 0 && line[end - 1]!.isUninitialized) end--;
    return line
      .slice(0, end)
      .map((t) => t.text)
      .join('');
  });
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
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

/** The end of `text` holding its last `count` newline-ended lines (and the line after them). */
export function tailLines(text: string, count: number): string {
  let at = text.length;
  for (let n = 0; n <= count; n++) {
    at = text.lastIndexOf('\n', at - 1);
    if (at < 0) return text;
  }
  return text.slice(at + 1);
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
    const tailStart = omitted ? omitted.index + omitted[0].length : 0;
    let fresh: string;
    if (!omitted && !this.bounded) {
      fresh = view.slice(Math.min(this.taken, end), end);
    } else if (!this.bounded && omitted && this.taken <= omitted.index) {
      // First time bounded: the head is still where it was; only the middle is gone.
      const head = view.slice(this.taken, omitted.index);
      const gap = head.length > 0 && !head.endsWith('\n') ? '\n' : '';
      fresh = `${head}${gap}${GAP_MARKER}${view.slice(tailStart, end)}`;
    } else {
      const sig = this.signature;
      const found = sig ? view.lastIndexOf(sig, end - sig.length) : tailStart;
      if (found >= tailStart) fresh = view.slice(found + sig.length, end);
      // What was handed out last has scrolled into the omitted middle.
      else fresh = GAP_MARKER + view.slice(tailStart, end);
    }
    this.bounded ||= !!omitted;
    this.taken = end;
    // The text just before the resume point, as the view holds it (never the marker).
    this.signature = view.slice(Math.max(tailStart, end - SIGNATURE), end);
    return fresh;
  }
}
