// Lifecycle: kill of whole trees, background processes, history, and no orphans.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, type Scratch, scratch } from './helpers';

// The escapes of the torture suite: each ends in `sleep <tag>`, found by its tag.
const { escapes, newTag, tagged } = createRequire(import.meta.url)('./stress/fixtures/escapes.cjs') as {
  escapes: Record<string, (tag: string) => string>;
  newTag: () => string;
  tagged: (tag: string) => number[];
};

let s: Scratch;
beforeAll(() => {
  s = scratch({ historyLimit: 5 });
});
afterAll(() => s.cleanup());

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The pids a test command printed as `p <pid>` lines. */
function pidsIn(output: string): number[] {
  return [...output.matchAll(/p (\d+)/g)].map((m) => Number(m[1]));
}

describe('kill', () => {
  for (const mode of ['pty', 'pipes'] as const) {
    it(`ends a tree with background and setsid children, leaving no survivor (${mode})`, async () => {
      const r = await s.service.run(
        'sleep 1000 & echo "p $!"; setsid sleep 1000 & echo "p $!"; (setsid sleep 1000 & echo "p $!"); echo ready; sleep 1000',
        { mode, callbackPattern: 'ready' },
      );
      const pids = [...pidsIn(r.output), r.pid!];
      expect(pids.length).toBe(4);
      expect(pids.every(alive)).toBe(true);
      const k = await s.service.kill(r.handle);
      expect(k.status).toBe('killed');
      expect(k.signal).toBe(15);
      expect(k.exitCode).toBeNull();
      expect(await eventually(() => pids.every((p) => !alive(p)))).toBe(true);
    });
  }

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const r = await s.service.run("trap '' TERM; echo ready; while :; do sleep 0.05; done", {
      callbackPattern: 'ready',
      mode: 'pipes',
    });
    const k = await s.service.kill(r.handle, { graceMs: 100 });
    expect(k.escalated).toBe(true);
    expect(k.signal).toBe(9);
    expect(alive(r.pid!)).toBe(false);
  });

  it('a finished job reports its final status, not an error, and stays listed', async () => {
    const r = await s.service.run('exit 5');
    const k = await s.service.kill(r.handle);
    expect(k).toMatchObject({ status: 'exited', exitCode: 5, escalated: false });
    const killedTwice = await s.service.kill(r.handle);
    expect(killedTwice.status).toBe('exited');
    expect(s.service.getActiveProcesses().some((p) => p.handle === r.handle)).toBe(true);
  });
});

describe('background processes', () => {
  for (const mode of ['pty', 'pipes'] as const) {
    it(`run returns when the shell exits, lists the background pids, and kill ends them (${mode})`, async () => {
      const r = await s.service.run('sleep 1000 & echo "p $!"; python3 -c "import time; time.sleep(1000)" & echo started', { mode });
      expect(r.status).toBe('exited');
      expect(r.exitCode).toBe(0);
      expect(r.backgroundPids.length).toBe(2);
      expect(r.backgroundPids).toContain(pidsIn(r.output)[0]);
      expect(r.backgroundPids.every(alive)).toBe(true);
      const listed = s.service.getActiveProcesses().find((p) => p.handle === r.handle);
      expect(listed?.backgroundPids).toEqual(r.backgroundPids);
      // Once the job has ended, what detached from it is what it left running.
      expect(listed?.detachedPids).toEqual(r.backgroundPids);
      const k = await s.service.kill(r.handle);
      expect(k.status).toBe('exited');
      expect(await eventually(() => r.backgroundPids.every((p) => !alive(p)))).toBe(true);
    });
  }

  it('removeProcess of a finished job still ends its background processes', async () => {
    const r = await s.service.run('sleep 1000 & echo started');
    expect(r.backgroundPids.length).toBe(1);
    s.service.removeProcess(r.handle);
    expect(await eventually(() => !alive(r.backgroundPids[0]))).toBe(true);
  });

  it('keeps collecting what a background process prints after its shell exited', async () => {
    const r = await s.service.run('(sleep 0.3; echo "late line") & echo now');
    expect(r.output).toBe('now\n');
    expect(await eventually(() => s.service.getProcessOutput(r.handle).includes('late line'))).toBe(true);
  });
});

