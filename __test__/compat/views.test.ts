// The adapter's pure helpers: text deltas, terminal wrapping, binary sniffing, outputs.
import { describe, expect, it } from 'vitest';

import { paletteHex, TerminalGrid } from '../../compat/grid';
import { cellWidth, inAlternateScreen, LineDeltas, looksBinary, ptyOutput, wrapLine } from '../../compat/views';

describe('LineDeltas', () => {
  it('hands out whole lines while running and the rest at the end', () => {
    const d = new LineDeltas();
    expect(d.next('a\nb', false)).toBe('a\n');
    expect(d.next('a\nb\nc', false)).toBe('b\n');
    expect(d.next('a\nb\nc', false)).toBe('');
    expect(d.next('a\nb\ncd', true)).toBe('cd');
  });

  it('never hands out a line still being redrawn', () => {
    const d = new LineDeltas();
    expect(d.next('10%', false)).toBe('');
    expect(d.next('20%', false)).toBe('');
    expect(d.next('done\n', false)).toBe('done\n');
  });

  it('keeps the head and resumes in the tail once the view is bounded', () => {
    const d = new LineDeltas();
    expect(d.next('h1\nh2\n', false)).toBe('h1\nh2\n');
    const view = 'h1\nh2\n[... 500 bytes omitted ...]\nt1\nt2\n';
    expect(d.next(view, false)).toBe('[... output omitted ...]\nt1\nt2\n');
    expect(d.next(`${view}t3\n`, false)).toBe('t3\n');
  });

  it('bounded at the first look: head, marker, tail', () => {
    const d = new LineDeltas();
    expect(d.next('h1\n[... 9 bytes omitted ...]\nt1\n', true)).toBe('h1\n[... output omitted ...]\nt1\n');
  });
});

describe('wrapLine, cellWidth', () => {
  it('wraps at the width, counting wide characters as two cells and tabs to the stop', () => {
    expect(wrapLine('x'.repeat(200), 80).map((r) => r.length)).toEqual([80, 80, 40]);
    expect(wrapLine('日'.repeat(50), 80)).toEqual(['日'.repeat(40), '日'.repeat(10)]);
    expect(wrapLine('short', 80)).toEqual(['short']);
    expect(wrapLine('a\tb', 80)).toEqual(['a       b']);
    expect(wrapLine('日本\tx', 80)).toEqual(['日本    x']);
    expect(wrapLine(`${'x'.repeat(76)}\tyz`, 80)).toEqual([`${'x'.repeat(76)}   y`, 'z']);
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

describe('ptyOutput, inAlternateScreen', () => {
  it('keeps the last lines of the buffer (the cursor line counts), trailing empties dropped', () => {
    expect(ptyOutput('a\nb\nc\n', 10)).toBe('a\nb\nc');
    expect(ptyOutput('a\nb\nc\n', 3)).toBe('b\nc');
    expect(ptyOutput('\n\nx  \n\n', 10)).toBe('\n\nx  ');
  });

  it('tracks the alternate screen by its last switch', () => {
    expect(inAlternateScreen('\x1b[?1049hvim')).toBe(true);
    expect(inAlternateScreen('\x1b[?1049hvim\x1b[?1049lafter')).toBe(false);
    expect(inAlternateScreen('plain')).toBe(false);
  });
});

describe('TerminalGrid', () => {
  const rowsOf = (g: TerminalGrid, color = true) =>
    g.toAnsiOutput(2000, color).map((line) => line.map((t) => t.text).join('').replace(/\s+$/u, ''));

  it('lays out text, wraps at the width and keeps the cursor row', () => {
    const g = new TerminalGrid(10, 5);
    g.feed('hello\r\n0123456789abc\r\n');
    expect(rowsOf(g)).toEqual(['hello', '0123456789', 'abc', '']);
  });

  it('turns SGR into tokens with colours and attributes; showColor off keeps attributes only', () => {
    const g = new TerminalGrid(40, 5);
    g.feed('\x1b[1;31mred\x1b[0m \x1b[38;5;202mo\x1b[38;2;1;2;3mx\x1b[0m\x1b[4m_\x1b[24m');
    const [row] = g.toAnsiOutput(10, true);
    expect(row!.map((t) => [t.text, t.fg, t.bold, t.underline])).toEqual([
      ['red', '#800000', true, false],
      [' ', '', false, false],
      ['o', '#ff5f00', false, false],
      ['x', '#010203', false, false],
      ['_', '', false, true],
      [' ', '', false, false],
    ]);
    expect(row![row!.length - 1]!.inverse).toBe(true); // the cursor cell
    const [plain] = g.toAnsiOutput(10, false);
    expect(plain!.every((t) => t.fg === '' && t.bg === '')).toBe(true);
    expect(plain![0]!.bold).toBe(true);
  });

  it('applies CR redraws, erase in line, cursor moves and multi-line redraws', () => {
    const g = new TerminalGrid(20, 5);
    g.feed('10%\r20%\r100%\r\nold text\r\x1b[Knew\r\nabcdef\x1b[3Dxy\r\na1\r\nb1\r\n\x1b[2Aa2\r\n\x1b[1Bdone\r\n');
    expect(rowsOf(g)).toEqual(['100%', 'new', 'abcxyf', 'a2', 'b1', 'done', '']);
  });

  it('drops what a full-screen program drew once it leaves the alternate screen', () => {
    const g = new TerminalGrid(20, 5);
    g.feed('before\r\n\x1b[?1049h\x1b[Hvim stuff\x1b[?1049lafter\r\n');
    expect(rowsOf(g)).toEqual(['before', 'after', '']);
    expect(g.alternate).toBe(false);
  });

  it('wide characters take two cells without a filler', () => {
    const g = new TerminalGrid(5, 3);
    g.feed('日本語');
    expect(rowsOf(g)).toEqual(['日本', '語']);
    expect(paletteHex(231)).toBe('#ffffff');
    expect(paletteHex(232)).toBe('#080808');
  });
});
