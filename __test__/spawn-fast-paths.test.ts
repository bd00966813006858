// The spawn's fast paths give what the plain ones gave: run's result built by a JS
// literal (src/binding/js_shape.rs) is the object napi-rs builds for getResult; run's
// options read by a reader shape (src/binding/run_options.rs) convert and fail as
// napi-rs's field by field reading did; the terminal a service opens ahead
// (src/platform/unix/pty.rs, SparePty) is one at most, and goes at its shutdown; where
// a program was found in PATH is tried first for a second (src/platform/unix/
// path_memory.rs), and what is found is still what PATH says.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, ptyMasters, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

// First in this file: no service of this process has opened a terminal yet, so every
// master counted here is this test's service's, and none is still closing.
describe('the terminal opened ahead', () => {
  it('is one at most, whatever the number of PTY jobs, and is gone at shutdown', async () => {
    const own = scratch();
    try {
      const before = ptyMasters();
      await own.service.run('true', { mode: 'pipes' });
      expect(ptyMasters()).toBe(before); // pipes jobs open no terminal
      for (let i = 0; i < 5; i++) own.service.removeProcess((await own.service.run('true')).handle);
      // A finished job's terminal closes just after its result, as its reader ends.
      expect(await eventually(() => ptyMasters() === before + 1, 10_000)).toBe(true);
      const running = await own.service.run('sleep 1000', { callbackDelayMs: 0 });
      // The job's own, and the next one's.
      expect(await eventually(() => ptyMasters() === before + 2, 10_000)).toBe(true);
      await own.service.kill(running.handle, { graceMs: 0 });
      own.service.removeProcess(running.handle);
      await own.service.shutdown();
      expect(await eventually(() => ptyMasters() === before, 10_000)).toBe(true);
    } finally {
      await own.cleanup();
    }
  });
});

describe("run's result", () => {
  for (const mode of ['pty', 'pipes'] as const) {
    it(`is the object getResult makes, key for key and in order (${mode})`, async () => {
      const r = await s.service.run('echo out; echo err >&2; exit 3', { mode, description: 'shape' });
      const again = s.service.getResult(r.handle);
      expect(Object.keys(r)).toEqual(Object.keys(again));
      expect(r).toEqual(again);
      expect(r.exitCode).toBe(3);
      expect(r.status).toBe('exited');
      expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    });
  }

  it('carries a sandbox report as getResult does', async () => {
    const r = await s.service.run('true', { sandbox: true }).catch((e: { code?: string }) => e);
    if ('code' in r && r.code === 'SANDBOX_UNAVAILABLE') return; // a kernel without Landlock
    const result = r as Awaited<ReturnType<typeof s.service.run>>;
    expect(result.sandbox).not.toBeNull();
    expect(result).toEqual(s.service.getResult(result.handle));
  });

  it('of a job still running (awaiting input) is the same shape', async () => {
    const r = await s.service.run('read line; echo got $line', { callbackDelayMs: 0 });
    expect(r.status).toBe('running');
    expect(Object.keys(r)).toEqual(Object.keys(s.service.getResult(r.handle)));
    await s.service.kill(r.handle, { graceMs: 0 });
  });
});

describe("run's options", () => {
  const refusals: [Record<string, unknown>, string, RegExp][] = [
    [{ cols: 'x' }, 'NumberExpected', /on RunOptions\.cols$/],
    [{ cols: null }, 'NumberExpected', /Null .*on RunOptions\.cols$/],
    [{ directory: 5 }, 'StringExpected', /on RunOptions\.directory$/],
    [{ args: 'x' }, 'ArrayExpected', /on RunOptions\.args$/],
    [{ keep: 1 }, 'BooleanExpected', /on RunOptions\.keep$/],
    [{ sandbox: 'yes' }, 'InvalidArg', /on RunOptions\.sandbox$/],
    [{ callbackPattern: 3 }, 'StringExpected', /on RunOptions\.callbackPattern$/],
  ];
  for (const [options, code, message] of refusals) {
    it(`refuses ${JSON.stringify(options)} naming the option`, async () => {
      // A conversion error is thrown by the call itself, before any promise.
      const error = await (async () => s.service.run('true', options as never))().then(
        () => null,
        (e: { code?: string; message: string }) => e,
      );
      expect(error?.code).toBe(code);
      expect(error?.message).toMatch(message);
    });
  }

  it('reads each given option once, through getters, proxies and prototypes alike', async () => {
    let reads = 0;
    const getter = {
      get cols() {
        reads += 1;
        return 90;
      },
    };
    const r = await s.service.run('tput cols', getter);
    expect(reads).toBe(1);
    expect(r.output.trim()).toBe('90');
    const inherited = await s.service.run('tput cols', Object.create({ cols: 70 }));
    expect(inherited.output.trim()).toBe('70');
    const proxied = await s.service.run('tput lines', new Proxy({}, { get: (_t, key) => (key === 'rows' ? 33 : undefined) }));
    expect(proxied.output.trim()).toBe('33');
  });

  it('treats undefined as not given', async () => {
    const r = await s.service.run('pwd', { directory: undefined, cols: undefined, mode: undefined });
    expect(r.status).toBe('exited');
    expect(r.output.trim()).toBe(s.root);
  });
});

describe('a job in the project root', () => {
  it('runs in the directory now at the root path when the old one was moved away', async () => {
    const own = scratch();
    try {
      expect((await own.service.run('pwd')).output.trim()).toBe(own.root);
      renameSync(own.root, `${own.root}-moved`);
      mkdirSync(own.root);
      const r = await own.service.run('pwd; ls -a | wc -l');
      expect(r.output.trim().split('\n')).toEqual([own.root, '2']);
      renameSync(`${own.root}-moved`, join(own.root, 'old'));
      const inside = await own.service.run('pwd', { directory: 'old' });
      expect(inside.output.trim()).toBe(join(own.root, 'old'));
    } finally {
      await own.cleanup();
    }
  });
});

describe('a program found in PATH', () => {
  it('is the one PATH finds: a copy put earlier is taken a second later, one removed at once', async () => {
    const own = scratch();
    try {
      const [early, late] = ['early', 'late'].map((name) => join(own.root, '..', name));
      for (const dir of [early, late]) mkdirSync(dir);
      const tool = (dir: string, says: string) =>
        writeFileSync(join(dir, 'nss-found-tool'), `#!/bin/sh\necho ${says}\n`, { mode: 0o755 });
      const env = { PATH: `${early}:${late}:/usr/bin:/bin` };
      const run = async () => (await own.service.run('nss-found-tool', { args: [], env, mode: 'pipes' })).stdout.trim();
      tool(late, 'late');
      expect(await run()).toBe('late');
      expect(await run()).toBe('late'); // from where it was found
      tool(early, 'early');
      // Where it was found is tried first for a second at most, then PATH is searched again.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await run()).toBe('early');
      rmSync(join(early, 'nss-found-tool'));
      // The place remembered is gone: the search goes on in PATH's order.
      expect(await run()).toBe('late');
      rmSync(join(late, 'nss-found-tool'));
      const missing = await own.service.run('nss-found-tool', { args: [], env, mode: 'pipes' });
      expect(missing.status).toBe('failed');
      expect(missing.error).toMatch(/No such file/);
    } finally {
      await own.cleanup();
    }
  });
});
