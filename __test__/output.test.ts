// Output: the text, screen and raw views, bounds, and delivery of every byte.
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch({ maxJobs: 64 });
});
afterAll(() => s.cleanup());

describe('text view', () => {
  it('removes colours, titles and hyperlinks', async () => {
    const r = await s.service.run(
      String.raw`printf '\e[1;31mred\e[0m \e]0;title\a\e]8;;http://x\e\\link\e]8;;\e\\ \e[38;5;200mpink\e[m\n'`,
    );
    expect(r.output).toBe('red link pink\n');
    expect(s.service.getProcessOutput(r.handle, { view: 'raw' })).toContain('\x1b[1;31m');
  });

  it('collapses a carriage-return progress bar to what the line finally shows', async () => {
    const r = await s.service.run(
      String.raw`for i in 10 50 90 100; do printf '\rprogress %3d%%' $i; sleep 0.01; done; printf '\n'; printf 'a\r\e[Kb\n'`,
    );
    expect(r.output).toBe('progress 100%\nb\n');
  });

  it('keeps a UTF-8 character split across two reads intact', async () => {
    // The euro sign is three bytes; the process writes them in two writes, apart in time.
    const r = await s.service.run(String.raw`printf '\xe2\x82'; sleep 0.2; printf '\xac done\n'`);
    expect(r.output).toBe('€ done\n');
  });

  it('replaces invalid UTF-8 instead of dropping it', async () => {
    const r = await s.service.run(String.raw`printf 'a\xffb\xc3(c\n'`, { mode: 'pipes' });
    expect(r.stdout).toBe('a\uFFFDb\uFFFD(c\n');
  });

  it('bounds what run() returns, names the file, and persists every byte', async () => {
    // 5 MB of numbered lines: the result shows the head and the tail, the file has all.
    const cmd = 'python3 -c "import sys\nfor i in range(500000): sys.stdout.write(\'line %06d\\n\' % i)"';
    for (const mode of ['pty', 'pipes'] as const) {
      const r = await s.service.run(cmd, { mode, maxOutputSize: 4096 });
      expect(r.exitCode).toBe(0);
      expect(r.truncated).toBe(true);
      expect(r.output.length).toBeLessThan(4096 + 200);
      expect(r.output.startsWith('line 000000\nline 000001\n')).toBe(true);
      expect(r.output.endsWith('line 499998\nline 499999\n')).toBe(true);
      const file = join(r.outputDir!, 'stdout.txt');
      expect(r.output).toMatch(new RegExp(`\\[\\.\\.\\. \\d+ bytes omitted; the full output is in ${file}`));
      const text = readFileSync(file, 'utf8');
      expect(text.length).toBe(500000 * 12);
      const lines = text.split('\n');
      expect(lines[123456]).toBe('line 123456');
      expect(r.totalBytes).toBeGreaterThanOrEqual(500000 * 12);
      // Memory holds a bounded head + tail, not 6 MB.
      expect(s.service.getProcessOutput(r.handle).length).toBeLessThan(2 * 1024 * 1024);
    }
  });

  it('tailBytes returns the end of a view', async () => {
    const r = await s.service.run('seq 1 1000');
    expect(s.service.getProcessOutput(r.handle, { tailBytes: 9 })).toBe('999\n1000\n');
  });
});

describe('screen view', () => {
  it('shows the emulated terminal after full-screen redraws', async () => {
    const r = await s.service.run(String.raw`printf 'old text\n\e[2J\e[Htop\e[3;5Hmiddle'`, { cols: 40, rows: 5 });
    expect(s.service.getProcessOutput(r.handle, { view: 'screen' })).toBe('top\n\n    middle');
  });

  it('renders vim as a person sees it', async () => {
    const file = join(s.root, 'vim.txt');
    require('node:fs').writeFileSync(file, 'first line\nsecond line\n');
    const r = await s.service.run('vim -u NONE -N vim.txt', { callbackPattern: 'second line', timeoutMs: 20_000 });
    expect(r.status).toBe('running');
    const screen = s.service.getProcessOutput(r.handle, { view: 'screen' });
    expect(screen.split('\n')[0]).toBe('first line');
    expect(screen).toMatch(/~/);
    await s.service.sendInput(r.handle, ':q!', { appendNewline: false, keys: ['Enter'], delayMs: 100 });
    await s.service.waitFor(r.handle, { timeoutMs: 10_000 });
    expect(s.service.isPtyActive(r.handle)).toBe(false);
  });
});

