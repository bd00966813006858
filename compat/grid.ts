// A small terminal model that turns the raw tail of a PTY job into upstream's
// `AnsiOutput` grid: rows as wide as the terminal, runs of equal attributes as tokens,
// colours as `#rrggbb`, the cursor cell inverted. It models what build, test and
// prompt output use (text, CR/LF/BS/TAB, SGR, erase in line/display, cursor moves, the
// alternate screen); full-screen programs are shown from the native screen view
// instead. Until the native service offers a cell grid (docs/gemini-compat.md), this
// is where colours come from.
import { cellWidth } from './views.js';
import type { AnsiLine, AnsiOutput } from './types.js';

interface Attrs {
  readonly fg: string;
  readonly bg: string;
  readonly bold: boolean;
  readonly italic: boolean;
  readonly underline: boolean;
  readonly dim: boolean;
  readonly inverse: boolean;
}

/** One cell: a character (with its combining marks), its attributes, its width (0: the right half of a wide one). */
interface Cell {
  ch: string;
  a: Attrs;
  w: number;
}

type Line = Array<Cell | undefined>;

const PLAIN: Attrs = { fg: '', bg: '', bold: false, italic: false, underline: false, dim: false, inverse: false };

const BASE16 = [
  '#000000', '#800000', '#008000', '#808000', '#000080', '#800080', '#008080', '#c0c0c0',
  '#808080', '#ff0000', '#00ff00', '#ffff00', '#0000ff', '#ff00ff', '#00ffff', '#ffffff',
];
const CUBE = [0, 95, 135, 175, 215, 255];

function hex(r: number, g: number, b: number): string {
  return `#${[r, g, b].map((v) => Math.max(0, Math.min(255, v)).toString(16).padStart(2, '0')).join('')}`;
}

/** The xterm 256-colour palette: 16 base colours, a 6×6×6 cube, 24 greys. */
export function paletteHex(n: number): string {
  if (n < 16) return BASE16[n] ?? '';
  if (n < 232) {
    const i = n - 16;
    return hex(CUBE[Math.floor(i / 36)] ?? 0, CUBE[Math.floor(i / 6) % 6] ?? 0, CUBE[i % 6] ?? 0);
  }
  if (n < 256) {
    const v = 8 + 10 * (n - 232);
    return hex(v, v, v);
  }
  return '';
}

/** Applies one SGR parameter list to `a`. */
function sgr(a: Attrs, params: number[]): Attrs {
  const next = { ...a };
  if (params.length === 0) params = [0];
  for (let i = 0; i < params.length; i++) {
    const p = params[i] ?? 0;
    if (p === 0) Object.assign(next, PLAIN);
    else if (p === 1) next.bold = true;
    else if (p === 2) next.dim = true;
    else if (p === 3) next.italic = true;
    else if (p === 4) next.underline = true;
    else if (p === 7) next.inverse = true;
    else if (p === 22) next.bold = next.dim = false;
    else if (p === 23) next.italic = false;
    else if (p === 24) next.underline = false;
    else if (p === 27) next.inverse = false;
    else if (p >= 30 && p <= 37) next.fg = paletteHex(p - 30);
    else if (p >= 90 && p <= 97) next.fg = paletteHex(p - 90 + 8);
    else if (p === 39) next.fg = '';
    else if (p >= 40 && p <= 47) next.bg = paletteHex(p - 40);
    else if (p >= 100 && p <= 107) next.bg = paletteHex(p - 100 + 8);
    else if (p === 49) next.bg = '';
    else if (p === 38 || p === 48) {
      const mode = params[i + 1];
      let colour = '';
      if (mode === 5) {
        colour = paletteHex(params[i + 2] ?? 0);
        i += 2;
      } else if (mode === 2) {
        colour = hex(params[i + 2] ?? 0, params[i + 3] ?? 0, params[i + 4] ?? 0);
        i += 4;
      }
      if (p === 38) next.fg = colour;
      else next.bg = colour;
    }
  }
  return next;
}

function sameAttrs(x: Attrs, y: Attrs): boolean {
  return (
    x === y ||
    (x.fg === y.fg && x.bg === y.bg && x.bold === y.bold && x.italic === y.italic &&
      x.underline === y.underline && x.dim === y.dim && x.inverse === y.inverse)
  );
}

export class TerminalGrid {
  private lines: Line[];
  private row: number;
  private col = 0;
  private attrs: Attrs = PLAIN;
  private saved: { row: number; col: number } | undefined;
  /** The normal screen while the alternate one is in use. */
  private normal: { lines: Line[]; row: number; col: number } | undefined;

  constructor(
    private readonly cols: number,
    private readonly rows: number,
  ) {
    this.lines = Array.from({ length: rows }, () => []);
    this.row = 0;
  }

  get alternate(): boolean {
    return this.normal !== undefined;
  }

  private get screenTop(): number {
    return Math.max(0, this.lines.length - this.rows);
  }

  private lineAt(row: number): Line {
    let line = this.lines[row];
    if (!line) {
      line = [];
      this.lines[row] = line;
    }
    return line;
  }

