// The adapter's pure helpers: the grid from a native screen, cell widths, binary
// sniffing, outputs.
import { describe, expect, it } from 'vitest';

import type { NativeCellRun, NativeScreen } from '../../compat/native';
import { screenGrid } from '../../compat/screen';
import type { AnsiOutput } from '../../compat/types';
import { cellWidth, looksBinary, ptyOutput } from '../../compat/views';

describe('cellWidth', () => {
  it('counts wide characters as two cells and combining marks as none', () => {
    expect(cellWidth('a')).toBe(1);
    expect(cellWidth('語')).toBe(2);
    expect(cellWidth('🎉')).toBe(2);
    expect(cellWidth('\u0301')).toBe(0);
  });
});

describe('looksBinary', () => {
  it('pipes: any NUL in the first 512 bytes; PTY: more than 10% NULs after escapes', () => {
    expect(looksBinary(Buffer.from('x\0y'), false)).toBe(true);
    expect(looksBinary(Buffer.from(`${'a'.repeat(600)}\0`), false)).toBe(false);
    expect(looksBinary(Buffer.from(`${'a'.repeat(20)}\0`), true)).toBe(false);
    expect(looksBinary(Buffer.from('\x1b[31m\0\0\0ab'), true)).toBe(true);
    expect(looksBinary(Buffer.from('plain text\n'), true)).toBe(false);
  });
});

describe('ptyOutput', () => {
  it('keeps the last lines of the buffer (the cursor line counts), trailing empties dropped', () => {
    expect(ptyOutput('a\nb\nc\n', 10)).toBe('a\nb\nc');
    expect(ptyOutput('a\nb\nc\n', 3)).toBe('b\nc');
    expect(ptyOutput('\n\nx  \n\n', 10)).toBe('\n\nx  ');
  });
});

describe('screenGrid', () => {
  const plain = { fg: '', bg: '', bold: false, italic: false, underline: false, dim: false, inverse: false };
  const run = (text: string, extra: Partial<NativeCellRun> = {}): NativeCellRun => ({ ...plain, text, ...extra });
  const screen = (lines: NativeCellRun[][], cursor: { x: number; y: number }, rows = 4): NativeScreen => ({
    cols: 10,
    rows,
    cursor: { ...cursor, visible: true },
    alternateScreen: false,
    lines,
  });
  const cells = (grid: AnsiOutput) =>
    grid.map((line) => line.map((t) => `${t.text}:${t.fg || '-'}${t.bold ? 'b' : ''}${t.inverse ? 'r' : ''}`).join(' '));

  it('keeps runs and colours, inverts the cursor cell (past the end: blanks, then a blank cell)', () => {
    const s = screen([[run('red', { fg: '#800000', bold: true }), run(' ok')], [], [], []], { x: 3, y: 1 });
    const { grid, blank } = screenGrid(s, { maxLines: 100, showColor: true, trim: true });
    expect(blank).toBe(false);
    expect(cells(grid)).toEqual(['red:#800000b  ok:-', '   :-  :-r']);
    expect(cells(screenGrid(s, { maxLines: 100, showColor: false, trim: true }).grid)[0]).toBe('red:-b  ok:-');
  });

  it('splits a run at the cursor, counting wide characters as two cells', () => {
    const s = screen([[run('日本xy')]], { x: 4, y: 0 }, 1);
    expect(cells(screenGrid(s, { maxLines: 100, showColor: true, trim: true }).grid)).toEqual(['日本:- x:-r y:-']);
  });

  it('trims below the last non-blank row and the cursor unless told not to; keeps the last maxLines', () => {
    const s = screen([[run('old')], [run('a')], [run('b')], [], [], []], { x: 0, y: 1 });
    expect(cells(screenGrid(s, { maxLines: 100, showColor: true, trim: true }).grid)).toEqual(['old:-', 'a:-', 'b:-', ' :-r']);
    expect(screenGrid(s, { maxLines: 100, showColor: true, trim: false }).grid).toHaveLength(6);
    expect(cells(screenGrid(s, { maxLines: 2, showColor: true, trim: true }).grid)).toEqual(['b:-', ' :-r']);
    expect(screenGrid(screen([[], []], { x: 0, y: 0 }, 2), { maxLines: 9, showColor: true, trim: true }).blank).toBe(true);
  });
});
