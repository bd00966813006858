// Output as events and offsets: onOutput, readOutput, and clearEnv.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { OutputEvent } from '../index.js';
import { expectCode, type Scratch, scratch } from './helpers';

const require = createRequire(import.meta.url);
let s: Scratch;
beforeAll(() => {
  s = scratch({ maxJobs: 64 });
});
afterAll(() => s.cleanup());

/** Resolves with every event of the job once its exit event has arrived. */
function collect(handle: number, onEach?: (e: OutputEvent) => void): Promise<OutputEvent[]> {
  return new Promise((resolve) => {
    const events: OutputEvent[] = [];
    s.service.onOutput(handle, (e) => {
      events.push(e);
      onEach?.(e);
      if (e.exited) resolve(events);
    });
  });
}

/** Reads the committed text from `since` to its end as of now. */
function readAll(handle: number, since = 0, maxBytes?: number): { text: string; next: number; omitted: number } {
  let out = { text: '', next: since, omitted: 0 };
  for (;;) {
    const chunk = s.service.readOutput(handle, { since: out.next, maxBytes });
    if (chunk.next === out.next) return out;
    out = { text: out.text + chunk.text, next: chunk.next, omitted: out.omitted + chunk.omitted };
  }
}

function seq(from: number, to: number): string {
  let text = '';
  for (let i = from; i <= to; i++) text += `${i}\n`;
  return text;
}