  private lineFeed(): void {
    if (this.row >= this.lines.length - 1) this.lines.push([]);
    this.row += 1;
  }

  private put(ch: string): void {
    const w = cellWidth(ch);
    const line = this.lineAt(this.row);
    if (w === 0) {
      const prev = line[this.col - 1];
      if (prev) prev.ch += ch;
      return;
    }
    if (this.col + w > this.cols) {
      this.lineFeed();
      this.col = 0;
      this.put(ch);
      return;
    }
    const at = this.lineAt(this.row);
    at[this.col] = { ch, a: this.attrs, w };
    if (w === 2) at[this.col + 1] = { ch: '', a: this.attrs, w: 0 };
    this.col += w;
  }

  private eraseInLine(mode: number): void {
    const line = this.lineAt(this.row);
    if (mode === 0) line.length = Math.min(line.length, this.col);
    else if (mode === 1) for (let c = 0; c <= this.col && c < line.length; c++) line[c] = undefined;
    else line.length = 0;
  }

  private eraseInDisplay(mode: number): void {
    if (mode === 0) {
      this.eraseInLine(0);
      for (let r = this.row + 1; r < this.lines.length; r++) this.lines[r] = [];
    } else if (mode === 1) {
      for (let r = this.screenTop; r < this.row; r++) this.lines[r] = [];
      this.eraseInLine(1);
    } else {
      for (let r = this.screenTop; r < this.lines.length; r++) this.lines[r] = [];
      if (mode === 3) {
        const top = this.screenTop;
        this.lines.splice(0, top);
        this.row -= top;
      }
    }
  }

  private csi(prefix: string, params: number[], final: string): void {
    const n = Math.max(1, params[0] ?? 1);
    const top = this.screenTop;
    switch (final) {
      case 'm':
        if (prefix === '') this.attrs = sgr(this.attrs, params);
        break;
      case 'K':
        this.eraseInLine(params[0] ?? 0);
        break;
      case 'J':
        this.eraseInDisplay(params[0] ?? 0);
        break;
      case 'A':
        this.row = Math.max(top, this.row - n);
        break;
      case 'B':
        this.row = Math.min(this.lines.length - 1, this.row + n);
        break;
      case 'C':
        this.col = Math.min(this.cols - 1, this.col + n);
        break;
      case 'D':
        this.col = Math.max(0, this.col - n);
        break;
      case 'G':
        this.col = Math.min(this.cols - 1, n - 1);
        break;
      case 'd':
        this.row = Math.min(this.lines.length - 1, top + n - 1);
        break;
      case 'H':
      case 'f':
        this.row = Math.min(this.lines.length - 1, top + Math.max(1, params[0] ?? 1) - 1);
        this.col = Math.min(this.cols - 1, Math.max(1, params[1] ?? 1) - 1);
        break;
      case 'P': {
        const line = this.lineAt(this.row);
        line.splice(this.col, n);
        break;
      }
      case 'X': {
        const line = this.lineAt(this.row);
        for (let c = this.col; c < this.col + n && c < line.length; c++) line[c] = undefined;
        break;
      }
      case '@': {
        const line = this.lineAt(this.row);
        if (this.col < line.length) line.splice(this.col, 0, ...new Array<undefined>(n).fill(undefined));
        if (line.length > this.cols) line.length = this.cols;
        break;
      }
      case 'h':
      case 'l':
        if (prefix === '?' && params.some((p) => p === 1049 || p === 1047 || p === 47)) {
          this.switchScreen(final === 'h');
        }
        break;
      default:
        break;
    }
  }

  private switchScreen(alternate: boolean): void {
    if (alternate && !this.normal) {
      this.normal = { lines: this.lines, row: this.row, col: this.col };
      this.lines = Array.from({ length: this.rows }, () => []);
      this.row = 0;
      this.col = 0;
    } else if (!alternate && this.normal) {
      ({ lines: this.lines, row: this.row, col: this.col } = this.normal);
      this.normal = undefined;
    }
  }

  /** Feeds terminal output (decoded text, escape sequences included). */
  feed(data: string): void {
    const len = data.length;
    let i = 0;
    while (i < len) {
      const code = data.charCodeAt(i);
      if (code === 0x1b) {
        i = this.escape(data, i + 1);
        continue;
      }
      if (code < 0x20 || code === 0x7f) {
        if (code === 0x0a || code === 0x0b || code === 0x0c) this.lineFeed();
        else if (code === 0x0d) this.col = 0;
        else if (code === 0x08) this.col = Math.max(0, this.col - 1);
        else if (code === 0x09) this.col = Math.max(this.col, Math.min(this.col + 8 - (this.col % 8), this.cols - 1));
        i += 1;
        continue;
      }
      const cp = data.codePointAt(i) ?? code;
      const ch = String.fromCodePoint(cp);
      this.put(ch);
      i += ch.length;
    }
  }

