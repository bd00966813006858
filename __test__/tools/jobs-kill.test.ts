// jobs and kill through the tool classes.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ToolErrorType } from '../../tools/index';
import { alive, eventually } from '../helpers';
import { field, handleOf, type ToolScratch, toolScratch } from './setup';

let s: ToolScratch;
beforeAll(() => {
  s = toolScratch({ onAsk: 'allow', killGraceMs: 300 });
});
afterAll(() => s.cleanup());

describe('jobs', () => {
  it('says so when nothing runs', async () => {
    const r = await s.call('jobs', {});
    expect(r.llmContent).toBe('No running background processes.');
    expect(r.returnDisplay).toBe('No jobs');
  });

  it('lists running jobs with handle, pid, command, description, duration, status, last line', async () => {
    const a = await s.call('run_shell_command', { command: 'echo alpha-ready; sleep 30', ai_callback_pattern: 'alpha-ready', description: 'the alpha job' });
    const b = await s.call('run_shell_command', { command: 'sleep 40 &' });
    const r = await s.call('jobs', {});
    expect(r.returnDisplay).toBe('2 process(es) running');
    const [head, ...entries] = r.llmContent.split('\n\n');
    expect(head).toBe('Running Processes:');
    const first = entries.find((e) => e.startsWith(`Handle: ${handleOf(a)}\n`))!;
    expect(field(first, 'PID')).toMatch(/^\d+$/);
    expect(field(first, 'Command')).toBe('echo alpha-ready; sleep 30');
    expect(field(first, 'Description')).toBe('the alpha job');
    expect(field(first, 'Directory')).toBe('(root)');
    expect(field(first, 'Duration')).toMatch(/^\d+s$/);
    expect(field(first, 'Status')).toBe('running');
    expect(field(first, 'Last output')).toBe('alpha-ready');
    // What holds the job, in the mode the service reports (docs/reliability.md).
    const mode = s.service.containment;
    expect(field(first, 'Containment')?.startsWith(`${mode === 'process-tree' ? 'process tree' : mode} (`)).toBe(true);
    const second = entries.find((e) => e.startsWith(`Handle: ${handleOf(b)}\n`))!;
    expect(field(second, 'Status')).toBe('its shell exited with code 0; background processes still running');
    expect(field(second, 'Background PIDs')).toBe(field(b.llmContent, 'Background PIDs'));
    await s.call('kill', { handle: handleOf(a) });
    await s.call('kill', { handle: handleOf(b) });
    expect((await s.call('jobs', {})).llmContent).toBe('No running background processes.');
  });

  it('shows the processes a running job started that detached from it, and only when there are some', async () => {
    const tag = `1000.${process.pid}${Date.now() % 100000}`;
    const onSleep = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
        return (argv[0] ?? '').endsWith('sleep') && argv[1] === tag && !/^\S+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));
      } catch {
        return false;
      }
    });
    const detaching = await s.call('run_shell_command', {
      command: `setsid -f sleep ${tag} </dev/null >/dev/null 2>&1; echo detach-ready; sleep 30; echo done`,
      ai_callback_pattern: 'detach-ready',
    });
    const attached = await s.call('run_shell_command', { command: 'echo plain-ready; sleep 30; echo done', ai_callback_pattern: 'plain-ready' });
    try {
      expect(await eventually(() => onSleep().length === 1)).toBe(true);
      const [daemon] = onSleep();
      const entries = (await s.call('jobs', {})).llmContent.split('\n\n');
      const withDaemon = entries.find((e) => e.startsWith(`Handle: ${handleOf(detaching)}\n`))!;
      expect(field(withDaemon, 'Status')).toBe('running');
      expect(field(withDaemon, 'Detached PIDs')).toBe(
        `${daemon} (left the job's session or shell; kill(handle=${handleOf(detaching)}) ends them too)`,
      );
      const plain = entries.find((e) => e.startsWith(`Handle: ${handleOf(attached)}\n`))!;
      expect(field(plain, 'Status')).toBe('running');
      expect(field(plain, 'Detached PIDs')).toBeUndefined();
    } finally {
      // Killed even when an expectation failed: the next test counts running jobs.
      await s.call('kill', { handle: handleOf(detaching) });
      await s.call('kill', { handle: handleOf(attached) });
    }
    expect(await eventually(() => onSleep().length === 0)).toBe(true);
  });

  it('reports once a job that finished on its own since it was started', async () => {
    const r = await s.call('run_shell_command', { command: 'sleep 0.3; exit 7', ai_callback_delay: 0 });
    const h = handleOf(r);
    await eventually(() => !s.service.isPtyActive(h));
    const first = await s.call('jobs', {});
    expect(first.llmContent).toBe(`No running background processes.\n\nFinished since last checked:\nHandle ${h}: sleep 0.3; exit 7 — exited with code 7`);
    expect((await s.call('jobs', {})).llmContent).toBe('No running background processes.');
  });
});