describe('onOutput', () => {
  it('is called as output arrives and exactly once at the exit, last', async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      const { handle } = s.service.start('for i in 1 2 3; do sleep 0.2; echo line $i; done', { mode });
      const events = await collect(handle);
      expect(events.filter((e) => e.exited)).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({ exited: true, status: 'exited', exitCode: 0, handle });
      // The sleeps separate the lines: each arrives on its own, before the exit.
      expect(events.filter((e) => !e.exited).length).toBeGreaterThanOrEqual(2);
      expect(events.at(-1)!.textLength).toBe('line 1\nline 2\nline 3\n'.length);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('coalesces: output that arrives while the event loop is busy makes one call', async () => {
    // 50 lines written apart arrive as about 50 reads while this thread is blocked; at
    // most one call may be queued meanwhile, and it reports them all. Then the exit.
    const { handle } = s.service.start('for i in $(seq 1 50); do echo $i; sleep 0.01; done; sleep 1', {
      mode: 'pipes',
    });
    const lines = seq(1, 50);
    let calls = 0;
    const events = collect(handle, () => {
      calls += 1;
    });
    const deadline = Date.now() + 20_000;
    while (s.service.readOutput(handle, { since: 0 }).next < lines.length && Date.now() < deadline);
    const all = await events;
    expect(all.map((e) => [e.textLength, e.exited])).toEqual([
      [lines.length, false],
      [lines.length, true],
    ]);
    expect(calls).toBe(2);
  });

  it('keeps up with a 30 MB flood: the listener reads every byte', async () => {
    const bytes = 30 * 1024 * 1024;
    const { handle } = s.service.start(`head -c ${bytes} /dev/zero | tr '\\0' a | fold -w 1023`, { mode: 'pty' });
    let since = 0;
    let length = 0;
    const events = await collect(handle, () => {
      for (;;) {
        const chunk = s.service.readOutput(handle, { since });
        if (chunk.next === since) break;
        length += chunk.text.length;
        since = chunk.next;
      }
    });
    // fold ends every full line; the last, partial one has no newline.
    expect(length).toBe(bytes + Math.floor(bytes / 1023));
    expect(events.at(-1)!.textLength).toBe(length);
  });

  it('stops calling once unsubscribed', async () => {
    const { handle } = s.service.start('echo first; sleep 0.3; echo second; sleep 0.3');
    let calls = 0;
    let unsubscribe = () => {};
    const first = new Promise<void>((resolve) => {
      unsubscribe = s.service.onOutput(handle, () => {
        calls += 1;
        resolve();
      });
    });
    await first;
    unsubscribe();
    unsubscribe(); // idempotent
    const seen = calls;
    const all = await collect(handle);
    expect(all.at(-1)!.exited).toBe(true);
    expect(calls).toBe(seen);
  });

  it('tells a late subscriber of an exit that already happened', async () => {
    const r = await s.service.run('echo done');
    const events = await collect(r.handle);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ exited: true, status: 'exited', textLength: 5 });
  });

  it('reports the exit to a listener even when the job is removed as soon as a wait says it ended', async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      const { handle } = s.service.start('sleep 0.2; echo bye', { mode });
      const events = collect(handle);
      // The wait's answer may reach JS before the exit event: removing the job then
      // must not swallow the event the listener is owed.
      const ended = await s.service.waitFor(handle, { timeoutMs: 10_000 });
      expect(ended.status).toBe('exited');
      s.service.removeProcess(handle);
      const all = await Promise.race([events, new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
      expect(all, `${mode}: no exit event`).not.toBeNull();
      expect(all!.at(-1)).toMatchObject({ exited: true, status: 'exited', exitCode: 0, handle });
    }
  });

  it('contains a listener that throws: a warning, and the calls go on', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const { handle } = s.service.start('sleep 0.3; echo a; sleep 0.3; echo b');
      let calls = 0;
      s.service.onOutput(handle, () => {
        calls += 1;
        throw new Error('listener failure');
      });
      const events = await collect(handle);
      expect(events.at(-1)!.exited).toBe(true);
      await new Promise((r) => setTimeout(r, 50));
      expect(calls).toBeGreaterThanOrEqual(2);
      expect(warnings.some((w) => w.includes('listener failure'))).toBe(true);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('keeps Node alive until the exit call, and no longer once unsubscribed', () => {
    const script = (unsubscribe: boolean) => `
      const { ShellExecutionService } = require(${JSON.stringify(require.resolve('../index.js'))});
      const s = new ShellExecutionService({ projectRoot: ${JSON.stringify(s.root)}, persistOutput: false });
      const { handle } = s.start('sleep 0.3; echo late');
      const off = s.onOutput(handle, (e) => { if (e.exited) console.log('exit event', e.textLength); });
      ${unsubscribe ? 'off();' : ''}`;
    const run = (unsubscribe: boolean) => execFileSync(process.execPath, ['-e', script(unsubscribe)], { encoding: 'utf8' });
    expect(run(false)).toBe('exit event 5\n');
    expect(run(true)).toBe('');
  });

  it('refuses an unknown handle with PROCESS_NOT_FOUND', async () => {
    await expectCode(() => s.service.onOutput(987654, () => {}), 'PROCESS_NOT_FOUND');
    await expectCode(() => s.service.onOutput(-1, () => {}), 'INVALID_ARGUMENT');
  });
});

