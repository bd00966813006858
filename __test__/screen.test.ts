// getScreen: the emulated terminal as cells, with colours, the cursor, the alternate
// screen and scrollback.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { unpackScreen } from '../compat/screen';
import { eventually, expectCode, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

const text = (line: Array<{ text: string }>) => line.map((r) => r.text).join('');

describe('getScreen', () => {
  it('gives runs of equal attributes with their colours', async () => {
    const r = await s.service.run(
      String.raw`printf '\e[1;31mred\e[0m plain \e[38;5;208;4morange\e[0m \e[7minv\e[0m \e[3;44mblue-bg\e[0m\n'`,
    );
    const screen = s.service.getScreen(r.handle);
    expect(screen).toMatchObject({ cols: 80, rows: 24, alternateScreen: false });
    const [first] = screen.lines;
    expect(first!.map((run) => [run.text, run.fg, run.bg, run.bold, run.underline, run.inverse, run.italic])).toEqual([
      ['red', '#800000', '', true, false, false, false],
      [' plain ', '', '', false, false, false, false],
      ['orange', '#ff8700', '', false, true, false, false],
      [' ', '', '', false, false, false, false],
      ['inv', '', '', false, false, true, false],
      [' ', '', '', false, false, false, false],
      ['blue-bg', '', '#000080', false, false, false, true],
    ]);
    expect(screen.cursor).toEqual({ x: 0, y: 1, visible: true });
  });

  it('keeps the scrollback a job asked for, oldest first, then the screen rows', async () => {
    const r = await s.service.run('seq 1 150', { rows: 10, scrollback: 100 });
    const screen = s.service.getScreen(r.handle, { scrollback: 20 });
    expect(screen.lines).toHaveLength(30);
    expect(screen.lines.map(text)).toEqual([...Array.from({ length: 29 }, (_, i) => String(122 + i)), '']);
    // A job without scrollback has none to give.
    const bare = await s.service.run('seq 1 150', { rows: 10 });
    expect(s.service.getScreen(bare.handle, { scrollback: 20 }).lines).toHaveLength(10);
  });

  it("shows a full-screen program's alternate screen, colours included", async () => {
    const file = join(s.root, 'colours.txt');
    writeFileSync(file, '\x1b[32mgreen line\x1b[0m\nplain line\n');
    const { handle } = s.service.start('less -R colours.txt', { cols: 40, rows: 8, env: { LESS: '' } });
    const shown = await eventually(() => s.service.getScreen(handle).lines.some((l) => text(l) === 'green line'));
    expect(shown).toBe(true);
    const screen = s.service.getScreen(handle);
    expect(screen.alternateScreen).toBe(true);
    const green = screen.lines.find((l) => text(l) === 'green line')!;
    expect(green[0]!.fg).toBe('#008000');
    s.service.writeToPty(handle, 'q');
    await s.service.waitFor(handle, { timeoutMs: 10_000 });
    expect(await eventually(() => !s.service.getScreen(handle).alternateScreen)).toBe(true);
  });

  it('packs the same screen: getScreenPacked unpacked equals getScreen', async () => {
    // Colours (indexed, 256, RGB, backgrounds), every attribute, wide and combining
    // characters (UTF-16 lengths differ from UTF-8 ones), blank lines, scrollback.
    const r = await s.service.run(
      String.raw`printf '\e[1;31mred\e[0m \e[2;38;5;208mdim\e[0m \e[3mit\e[0m \e[3;4;7;48;2;1;2;3mall\e[0m\n\n` +
        '宽字符 é x\u0301 😀 end' +
        String.raw`\n\e[32mgreen\e[0m\n'; seq 1 40`,
      { rows: 10, scrollback: 100 },
    );
    for (const scrollback of [0, 5, 100]) {
      const screen = s.service.getScreen(r.handle, { scrollback });
      expect(unpackScreen(s.service.getScreenPacked(r.handle, { scrollback }))).toEqual(screen);
    }
    const all = s.service.getScreen(r.handle, { scrollback: 100 });
    expect(all.lines.map(text).slice(0, 4)).toEqual(['red dim it all', '', '宽字符 é x\u0301 😀 end', 'green']);
    await expectCode(() => s.service.getScreenPacked(424242), 'PROCESS_NOT_FOUND');
  });

  it('reads the same packed screen off the JS thread (readScreenPacked)', async () => {
    const r = await s.service.run(String.raw`printf '\e[1;35mmagenta\e[0m é
'; seq 1 30`, { rows: 8, scrollback: 50 });
    for (const scrollback of [0, 50]) {
      const read = await s.service.readScreenPacked(r.handle, { scrollback });
      expect(unpackScreen(read)).toEqual(s.service.getScreen(r.handle, { scrollback }));
    }
    await expectCode(s.service.readScreenPacked(424242), 'PROCESS_NOT_FOUND');
    const p = await s.service.run('echo x', { mode: 'pipes' });
    await expectCode(s.service.readScreenPacked(p.handle), 'INVALID_ARGUMENT');
    await expectCode(s.service.readScreenPacked(r.handle, { scrollback: -1 }), 'INVALID_ARGUMENT');
  });

  it('refuses pipes jobs, unknown handles and bad scrollback with a code', async () => {
    const p = await s.service.run('echo x', { mode: 'pipes' });
    await expectCode(() => s.service.getScreen(p.handle), 'INVALID_ARGUMENT');
    await expectCode(() => s.service.getScreen(424242), 'PROCESS_NOT_FOUND');
    const r = await s.service.run('echo x');
    await expectCode(() => s.service.getScreen(r.handle, { scrollback: -1 }), 'INVALID_ARGUMENT');
    await expectCode(s.service.run('echo x', { scrollback: 1e6 }), 'INVALID_ARGUMENT');
  });
});