describe('kill', () => {
  it('terminates a running job and its process group, and it leaves jobs', async () => {
    const r = await s.call('run_shell_command', { command: 'sleep 50 & echo "child=$! ok"; wait', ai_callback_pattern: 'child=\\d+ ok' });
    const h = handleOf(r);
    const child = Number(/child=(\d+)/.exec(r.llmContent)![1]);
    const k = await s.call('kill', { handle: h });
    expect(k.error).toBeUndefined();
    expect(k.llmContent).toBe(`Process ${h} (sleep 50 & echo "child=$! ok"; wait) terminated successfully (SIGTERM).\nLast output: child=${child} ok`);
    expect(k.returnDisplay).toBe('Process terminated');
    expect(await eventually(() => !alive(child))).toBe(true);
    expect(s.service.getActiveProcesses().find((p) => p.handle === h)).toBeUndefined();
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const r = await s.call('run_shell_command', { command: "trap '' TERM; echo stubborn; while :; do sleep 1; done", ai_callback_pattern: 'stubborn' });
    const h = handleOf(r);
    const pid = (r.data as { pid: number }).pid;
    const k = await s.call('kill', { handle: h });
    expect(k.llmContent).toMatch(new RegExp(`^Process ${h} \\(.*\\) did not stop on SIGTERM and was killed with SIGKILL\\.`));
    expect(await eventually(() => !alive(pid))).toBe(true);
  });

  it('kills the background processes of a finished `cmd &` job', async () => {
    const r = await s.call('run_shell_command', { command: 'sleep 60 &' });
    const pid = Number(field(r.llmContent, 'Background PIDs'));
    const k = await s.call('kill', { handle: handleOf(r) });
    expect(k.llmContent).toContain(`had already exited (exit code 0).\nIts background processes were terminated: PIDs ${pid}.`);
    expect(await eventually(() => !alive(pid))).toBe(true);
  });

  it('a job that already ended is a status, not an error; an unknown handle is PROCESS_NOT_FOUND', async () => {
    const r = await s.call('run_shell_command', { command: 'echo done' });
    const k = await s.call('kill', { handle: handleOf(r) });
    expect(k.error).toBeUndefined();
    expect(k.llmContent).toBe(`Process ${handleOf(r)} (echo done) is not running (already terminated: it exited with code 0); nothing to kill.`);
    const unknown = await s.call('kill', { handle: 4242 });
    expect(unknown.error?.type).toBe(ToolErrorType.PROCESS_NOT_FOUND);
    const bad = await s.call('kill', { handle: 'one' });
    expect(bad.error?.type).toBe(ToolErrorType.INVALID_PARAMS);
  });

  it("fails naming the survivors the service reports (the job's own process aside)", async () => {
    const { createShellTools } = await import('../../tools/index');
    // A service whose kill reports a process that outlived it, as src/job/kill.rs does for
    // one that SIGKILL did not end (which a test cannot make).
    const reporting = new Proxy(s.service, {
      get(target, key) {
        if (key === 'kill') {
          return async (handle: number, options?: { graceMs?: number }) => {
            const result = await target.kill(handle, options);
            const pid = target.getActiveProcesses().find((p) => p.handle === handle)!.pid;
            return { ...result, survivors: [pid, 4194301] };
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const tools = createShellTools(reporting, { onAsk: 'allow', projectRoot: s.root });
    const r = await tools.run_shell_command.buildAndExecute({ command: 'echo up; sleep 30', ai_callback_pattern: 'up' });
    const k = await tools.kill.buildAndExecute({ handle: handleOf(r) });
    expect(k.error?.type).toBe(ToolErrorType.KILL_FAILED);
    expect(k.error?.message).toBe(`Failed to terminate process ${handleOf(r)}: background PIDs 4194301 are still alive.`);
  });

  it('a job removed between build and execute is PROCESS_NOT_FOUND, not a crash', async () => {
    const r = await s.call('run_shell_command', { command: 'sleep 30', ai_callback_delay: 0 });
    const h = handleOf(r);
    const invocation = s.tools.kill.build({ handle: h });
    await s.service.kill(h);
    s.service.removeProcess(h);
    const k = await invocation.execute(new AbortController().signal);
    expect(k.error?.type).toBe(ToolErrorType.PROCESS_NOT_FOUND);
  });
});
