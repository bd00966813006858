// The Tasks extension of MCP 2026-07-28 driven by the published client that speaks it:
// @modelcontextprotocol/client 2.4 (2026-07-28 by `server/discover`) under
// @modelcontextprotocol/ext-tasks 0.2's requester (sdk-tasks-client.ts), against
// `native-shell-service mcp` over stdio and the daemon's `/mcp` over HTTP: a task
// created by run_shell_command, polled by the SDK, a real python3's input() answered
// through the SDK's input handler, a task cancelled (its process gone), a task resumed by
// a new client and server with `--daemon`, a cancel that a server started later still
// reports, and task status notifications (`subscriptions/listen`).
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { SerializedTaskReference } from '@modelcontextprotocol/ext-tasks/client';
import type { TaskId } from '@modelcontextprotocol/ext-tasks/core';
import { afterAll, describe, expect, it } from 'vitest';

import { place, stopDaemons } from '../daemon/setup';
import { alive, eventually } from '../helpers';
import { listen as listenHttp, stopAll } from '../remote/listen';
import { connectTasksClient, httpServer, type InputHandler, stdioServer, type TasksClient } from './sdk-tasks-client';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function project(): { root: string; io: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-sdk-tasks-')));
  scratch.push(base);
  const root = join(base, 'project');
  mkdirSync(root);
  return { root, io: join(base, 'io') };
}

const PY = `python3 -c "n = input('name? '); print('hello', n); c = input('colour? '); print(n, 'likes', c)"`;

