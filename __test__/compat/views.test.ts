// The adapter's pure helpers: text deltas, terminal wrapping, binary sniffing, outputs.
import { describe, expect, it } from 'vitest';

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