  /** Handles the escape sequence after ESC at `i`; returns the index after it. */
  private escape(data: string, i: number): number {
    const kind = data[i];
    if (kind === undefined) return i;
    if (kind === '[') {
      let j = i + 1;
      let prefix = '';
      if (j < data.length && '?>=<'.includes(data[j]!)) prefix = data[j++]!;
      const start = j;
      while (j < data.length && /[0-9;:]/.test(data[j]!)) j++;
      while (j < data.length && data.charCodeAt(j) >= 0x20 && data.charCodeAt(j) <= 0x2f) j++;
      const final = data[j];
      if (final === undefined) return data.length;
      const params = data
        .slice(start, j)
        .replace(/[ -/]+$/u, '')
        .split(/[;:]/)
        .filter((p, _k, all) => p !== '' || all.length > 1)
        .map((p) => (p === '' ? 0 : Number.parseInt(p, 10)));
      this.csi(prefix, params, final);
      return j + 1;
    }
    if (kind === ']' || kind === 'P' || kind === '_' || kind === '^') {
      // OSC / DCS / APC / PM: up to BEL or ST.
      let j = i + 1;
      while (j < data.length) {
        if (data.charCodeAt(j) === 0x07) return j + 1;
        if (data.charCodeAt(j) === 0x1b && data[j + 1] === '\\') return j + 2;
        j++;
      }
      return data.length;
    }
    if (kind === '7') this.saved = { row: this.row - this.screenTop, col: this.col };
    else if (kind === '8' && this.saved) {
      this.row = Math.min(this.lines.length - 1, this.screenTop + this.saved.row);
      this.col = this.saved.col;
    } else if (kind === 'M') this.row = Math.max(this.screenTop, this.row - 1);
    else if (kind === 'c') {
      this.lines = Array.from({ length: this.rows }, () => []);
      this.row = this.col = 0;
      this.attrs = PLAIN;
    } else if ('()*+'.includes(kind)) return i + 2;
    return i + 1;
  }

  /**
   * The grid as upstream serialises it: the last `maxLines` rows up to the last one
   * with content or the cursor, tokens of equal attributes, the cursor cell inverted.
   * Without `showColor`, colours are dropped and the other attributes kept; without
   * `trim`, every row to the bottom of the screen is included.
   */
  toAnsiOutput(maxLines: number, showColor: boolean, trim = true): AnsiOutput {
    let last = trim ? this.row : this.lines.length - 1;
    for (let r = this.lines.length - 1; r > last; r--) {
      if ((this.lines[r] ?? []).some((c) => c && c.ch.trim() !== '')) {
        last = r;
        break;
      }
    }
    const first = Math.max(0, last + 1 - maxLines);
    const out: AnsiOutput = [];
    for (let r = first; r <= last; r++) out.push(this.serialise(this.lines[r] ?? [], r === this.row ? this.col : -1, showColor));
    return out;
  }

  private serialise(line: Line, cursor: number, showColor: boolean): AnsiLine {
    const tokens: AnsiLine = [];
    const width = Math.max(line.length, cursor + 1);
    let text = '';
    let attrs: Attrs = PLAIN;
    let isCursor = false;
    let blank = false;
    const flush = (): void => {
      if (!text) return;
      tokens.push({
        text,
        bold: attrs.bold,
        italic: attrs.italic,
        underline: attrs.underline,
        dim: attrs.dim,
        inverse: attrs.inverse || isCursor,
        isUninitialized: blank,
        fg: showColor ? attrs.fg : '',
        bg: showColor ? attrs.bg : '',
      });
      text = '';
    };
    for (let c = 0; c < width; c++) {
      const cell = line[c];
      if (cell && cell.w === 0) continue;
      const a = cell?.a ?? PLAIN;
      const here = c === cursor;
      const unset = !cell;
      if (text && (!sameAttrs(a, attrs) || here !== isCursor || unset !== blank)) flush();
      attrs = a;
      isCursor = here;
      blank = unset;
      text += cell ? cell.ch : ' ';
    }
    flush();
    return tokens;
  }
}

/** Interim, until the native `getScreen` lands: the model run over the raw tail. */
export function legacyScreenGrid(
  service: { getProcessOutput(handle: number, options: { view: 'raw'; tailBytes: number }): string },
  handle: number,
  cols: number,
  rows: number,
  options: { maxLines: number; showColor: boolean; trim: boolean },
): { grid: AnsiOutput; blank: boolean } {
  const raw = service.getProcessOutput(handle, { view: 'raw', tailBytes: 256 * 1024 });
  // Only the lines the grid can show; a tail cut from a longer output starts inside a line.
  let at = raw.length;
  for (let n = 0; n <= options.maxLines + rows && at >= 0; n++) at = raw.lastIndexOf('\n', at - 1);
  const terminal = new TerminalGrid(cols, rows);
  terminal.feed(at >= 0 || raw.length >= 256 * 1024 ? raw.slice(Math.max(0, at) + 1) : raw);
  const grid = terminal.toAnsiOutput(options.maxLines, options.showColor, options.trim);
  return { grid, blank: grid.every((line) => line.every((t) => t.text.trim() === '')) };
}
