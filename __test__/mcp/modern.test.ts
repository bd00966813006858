// MCP 2026-07-28 beside 2025-11-25 and 2025-06-18 on the same server, and the Tasks
// extension for run_shell_command (tools/mcp/modern-wire.ts, tools/mcp/tasks/): raw
// JSON-RPC over stdio, a real python3 waiting at input(), real kills, a real daemon
// keeping a task's job while the client restarts.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { place, stopDaemons } from '../daemon/setup';
import { alive, eventually } from '../helpers';
import { MODERN, type RawClient, type RawReply, startRaw, TASKS } from './raw-stdio';

afterAll(stopDaemons, 120_000);

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function project(): { root: string; io: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-modern-')));
  scratch.push(base);
  const root = join(base, 'project');
  mkdirSync(root);
  return { root, io: join(base, 'io') };
}

function ok(reply: RawReply): Record<string, unknown> {
  expect(reply.error).toBeUndefined();
  return reply.result as Record<string, unknown>;
}

type Task = { taskId: string; status: string; statusMessage?: string; inputRequests?: Record<string, { method: string; params: { message: string } }>; result?: { content: { text: string }[]; structuredContent?: Record<string, unknown> } };

/** Polls tasks/get (as a client does) until `done` holds for the task; bounded generously. */
async function until(c: RawClient, taskId: string, done: (t: Task) => boolean): Promise<Task> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const task = ok(await c.modern('tasks/get', { taskId })) as unknown as Task;
    if (done(task) || Date.now() > deadline) return task;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const PY = `python3 -c "n = input('name? '); print('hello', n); c = input('colour? '); print(n, 'likes', c)"`;