type CallResult = { resultType?: string; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/** Answers the program's prompts as a user would in the client's form: `answers` by the prompt shown. */
function answering(answers: Record<string, string>, asked: string[] = []): InputHandler {
  return async (request) => {
    const message = String((request.params as { message?: unknown } | undefined)?.message ?? '');
    asked.push(message);
    const prompt = Object.keys(answers).find((p) => message.includes(`at "${p}"`));
    return prompt === undefined ? { action: 'decline' } : { action: 'accept', content: { input: answers[prompt]! } };
  };
}

/** Leaves every prompt to the next client: the answer never comes, until the execution lets go of its input (handoff). */
const leaving: InputHandler = (_request, context) =>
  new Promise((_resolve, reject) => {
    if (context.signal?.aborted) reject(new Error('handed off'));
    context.signal?.addEventListener('abort', () => reject(new Error('handed off')), { once: true });
  });

/** Reads the task's state from the server (`tasks/get` through the SDK) until `done` holds; bounded generously. */
async function snapshotUntil(c: TasksClient, taskId: TaskId, done: (status: string) => boolean): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { status } = await c.session.task(taskId).snapshot();
    if (done(status) || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function childPid(root: string): Promise<number> {
  let pid = 0;
  await eventually(() => {
    try {
      pid = Number(readFileSync(join(root, 'child.pid'), 'utf8'));
    } catch {
      return false;
    }
    return pid > 0;
  });
  return pid;
}

/** A task answered through the SDK's input handler, to its end: the whole run's result; its notifications when `listen`. */
async function answeredTask(c: TasksClient, listen = false): Promise<void> {
  const execution = await c.session.callTool('run_shell_command', { command: PY });
  expect(execution.kind).toBe('task');
  const taskId = execution.handle!.taskId;
  expect(taskId).toMatch(/^shell-job-\d+$/);
  if (listen) expect((await c.listen([taskId])).accepted).toEqual([taskId]);
  const { outcome } = await execution.settle();
  if (listen) expect(await eventually(() => c.notifications(taskId).some((n) => (n.params as { status: string }).status === 'completed'))).toBe(true);
  expect(outcome.status).toBe('completed');
  const result = (outcome as { result: CallResult }).result;
  expect(result.resultType).toBe('complete');
  expect(result.content[0]?.text).toContain('Ada likes green');
  expect(result.structuredContent?.exitCode).toBe(0);
}

/** A task cancelled through the SDK: the server says cancelled and the job's child is gone. */
async function cancelledTask(c: TasksClient, root: string): Promise<void> {
  const execution = await c.session.callTool('run_shell_command', { command: 'sleep 300 & echo $! > child.pid; wait' });
  const taskId = execution.handle!.taskId;
  const pid = await childPid(root);
  expect(alive(pid)).toBe(true);
  expect(await snapshotUntil(c, taskId, () => true)).toBe('working');
  await execution.cancel();
  expect((await execution.result()).status).toBe('cancelled');
  expect(await snapshotUntil(c, taskId, (s) => s === 'cancelled')).toBe('cancelled');
  expect(await eventually(() => !alive(pid))).toBe(true);
}

describe('the SDK\'s Tasks client (ext-tasks 0.2 on @modelcontextprotocol/client 2.4) over stdio', () => {
  it('negotiates 2026-07-28 and sees the tasks extension', async () => {
    const p = project();
    const c = await connectTasksClient(stdioServer(['--project-root', p.root, '--io-dir', p.io], p.root), answering({}));
    try {
      expect(c.client.getProtocolEra()).toBe('modern');
      expect(c.client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/tasks']).toEqual({});
      // ext-tasks chose the 2026-07-28 task protocol (v2) for this server.
      expect(c.session.capabilities).toMatchObject({ execution: true, cancellation: true, inputResponses: true });
    } finally {
      await c.close();
    }
  }, 60_000);

  it('a task: polled, input() answered through the input handler, completed with the run\'s result; notifications on the way', async () => {
    const p = project();
    const asked: string[] = [];
    const c = await connectTasksClient(stdioServer(['--project-root', p.root, '--io-dir', p.io], p.root), answering({ 'name?': 'Ada', 'colour?': 'green' }, asked));
    try {
      const execution = await c.session.callTool('run_shell_command', { command: PY });
      const taskId = execution.handle!.taskId;
      const subscription = await c.listen([taskId, 'not-a-task']);
      expect(subscription.accepted).toEqual([taskId]);
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      const result = (outcome as { result: CallResult }).result;
      expect(result.content[0]?.text).toContain('Ada likes green');
      expect(result.structuredContent?.exitCode).toBe(0);
      // Each prompt asked once, with the program's screen.
      expect(asked.length).toBe(2);
      expect(asked[0]).toContain('name? ');
      expect(asked[1]).toContain('hello Ada');
      // The subscription told the task's end, with its result, as tasks/get does.
      expect(await eventually(() => c.notifications(taskId).some((n) => (n.params as { status: string }).status === 'completed'))).toBe(true);
      const notes = c.notifications(taskId).map((n) => n.params as { status: string; inputRequests?: Record<string, unknown>; result?: CallResult; _meta: Record<string, unknown> });
      expect(notes.every((n) => n._meta['io.modelcontextprotocol/subscriptionId'] === subscription.id)).toBe(true);
      expect(notes.at(-1)?.result?.content[0]?.text).toContain('Ada likes green');
      // A notification only when the status or the prompts asked change (not for each output line).
      const what = notes.map((n) => `${n.status}:${Object.keys(n.inputRequests ?? {}).join(',')}`);
      for (let i = 1; i < what.length; i++) expect(what[i]).not.toBe(what[i - 1]);
      await subscription.close();
    } finally {
      await c.close();
    }
  }, 120_000);

  it('a task cancelled through the SDK: cancelled, its process tree gone', async () => {
    const p = project();
    const c = await connectTasksClient(stdioServer(['--project-root', p.root, '--io-dir', p.io], p.root), answering({}));
    try {
      await cancelledTask(c, p.root);
    } finally {
      await c.close();
    }
  }, 60_000);

  it('subscriptions/listen for task ids without the tasks capability is refused (-32021), one for no task ids as before (-32601)', async () => {
    const p = project();
    const c = await connectTasksClient(stdioServer(['--project-root', p.root, '--io-dir', p.io], p.root), answering({}));
    try {
      const plain = c.client.getProtocolEra() === 'modern';
      expect(plain).toBe(true);
      // Sent past ext-tasks, framed without the extension.
      const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const passthrough = { '~standard': { version: 1, vendor: 'test', validate: (v: unknown) => ({ value: v }) } } as never;
      await expect(c.client.request({ method: 'subscriptions/listen', params: { notifications: { taskIds: ['shell-job-1'] }, _meta: envelope } } as never, passthrough)).rejects.toMatchObject({ code: -32021 });
      // A listen for no task (list changes only) is refused as before task notifications were served.
      await expect(c.client.request({ method: 'subscriptions/listen', params: { notifications: { resourcesListChanged: true }, _meta: envelope } } as never, passthrough)).rejects.toMatchObject({ code: -32601 });
    } finally {
      await c.close();
    }
  }, 60_000);
});

describe('with --daemon: the task outlives the client and its server', () => {
  it('a task handed off by one client is resumed by the next (resumeTask) and answered to its end', async () => {
    const d = place();
    const args = ['--project-root', d.project, '--daemon-socket', d.socket, '--daemon-idle-exit-ms', '3000'];
    let reference: SerializedTaskReference | undefined;
    const first = await connectTasksClient(stdioServer(args, d.project), leaving);
    try {
      const execution = await first.session.callTool('run_shell_command', { command: PY });
      expect(await snapshotUntil(first, execution.handle!.taskId, (s) => s === 'input_required')).toBe('input_required');
      await (execution as { handoff(persist: (r: SerializedTaskReference) => void): Promise<void> }).handoff((r) => {
        reference = r;
      });
      // ext-tasks 0.2.2: a session closed while a handed-off execution is still among its
      // live ones closes that execution, and closing one not settled sends tasks/cancel,
      // which would end the task handed off. The execution leaves the list once its driver
      // has seen the handoff (its result rejects as closed): wait for that first.
      await execution.result().catch(() => {});
    } finally {
      await first.close();
    }
    expect(reference?.generation).toBe('v2');
    const second = await connectTasksClient(stdioServer(args, d.project), answering({ 'name?': 'Grace', 'colour?': 'blue' }));
    try {
      const resumed = await second.session.resumeTask(reference!);
      const { outcome } = await resumed.settle();
      expect(outcome.status).toBe('completed');
      expect((outcome as { result: CallResult }).result.content[0]?.text).toContain('Grace likes blue');
    } finally {
      await second.close();
    }
  }, 180_000);

  it('a task cancelled under one server reads cancelled under the next: the cancel is kept with the job', async () => {
    const d = place();
    const args = ['--project-root', d.project, '--daemon-socket', d.socket, '--daemon-idle-exit-ms', '3000'];
    let taskId: TaskId | undefined;
    let pid = 0;
    const first = await connectTasksClient(stdioServer(args, d.project), answering({}));
    try {
      const execution = await first.session.callTool('run_shell_command', { command: 'sleep 300 & echo $! > child.pid; wait' });
      taskId = execution.handle!.taskId;
      pid = await childPid(d.project);
      await first.session.cancelTask(execution.handle!.taskId);
      expect(await eventually(() => !alive(pid))).toBe(true);
    } finally {
      await first.close();
    }
    const second = await connectTasksClient(stdioServer(args, d.project), answering({}));
    try {
      // A new server: nothing of the first one's memory, only the daemon's job.
      const view = await second.session.task(taskId!).snapshot();
      expect(view.status).toBe('cancelled');
    } finally {
      await second.close();
    }
  }, 180_000);
});

describe('the SDK\'s Tasks client over HTTP (the daemon\'s /mcp, stateless 2026-07-28)', () => {
  it('a task answered to its end with its notifications on a listen stream, and one cancelled', async () => {
    const d = await listenHttp();
    const c = await connectTasksClient(httpServer(d.url, d.token!), answering({ 'name?': 'Ada', 'colour?': 'green' }));
    try {
      expect(c.client.getProtocolEra()).toBe('modern');
      await answeredTask(c, true);
      await cancelledTask(c, d.place.project);
    } finally {
      await c.close();
    }
  }, 180_000);
});
