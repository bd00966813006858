// Helpers that turn the native service's output into what upstream emits: the final
// `output` strings, binary sniffing, cell widths for the grid.
import type { AnsiOutput } from './types.js';

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

/** Upstream's pipes `output`: the whole text trimmed. */
export function pipesOutput(text: string): string {
  return text.trim();
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
