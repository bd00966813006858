// A PTY job's `AnsiOutput` grid, from the native screen (`getScreen`, see index.d.ts):
// the rows upstream's renderer sends (the last `maxSerializedLines` of scrollback and
// screen, up to the last non-blank row or the cursor row), runs of equal attributes as
// tokens, the cursor cell drawn inverted as upstream's serializer draws it.
import type { NativeCellRun, NativePackedScreen, NativeScreen } from './native.js';
import type { AnsiLine, AnsiOutput, AnsiToken } from './types.js';
import { cellWidth } from './views.js';

export interface GridOptions {
  maxLines: number;
  showColor: boolean;
  /** Upstream's dynamic line trimming: rows below the last non-blank row and the cursor are left out. */
  trim: boolean;
}

function toToken(run: NativeCellRun, showColor: boolean, inverse: boolean, uninitialized: boolean): AnsiToken {
  return {
    text: run.text,
    bold: run.bold,
    italic: run.italic,
    underline: run.underline,
    dim: run.dim,
    inverse: run.inverse !== inverse,
    isUninitialized: uninitialized,
    fg: showColor ? run.fg : '',
    bg: showColor ? run.bg : '',
  };
}

const BLANK: NativeCellRun = { text: ' ', fg: '', bg: '', bold: false, italic: false, underline: false, dim: false, inverse: false };

/**
 * One row's tokens; on the cursor row the cell under the cursor becomes a token of its
 * own with `inverse` flipped (past the row's end: blanks up to it, then a blank cell).
 * Columns are cells: a wide character takes two, a combining mark none.
 */
function row(runs: readonly NativeCellRun[], cursorX: number, showColor: boolean): AnsiLine {
  // Off the cursor row a run is one token as it is: no need to walk its cells (a
  // render walks up to 2000 rows, the cursor is on one of them).
  if (cursorX < 0) return runs.map((run) => toToken(run, showColor, false, false));
  const tokens: AnsiLine = [];
  let col = 0;
  for (const run of runs) {
    const chars = [...run.text];
    let at = -1;
    let cells = 0;
    for (let i = 0; i < chars.length; i++) {
      const w = cellWidth(chars[i]!);
      if (at < 0 && w > 0 && col + cells <= cursorX && cursorX < col + cells + w) at = i;
      cells += w;
    }
    col += cells;
    if (at < 0) {
      tokens.push(toToken(run, showColor, false, false));
      continue;
    }
    // The cursor cell with its combining marks.
    let end = at + 1;
    while (end < chars.length && cellWidth(chars[end]!) === 0) end++;
    const pieces = [chars.slice(0, at), chars.slice(at, end), chars.slice(end)];
    pieces.forEach((piece, i) => {
      if (piece.length > 0) tokens.push(toToken({ ...run, text: piece.join('') }, showColor, i === 1, false));
    });
  }
  if (cursorX >= col) {
    if (cursorX > col) tokens.push(toToken({ ...BLANK, text: ' '.repeat(cursorX - col) }, showColor, false, true));
    tokens.push(toToken(BLANK, showColor, true, true));
  }
  return tokens;
}

/**
 * `getScreenPacked`'s answer as `getScreen`'s: the runs are rebuilt here, where a plain
 * object costs far less than one made through N-API in the addon.
 */
export function unpackScreen(packed: NativePackedScreen): NativeScreen {
  const { text, lineRuns, runLengths, runFlags, runFg, runBg, colors } = packed;
  const lines: NativeCellRun[][] = new Array<NativeCellRun[]>(lineRuns.length);
  let run = 0;
  let at = 0;
  for (let l = 0; l < lineRuns.length; l++) {
    const count = lineRuns[l]!;
    const line: NativeCellRun[] = new Array<NativeCellRun>(count);
    for (let i = 0; i < count; i++, run++) {
      const end = at + runLengths[run]!;
      const flags = runFlags[run]!;
      line[i] = {
        text: text.slice(at, end),
        fg: colors[runFg[run]!]!,
        bg: colors[runBg[run]!]!,
        bold: (flags & 1) !== 0,
        italic: (flags & 2) !== 0,
        underline: (flags & 4) !== 0,
        dim: (flags & 8) !== 0,
        inverse: (flags & 16) !== 0,
      };
      at = end;
    }
    lines[l] = line;
  }
  return { cols: packed.cols, rows: packed.rows, cursor: packed.cursor, alternateScreen: packed.alternateScreen, lines };
}

function isBlank(runs: readonly NativeCellRun[]): boolean {
  return runs.every((r) => r.text.trim() === '');
}

/** The grid and whether it shows anything yet (upstream sends nothing before the first non-blank output). */
export function screenGrid(screen: NativeScreen, options: GridOptions): { grid: AnsiOutput; blank: boolean } {
  const { lines } = screen;
  const cursorRow = lines.length - screen.rows + screen.cursor.y;
  let last = lines.length - 1;
  if (options.trim) {
    while (last >= 0 && last > cursorRow && isBlank(lines[last]!)) last--;
  }
  const first = Math.max(0, last + 1 - options.maxLines);
  const grid: AnsiOutput = [];
  let blank = true;
  for (let r = first; r <= last; r++) {
    const runs = lines[r]!;
    if (!isBlank(runs)) blank = false;
    grid.push(row(runs, r === cursorRow ? screen.cursor.x : -1, options.showColor));
  }
  return { grid, blank };
}