describe('MCP 2026-07-28 beside the 2025 versions', () => {
  it('answers server/discover with the revision, its capabilities and the tasks extension', async () => {
    const p = project();
    const c = startRaw(['--project-root', p.root, '--io-dir', p.io], p.root);
    try {
      const d = ok(await c.request('server/discover'));
      expect(d.resultType).toBe('complete');
      expect(d.supportedVersions).toEqual([MODERN]);
      const caps = d.capabilities as { tools: unknown; extensions: Record<string, unknown> };
      expect(caps.tools).toEqual({});
      expect(caps.extensions[TASKS]).toEqual({});
      expect(typeof d.instructions).toBe('string');
      expect((d._meta as Record<string, { name: string }>)['io.modelcontextprotocol/serverInfo']?.name).toBe('native-shell-service');
      // Then framed requests, no initialize: results carry resultType, cache hints and the server's name.
      const list = ok(await c.modern('tools/list'));
      expect(list.resultType).toBe('complete');
      expect(list.ttlMs).toBe(0);
      expect(list.cacheScope).toBe('private');
      const tools = list.tools as { name: string; execution?: { taskSupport: string } }[];
      expect(tools.find((t) => t.name === 'run_shell_command')?.execution).toEqual({ taskSupport: 'optional' });
      expect(tools.find((t) => t.name === 'jobs')?.execution).toBeUndefined();
      // A call from a client without the tasks extension is answered at once, as before.
      const call = ok(await c.modern('tools/call', { name: 'run_shell_command', arguments: { command: 'echo framed' } }, false));
      expect(call.resultType).toBe('complete');
      expect((call.structuredContent as { output: string }).output).toContain('framed');
      // A revision not spoken here: the revision's error, naming what is.
      const bad = await c.request('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } });
      expect(bad.error?.code).toBe(-32022);
      expect((bad.error?.data as { supported: string[] }).supported).toEqual([MODERN]);
      // tasks/list and tasks/result belong to 2025-11-25's experimental tasks, not this extension.
      expect((await c.modern('tasks/list')).error?.code).toBe(-32601);
    } finally {
      await c.close();
    }
  }, 60_000);

  for (const version of ['2025-11-25', '2025-06-18']) {
    it(`still negotiates ${version} with initialize, untouched by the 2026 layer`, async () => {
      const p = project();
      const c = startRaw(['--project-root', p.root, '--io-dir', p.io], p.root);
      try {
        const init = ok(await c.request('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } }));
        expect(init.protocolVersion).toBe(version);
        expect(init.resultType).toBeUndefined();
        await c.request('ping');
        const call = ok(await c.request('tools/call', { name: 'run_shell_command', arguments: { command: 'echo legacy' } }));
        expect(call.resultType).toBeUndefined();
        expect(call.taskId).toBeUndefined();
        expect((call.content as { text: string }[])[0]?.text).toContain('Stdout: legacy');
      } finally {
        await c.close();
      }
    }, 60_000);
  }
});

describe('the Tasks extension: run_shell_command as a task', () => {
  it('working, input_required with the prompt, tasks/update types the answer, completed with the result', async () => {
    const p = project();
    const c = startRaw(['--project-root', p.root, '--io-dir', p.io], p.root);
    try {
      const created = ok(await c.modern('tools/call', { name: 'run_shell_command', arguments: { command: PY } }));
      expect(created.resultType).toBe('task');
      const taskId = created.taskId as string;
      expect(taskId).toMatch(/^shell-job-\d+$/);
      expect(['working', 'input_required']).toContain(created.status);
      expect(created.ttlMs).toBeNull();
      expect(created.pollIntervalMs).toBeGreaterThan(0);

      const first = await until(c, taskId, (t) => t.status === 'input_required');
      expect(first.status).toBe('input_required');
      const [key1, ask1] = Object.entries(first.inputRequests ?? {})[0]!;
      expect(ask1.method).toBe('elicitation/create');
      expect(ask1.params.message).toContain('name? ');
      // An answer to a key the task does not ask is refused, and nothing is typed.
      expect((await c.modern('tasks/update', { taskId, inputResponses: { 'input-0': { action: 'accept', content: { input: 'x' } } } })).error?.code).toBe(-32602);
      ok(await c.modern('tasks/update', { taskId, inputResponses: { [key1]: { action: 'accept', content: { input: 'Ada' } } } }));

      const second = await until(c, taskId, (t) => t.status === 'input_required' && !(key1 in (t.inputRequests ?? {})));
      expect(second.status).toBe('input_required');
      const [key2, ask2] = Object.entries(second.inputRequests ?? {})[0]!;
      expect(ask2.params.message).toContain('colour? ');
      expect(ask2.params.message).toContain('hello Ada');
      ok(await c.modern('tasks/update', { taskId, inputResponses: { [key2]: { action: 'accept', content: { input: 'green' } } } }));

      const done = await until(c, taskId, (t) => t.status === 'completed');
      expect(done.status).toBe('completed');
      expect(done.result?.content[0]?.text).toContain('Ada likes green');
      expect(done.result?.structuredContent?.exitCode).toBe(0);
      expect(done.result?.structuredContent?.status).toBe('exited');
      // Asked again: the same end (kept after the tools forgot the job).
      expect((await until(c, taskId, () => true)).result?.content[0]?.text).toContain('Ada likes green');
      // A task id that names no job, and one that is not a task id at all.
      expect((await c.modern('tasks/get', { taskId: 'shell-job-999999' })).error?.code).toBe(-32602);
      expect((await c.modern('tasks/get', { taskId: '../1' })).error?.code).toBe(-32602);
    } finally {
      await c.close();
    }
  }, 120_000);

  it('a command that ends at once: its task is completed with the whole result', async () => {
    const p = project();
    const c = startRaw(['--project-root', p.root, '--io-dir', p.io], p.root);
    try {
      const created = ok(await c.modern('tools/call', { name: 'run_shell_command', arguments: { command: 'echo quick-task' } }));
      expect(created.resultType).toBe('task');
      const done = await until(c, created.taskId as string, (t) => t.status === 'completed');
      expect(done.result?.content[0]?.text).toContain('Stdout: quick-task');
      expect((done.result?.structuredContent as { output: string }).output).toContain('quick-task');
    } finally {
      await c.close();
    }
  }, 60_000);

  it('a blocked command is a complete isError result, not a task', async () => {
    const p = project();
    const c = startRaw(['--project-root', p.root, '--io-dir', p.io, '--deny', 'run_shell_command(rm)'], p.root);
    try {
      const r = ok(await c.modern('tools/call', { name: 'run_shell_command', arguments: { command: 'rm -rf nothing' } }));
      expect(r.resultType).toBe('complete');
      expect(r.isError).toBe(true);
    } finally {
      await c.close();
    }
  }, 60_000);

  it('input goes through send_input\'s policy: a line refused at a shell prompt is not typed', async () => {
    const p = project();
    const c = startRaw(['--project-root', p.root, '--io-dir', p.io, '--deny', 'run_shell_command(touch)'], p.root);
    try {
      const created = ok(await c.modern('tools/call', { name: 'run_shell_command', arguments: { command: 'bash --norc -i' } }));
      const taskId = created.taskId as string;
      const asking = await until(c, taskId, (t) => t.status === 'input_required');
      expect(asking.status).toBe('input_required');
      const key = Object.keys(asking.inputRequests ?? {})[0]!;
      const refused = await c.modern('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { input: 'touch made-by-task' } } } });
      expect(refused.error?.code).toBe(-32602);
      expect(refused.error?.message).toContain('touch');
      ok(await c.modern('tasks/cancel', { taskId }));
      expect(() => readFileSync(join(p.root, 'made-by-task'))).toThrow();
    } finally {
      await c.close();
    }
  }, 60_000);

  it('tasks/cancel kills the job and what it started: the task is cancelled, the pid is gone', async () => {
    const p = project();
    const c = startRaw(['--project-root', p.root, '--io-dir', p.io], p.root);
    try {
      const created = ok(await c.modern('tools/call', { name: 'run_shell_command', arguments: { command: 'sleep 300 & echo $! > child.pid; wait' } }));
      const taskId = created.taskId as string;
      let pid = 0;
      expect(await eventually(() => {
        try {
          pid = Number(readFileSync(join(p.root, 'child.pid'), 'utf8'));
        } catch {
          return false;
        }
        return pid > 0;
      })).toBe(true);
      expect(alive(pid)).toBe(true);
      expect((await until(c, taskId, () => true)).status).toBe('working');
      ok(await c.modern('tasks/cancel', { taskId }));
      expect((await until(c, taskId, (t) => t.status === 'cancelled')).status).toBe('cancelled');
      expect(await eventually(() => !alive(pid))).toBe(true);
      // Cancelling an ended task changes nothing.
      ok(await c.modern('tasks/cancel', { taskId }));
      expect((await until(c, taskId, () => true)).status).toBe('cancelled');
    } finally {
      await c.close();
    }
  }, 60_000);

  it('with --daemon, tasks/get after the client restarts: the task is the daemon\'s job', async () => {
    const d = place();
    const args = ['--project-root', d.project, '--daemon-socket', d.socket, '--daemon-idle-exit-ms', '3000'];
    const first = startRaw(args, d.project);
    let taskId: string;
    try {
      const created = ok(await first.modern('tools/call', { name: 'run_shell_command', arguments: { command: PY } }));
      taskId = created.taskId as string;
      expect((await until(first, taskId, (t) => t.status === 'input_required')).status).toBe('input_required');
    } finally {
      await first.close();
    }
    const second = startRaw(args, d.project);
    try {
      ok(await second.request('server/discover'));
      const again = await until(second, taskId, (t) => t.status === 'input_required');
      expect(again.status).toBe('input_required');
      const [key, ask] = Object.entries(again.inputRequests ?? {})[0]!;
      expect(ask.params.message).toContain('name? ');
      ok(await second.modern('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { input: 'Grace' } } } }));
      const next = await until(second, taskId, (t) => t.status === 'input_required' && !(key in (t.inputRequests ?? {})));
      ok(await second.modern('tasks/update', { taskId, inputResponses: { [Object.keys(next.inputRequests ?? {})[0]!]: { action: 'accept', content: { input: 'blue' } } } }));
      const done = await until(second, taskId, (t) => t.status === 'completed');
      expect(done.status).toBe('completed');
      expect(done.result?.content[0]?.text).toContain('Grace likes blue');
    } finally {
      await second.close();
    }
  }, 180_000);
});