describe('readOutput', () => {
  it('gives a reader that keeps up every line exactly once', async () => {
    for (const mode of ['pty', 'pipes'] as const) {
      const { handle } = s.service.start('seq 1 200000', { mode });
      let text = '';
      let since = 0;
      await collect(handle, (e) => {
        // One read per event, and at the exit every read it takes: a read returns at
        // most 1 MiB, and a loaded machine may deliver few events (even the exit alone).
        for (;;) {
          const chunk = s.service.readOutput(handle, { since });
          expect(chunk.omitted).toBe(0);
          text += chunk.text;
          const moved = chunk.next !== since;
          since = chunk.next;
          if (!e.exited || !moved) break;
        }
      });
      expect(text).toBe(seq(1, 200000));
    }
  });

  it('reads back from the output file what left memory, in small steps too', async () => {
    // 1.9 MB of text: memory keeps 64 KiB of head and about 512 KiB of tail.
    const r = await s.service.run('seq 1 300000', { mode: 'pty' });
    const all = readAll(r.handle);
    expect(all.omitted).toBe(0);
    expect(all.text).toBe(seq(1, 300000));
    const stepped = readAll(r.handle, 0, 100_000);
    expect(stepped.text).toBe(all.text);
    // From an offset in the middle.
    const at = seq(1, 150000).length;
    expect(readAll(r.handle, at).text).toBe(seq(150001, 300000));
  });

  it('counts only what is in neither memory nor a file as omitted', async () => {
    const bare = scratch({ persistOutput: false });
    try {
      const r = await bare.service.run('seq 1 300000', { mode: 'pipes' });
      let out = { text: '', next: 0, omitted: 0 };
      for (;;) {
        const c = bare.service.readOutput(r.handle, { since: out.next });
        if (c.next === out.next) break;
        out = { text: out.text + c.text, next: c.next, omitted: out.omitted + c.omitted };
      }
      const whole = seq(1, 300000);
      expect(out.next).toBe(whole.length);
      expect(out.omitted).toBeGreaterThan(0);
      expect(out.text.length + out.omitted).toBe(whole.length);
      expect(whole.startsWith(out.text.slice(0, 60000))).toBe(true);
      expect(whole.endsWith(out.text.slice(-400000))).toBe(true);
    } finally {
      await bare.cleanup();
    }
  });

  it("commits a quiet PTY job's last screen lines: a server's banner does not wait for its exit", async () => {
    const { handle } = s.service.start('echo starting; echo "listening on :3000"; sleep 30');
    let text = '';
    let since = 0;
    const deadline = Date.now() + 10_000;
    while (!text.includes('listening on :3000\n') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const chunk = s.service.readOutput(handle, { since });
      text += chunk.text;
      since = chunk.next;
    }
    expect(text).toBe('starting\nlistening on :3000\n');
    // And a redraw still reads as the screen shows it while the program keeps drawing.
    const r = await s.service.run(String.raw`printf 'a1
b1
\e[2Aa2
\e[1Bdone
'`);
    expect(r.output).toBe('a2\nb1\ndone\n');
    await s.service.kill(handle);
  });

  it('works after the exit until removeProcess', async () => {
    const r = await s.service.run('echo kept');
    expect(s.service.readOutput(r.handle, { since: 0 })).toEqual({ text: 'kept\n', next: 5, omitted: 0 });
    s.service.removeProcess(r.handle);
    await expectCode(() => s.service.readOutput(r.handle, { since: 0 }), 'PROCESS_NOT_FOUND');
  });

  it('refuses bad offsets and limits with INVALID_ARGUMENT', async () => {
    const r = await s.service.run('echo abc');
    await expectCode(() => s.service.readOutput(r.handle, { since: -1 }), 'INVALID_ARGUMENT');
    await expectCode(() => s.service.readOutput(r.handle, { since: 1.5 }), 'INVALID_ARGUMENT');
    await expectCode(() => s.service.readOutput(r.handle, { since: 5 }), 'INVALID_ARGUMENT');
    await expectCode(() => s.service.readOutput(r.handle, { since: 0, maxBytes: 0 }), 'INVALID_ARGUMENT');
    expect(s.service.readOutput(r.handle, { since: 4 })).toEqual({ text: '', next: 4, omitted: 0 });
  });
});

describe('clearEnv', () => {
  it('gives the job exactly env, plus the markers the service finds its jobs by', async () => {
    const withService = scratch({ env: { FROM_SERVICE: '1' } });
    process.env.NSS_INHERITED_PROBE = 'leak';
    try {
      for (const mode of ['pty', 'pipes'] as const) {
        const r = await withService.service.run('env', {
          args: [],
          mode,
          clearEnv: true,
          env: { ONLY: 'this' },
        });
        const names = r.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => l.slice(0, l.indexOf('=')))
          .sort();
        expect(names).toEqual(['NATIVE_SHELL_JOB', 'NATIVE_SHELL_OWNER', 'ONLY']);
      }
      const inherited = await withService.service.run('echo "$NSS_INHERITED_PROBE"');
      expect(inherited.stdout.trim()).toBe('leak');
    } finally {
      delete process.env.NSS_INHERITED_PROBE;
      await withService.cleanup();
    }
  });
});