describe('detached processes of a running job', () => {
  const sorted = (pids: number[]) => [...pids].sort((a, b) => a - b);
  const detachedOf = (handle: number) => s.service.getActiveProcesses().find((p) => p.handle === handle)?.detachedPids;

  for (const mode of ['pty', 'pipes'] as const) {
    // The double fork (setsid, no descriptors, no environment) is found by the job's
    // cgroup, or without one through the job's shell, a subreaper that adopts it.
    it(`lists setsid -f, a double fork and nohup & disown, not a foreground child, and kill ends them all (${mode})`, async () => {
      const tags = { setsid: newTag(), doubleFork: newTag(), nohup: newTag(), foreground: newTag() };
      const command = [
        `setsid -f sleep ${tags.setsid} </dev/null >/dev/null 2>&1`,
        // setsid, every descriptor closed, an empty environment (escapes.cjs)
        escapes['double fork, every fd closed'](tags.doubleFork),
        `nohup sleep ${tags.nohup} </dev/null >/dev/null 2>&1 & disown`,
        'echo ready',
        // not the last command, so that bash runs it as a child instead of exec'ing it
        `sleep ${tags.foreground}`,
        'echo done',
      ].join('; ');
      const r = await s.service.run(command, { mode, callbackPattern: 'ready' });
      expect(r.status).toBe('running');
      const one = (tag: string) => (tagged(tag).length === 1 ? tagged(tag)[0] : undefined);
      expect(await eventually(() => Object.values(tags).every((t) => one(t) !== undefined))).toBe(true);
      const [setsid, doubleFork, nohup, foreground] = Object.values(tags).map((t) => one(t)!);
      const expected = sorted([setsid, doubleFork, nohup]);
      // The double fork's middle process exits a moment after its child runs `sleep`.
      await eventually(() => JSON.stringify(detachedOf(r.handle)) === JSON.stringify(expected));
      expect(detachedOf(r.handle)).toEqual(expected);
      expect(detachedOf(r.handle)).not.toContain(foreground);
      expect(detachedOf(r.handle)).not.toContain(r.pid);

      await s.service.kill(r.handle);
      expect(await eventually(() => Object.values(tags).every((t) => tagged(t).length === 0))).toBe(true);
    });
  }

  it('a job whose children stay attached lists none', async () => {
    const tag = newTag();
    const r = await s.service.run(`sleep ${tag} & echo ready; wait`, { mode: 'pipes', callbackPattern: 'ready' });
    expect(await eventually(() => tagged(tag).length === 1)).toBe(true);
    expect(detachedOf(r.handle)).toEqual([]);
    await s.service.kill(r.handle);
    expect(await eventually(() => tagged(tag).length === 0)).toBe(true);
  });
});