describe('every byte before the exit', () => {
  // 100 000 random bytes in base64: 133 336 characters in 1 755 lines of 76.
  const expected = 133_336 + 1_755;
  for (const mode of ['pty', 'pipes'] as const) {
    it(`200 runs in ${mode} mode deliver all of it, then exit 3`, async () => {
      const runs: Promise<void>[] = [];
      let done = 0;
      const one = async () => {
        const r = await s.service.run('head -c 100000 /dev/urandom | base64; exit 3', { mode });
        expect(r.exitCode).toBe(3);
        expect(readFileSync(join(r.outputDir!, 'stdout.txt'), 'utf8').length).toBe(expected);
        const text = s.service.getProcessOutput(r.handle);
        expect(text.endsWith('\n')).toBe(true);
        s.service.removeProcess(r.handle);
        done += 1;
      };
      for (let worker = 0; worker < 4; worker += 1) {
        runs.push(
          (async () => {
            for (let i = 0; i < 50; i += 1) await one();
          })(),
        );
      }
      await Promise.all(runs);
      expect(done).toBe(200);
    });
  }
});

describe('order under a flood', () => {
  // Bursts large enough that the reader hands them to a second task, each followed by a
  // small line it may process in place: every view and the file keep the program's order.
  it('bursts and the small lines between them stay in order, and a wait sees the last line', async () => {
    const program = [
      'import sys, time',
      'for i in range(40):',
      '    sys.stdout.write("".join(f"burst {i} line {j:04d} " + "x" * 40 + "\\n" for j in range(1500)))',
      '    sys.stdout.flush()',
      '    sys.stdout.write(f"marker {i}\\n")',
      '    sys.stdout.flush()',
      '    time.sleep(0.003 if i % 2 else 0)',
      'print("all done")',
      'sys.stdout.flush()',
      'time.sleep(30)',
    ].join('\n');
    const r = await s.service.run('python3 -c "$P"', { env: { P: program }, callbackPattern: 'all done', timeoutMs: 60_000 });
    expect(r.status).toBe('running');
    expect(r.matched).toBe('all done');
    // The pattern can match before the line's end arrives (the file takes whole lines).
    const path = join(r.outputDir!, 'stdout.txt');
    expect(await eventually(() => readFileSync(path, 'utf8').endsWith('all done\n'))).toBe(true);
    const file = readFileSync(path, 'utf8');
    let expected = '';
    for (let i = 0; i < 40; i += 1) {
      for (let j = 0; j < 1500; j += 1) expected += `burst ${i} line ${String(j).padStart(4, '0')} ${'x'.repeat(40)}\n`;
      expected += `marker ${i}\n`;
    }
    expected += 'all done\n';
    expect(file.length).toBe(expected.length);
    expect(file === expected).toBe(true);
    expect(s.service.getProcessOutput(r.handle, { view: 'text', tailBytes: 200 }).endsWith('marker 39\nall done\n')).toBe(true);
    await s.service.kill(r.handle);
  });
});

describe('many floods at once', () => {
  // Floods are processed on pool threads, at most one per core over all jobs; the rest
  // are processed by their readers. So threads stay bounded however many jobs flood.
  it('processing threads do not grow one per flooding job, and every job gets all its bytes', async () => {
    const threads = () => readdirSync('/proc/self/task').length;
    const cores = availableParallelism();
    const jobs = cores * 3 + 6;
    const before = threads();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, threads());
    }, 2);
    const bytes = 6_000_000;
    const results = await Promise.all(
      Array.from({ length: jobs }, () =>
        s.service.run(`yes 'a flood of lines, each one the same as the one before it' | head -c ${bytes}`, {
          timeoutMs: 60_000,
        }),
      ),
    );
    clearInterval(sampler);
    for (const r of results) {
      expect(r.status).toBe('exited');
      // The PTY turns each \n into \r\n; the text view turns it back.
      expect(r.totalBytes).toBeGreaterThanOrEqual(bytes);
      s.service.removeProcess(r.handle);
    }
    // One pool thread per core at most, and one for tokio's own blocking work; one per
    // flooding job would be up to `jobs` more (5–7 on 2 cores, without the bound).
    expect(peak - before).toBeLessThanOrEqual(cores + 1);
  });
});
