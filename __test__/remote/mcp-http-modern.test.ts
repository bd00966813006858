// MCP 2026-07-28's stateless HTTP form on the daemon's `/mcp` (tools/mcp/modern-http.ts):
// `server/discover` and framed requests with no session, answered as JSON, a task whose
// python3 waits at input() answered with tasks/update, all through the daemon's proxy
// with its token; a 2025 client beside it still opens its session with initialize.
import { request } from 'node:http';

import { afterAll, describe, expect, it } from 'vitest';

import { stopDaemons } from '../daemon/setup';
import { envelope, MODERN, TASKS } from '../mcp/raw-stdio';
import { listen, stopAll } from './listen';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; type: string; body: string; session?: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: text, session: res.headers['mcp-session-id'] as string | undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('MCP 2026-07-28 over HTTP, stateless', () => {
  it('discover, framed calls and a task answered with tasks/update, with no session', async () => {
    const d = await listen();
    const auth = { Authorization: `Bearer ${d.token}` };
    let id = 0;
    const rpc = async (method: string, params: Record<string, unknown> = {}) => {
      const r = await post(d.url, auth, { jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: envelope(true) } });
      expect(r.status).toBe(200);
      expect(r.type).toContain('application/json');
      expect(r.session).toBeUndefined();
      const reply = JSON.parse(r.body) as { id: number; result?: Record<string, unknown>; error?: { code: number } };
      expect(reply.id).toBe(id);
      return reply;
    };
    const discover = await post(d.url, auth, { jsonrpc: '2.0', id: 100, method: 'server/discover', params: {} });
    expect(discover.status).toBe(200);
    const found = JSON.parse(discover.body) as { result: { supportedVersions: string[]; capabilities: { extensions: Record<string, unknown> } } };
    expect(found.result.supportedVersions).toEqual([MODERN]);
    expect(found.result.capabilities.extensions[TASKS]).toEqual({});
    // The token is still checked first.
    expect((await post(d.url, {}, { jsonrpc: '2.0', id: 1, method: 'server/discover' })).status).toBe(401);

    const listed = await rpc('tools/list');
    expect(listed.result?.resultType).toBe('complete');
    expect((listed.result?.tools as unknown[]).length).toBe(5);
    const task = await rpc('tools/call', { name: 'run_shell_command', arguments: { command: `python3 -c "print('got', input('word? '))"` } });
    expect(task.result?.resultType).toBe('task');
    const taskId = task.result?.taskId as string;
    let state: Record<string, unknown> = {};
    for (let i = 0; i < 600 && state.status !== 'input_required'; i++) {
      state = (await rpc('tasks/get', { taskId })).result ?? {};
      if (state.status !== 'input_required') await new Promise((r) => setTimeout(r, 100));
    }
    expect(state.status).toBe('input_required');
    const key = Object.keys(state.inputRequests as Record<string, unknown>)[0]!;
    expect((await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { input: 'xyzzy' } } } })).result?.resultType).toBe('complete');
    for (let i = 0; i < 600 && state.status !== 'completed'; i++) {
      state = (await rpc('tasks/get', { taskId })).result ?? {};
      if (state.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
    }
    expect(state.status).toBe('completed');
    expect(JSON.stringify(state.result)).toContain('got xyzzy');

    // A 2025 client on the same port: initialize still opens a session.
    const init = await post(d.url, auth, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    expect(init.status).toBe(200);
    expect(init.session).toMatch(/./);
  }, 120_000);
});