describe('history', () => {
  it('records finished jobs newest first, capped at historyLimit', async () => {
    s.service.clearExecutionHistory();
    await s.service.run('echo one');
    await s.service.run('printf', { args: ['%s', 'two'], directory: '.' });
    await s.service.run('kill -9 $$');
    const h = s.service.getExecutionHistory();
    expect(h.map((e) => e.command)).toEqual(['kill -9 $$', 'printf', 'echo one']);
    expect(h[1]).toMatchObject({ args: ['%s', 'two'], output: 'two', exitCode: 0, directory: '.' });
    expect(h[0]).toMatchObject({ signal: 9, exitCode: null, status: 'exited' });
    expect(h[2].durationMs).toBeGreaterThanOrEqual(0);
    expect(h[2].startedAt).toBeGreaterThan(0);
    expect(s.service.getExecutionHistory(1).length).toBe(1);
    const failed = await s.service.run('definitely-not-here', { args: [] });
    expect(s.service.getExecutionHistory(1)[0]).toMatchObject({ status: 'failed', error: failed.error });
    for (let i = 0; i < 6; i += 1) await s.service.run(`echo ${i}`);
    expect(s.service.getExecutionHistory().length).toBe(5);
    expect(s.service.getExecutionHistory()[0].output).toBe('5\n');
    expect(s.service.clearExecutionHistory()).toBe(5);
    expect(s.service.getExecutionHistory()).toEqual([]);
  });

  it('an exit seen by a wait is already in the history', async () => {
    for (let i = 0; i < 50; i += 1) {
      const { handle } = s.service.start(`echo mark-${i}`, { mode: i % 2 ? 'pty' : 'pipes' });
      const done = await s.service.waitFor(handle, { timeoutMs: 10_000 });
      expect(done.status).toBe('exited');
      expect(s.service.getExecutionHistory(1)[0].handle).toBe(handle);
    }
  });

  it('keeps the first 1 KiB of the output', async () => {
    await s.service.run('seq 1 10000');
    expect(s.service.getExecutionHistory(1)[0].output.length).toBe(1024);
  });
});

describe('no orphans', () => {
  it('shutdown() ends what finished jobs left behind (even a daemon outside their group) and leaves the rest alone', async () => {
    const own = scratch();
    try {
      // Many finished jobs: one shared search of /proc must still find what each left.
      for (let i = 0; i < 40; i++) await own.service.run('true');
      // Output redirected and a new session: neither the job's group nor an open
      // terminal points at this daemon; only its inherited job marker does.
      const daemon = await own.service.run('setsid -f sh -c \'echo "p $$" > daemon.pid; exec sleep 1000\' >/dev/null 2>&1 </dev/null');
      expect(daemon.status).toBe('exited');
      expect(await eventually(() => readFileSafe(join(own.root, 'daemon.pid')).includes('p '))).toBe(true);
      const [daemonPid] = pidsIn(readFileSafe(join(own.root, 'daemon.pid')));
      const running = await own.service.run('sleep 1000', { callbackDelayMs: 0 });
      expect(alive(daemonPid)).toBe(true);
      await own.service.shutdown();
      expect(await eventually(() => !alive(daemonPid) && !alive(running.pid!), 3000)).toBe(true);
      // A job that had ended keeps its own status; the running one was killed.
      const listed = own.service.getActiveProcesses();
      expect(listed.find((p) => p.handle === daemon.handle)?.status).toBe('exited');
      expect(listed.find((p) => p.handle === running.handle)?.status).toBe('killed');
    } finally {
      await own.cleanup();
    }
  });

  const owner = join(__dirname, 'fixtures', 'owner.cjs');
  for (const how of ['exit', 'throw', 'SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`nothing survives when the owning Node process ends by ${how}`, async () => {
      const child = spawn(process.execPath, [owner, how === 'exit' || how === 'throw' ? how : 'wait', join(s.root, 'owner-io')], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', () => out.includes('\n') && resolve(out.split('\n')[0]));
        child.once('exit', () => (out.includes('\n') ? resolve(out.split('\n')[0]) : reject(new Error(`owner died early: ${out}`))));
      });
      const { pids } = JSON.parse(line) as { pids: number[] };
      expect(pids.length).toBeGreaterThanOrEqual(9);
      if (how !== 'exit' && how !== 'throw') child.kill(how);
      await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
      expect(await eventually(() => pids.every((p) => !alive(p)), 3000)).toBe(true);
    });
  }
});

it('info.json of a killed job says so', async () => {
  const r = await s.service.run('sleep 100', { callbackDelayMs: 0 });
  await s.service.kill(r.handle);
  expect(JSON.parse(readFileSync(join(r.outputDir!, 'info.json'), 'utf8')).status).toBe('killed');
});
