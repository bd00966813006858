// MCP over Streamable HTTP on the daemon's port (`/mcp`): the real MCP
// TypeScript SDK client against `native-shell-service daemon --listen`, the same tools,
// structured results and progress as over stdio, the token and Origin checks, the jobs
// shared with the daemon's socket clients, and the wrapper's life tied to the daemon's.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect as connectH2 } from 'node:http2';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';

import { alive } from '../helpers';
import { daemonBinary, eventuallyAsync, place, ShellExecutionService, seen, stopDaemons } from '../daemon/setup';
import { listen, stopAll } from './listen';
import { BIN } from '../mcp/setup';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

async function connect(url: string, headers: Record<string, string>) {
  const client = new Client({ name: 'nss-remote-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return Object.assign(client, { http: transport });
}

/** A raw HTTP exchange (to set Origin, which fetch may not let a caller set). */
function post(url: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      { host: u.hostname, port: u.port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The same over HTTP/2 with prior knowledge (h2c), as envd's clients speak to the port. */
function postH2(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connectH2(url);
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': '/mcp', 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers });
    let status = 0;
    let text = '';
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      session.close();
      resolve({ status, body: text });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

describe('MCP over Streamable HTTP (/mcp)', () => {
  it('lists the five tools, runs a command with a structured result and progress; the socket client sees the job', async () => {
    const d = await listen();
    const client = await connect(d.url, { Authorization: `Bearer ${d.token}` });
    // Sent on the session's GET stream (SSE through the daemon's proxy) as jobs start and end.
    let listChanged = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      listChanged += 1;
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['jobs', 'kill', 'run_shell_command', 'send_input', 'shell_cmd']);
      expect(tools.every((t) => t.outputSchema)).toBe(true);

      const ran = await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo remote-$((6*7))' } });
      expect(ran.isError).toBeFalsy();
      const result = ran.structuredContent as { status: string; exitCode: number; output: string; handle: number };
      expect(result.status).toBe('exited');
      expect(result.exitCode).toBe(0);
      expect(result.output).toContain('remote-42');

      // Progress: the first output at once, one at the end (docs/mcp.md).
      const progress: Array<{ progress: number; message?: string }> = [];
      const slow = await client.callTool(
        { name: 'run_shell_command', arguments: { command: 'echo first; sleep 1.5; echo second' } },
        undefined,
        { onprogress: (p) => progress.push(p), timeout: 120_000 },
      );
      expect((slow.structuredContent as { output: string }).output).toContain('second');
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress.at(-1)?.message).toContain('second');
      expect(await eventuallyAsync(() => listChanged > 0)).toBe(true);

      // A job started over MCP is the daemon's: a client of its unix socket (same project) sees it.
      const bg = await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo mcp-job; exec sleep 60', ai_callback_pattern: 'mcp-job' } });
      const handle = (bg.structuredContent as { handle: number }).handle;
      const local = new ShellExecutionService({ projectRoot: d.place.project, daemon: { socket: d.place.socket } });
      try {
        const jobs = await local.getActiveProcesses();
        seen(local.daemon?.pid);
        expect(jobs.find((j) => j.handle === handle)?.command).toBe('echo mcp-job; exec sleep 60');
        await local.kill(handle);
      } finally {
        await local.shutdown();
      }
      // DELETE ends the session: its id is unknown from then on (404, the spec's answer).
      const id = client.http.sessionId!;
      await client.http.terminateSession();
      const after = await post(d.url, '/mcp', { authorization: `Bearer ${d.token}`, 'mcp-session-id': id }, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }));
      expect(after.status).toBe(404);
    } finally {
      await client.close();
    }
  }, 180_000);

  it('job files as resources, and a cancelled call kills its job, over HTTP', async () => {
    const d = await listen();
    const client = await connect(d.url, { Authorization: `Bearer ${d.token}` });
    const local = new ShellExecutionService({ projectRoot: d.place.project, daemon: { socket: d.place.socket } });
    try {
      const ran = await client.callTool({
        name: 'run_shell_command',
        arguments: { command: 'echo resource-text; exec sleep 60', ai_callback_pattern: 'resource-text' },
      });
      const { handle, files } = ran.structuredContent as { handle: number; files: { stdout: string } };
      expect(files.stdout).toBe(`shell-job://${handle}/stdout.txt`);
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain(`shell-job://${handle}/stdout.txt`);
      // Current when the call returns: read through the daemon, not the file that trails.
      const read = async (uri: string) => (await client.readResource({ uri })).contents.map((c) => (c as { text: string }).text).join('\n');
      expect(await read(files.stdout)).toContain('resource-text');
      const info = await client.readResource({ uri: `shell-job://${handle}/info.json` });
      expect((info.contents[0] as { text: string }).text).toContain('echo resource-text');
      await client.callTool({ name: 'kill', arguments: { handle } });
      // Finished and forgotten by the tools (and so by the daemon): still readable, and listed.
      expect(await read(files.stdout)).toContain('resource-text');
      const done = await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo finished-text' } });
      const doneFiles = (done.structuredContent as { files: { stdout: string } }).files;
      expect(await read(doneFiles.stdout)).toContain('finished-text');
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(expect.arrayContaining([files.stdout, doneFiles.stdout]));

      // The call waits for a pattern that never comes; the client gives up (notifications/cancelled).
      const abort = new AbortController();
      const pending = client.callTool(
        { name: 'run_shell_command', arguments: { command: 'echo cancel-me; exec sleep 300', ai_callback_pattern: 'never printed' } },
        undefined,
        { signal: abort.signal, timeout: 120_000 },
      );
      const started = await eventuallyAsync(async () => (await local.getActiveProcesses()).some((j) => j.command.includes('cancel-me')));
      expect(started).toBe(true);
      abort.abort();
      await expect(pending).rejects.toThrow();
      expect(await eventuallyAsync(async () => !(await local.getActiveProcesses()).some((j) => j.command.includes('cancel-me')))).toBe(true);
    } finally {
      await local.shutdown();
      await client.close();
    }
  }, 180_000);

  it("a second session reads and lists a finished job of the first (ended) session by URI", async () => {
    const d = await listen();
    const headers = { Authorization: `Bearer ${d.token}` };
    const first = await connect(d.url, headers);
    const done = await first.callTool({ name: 'run_shell_command', arguments: { command: 'echo http-first-session' } });
    const { handle, files } = done.structuredContent as { handle: number; files: { stdout: string } };
    await first.http.terminateSession();
    await first.close();
    const second = await connect(d.url, headers);
    try {
      const read = await second.readResource({ uri: files.stdout });
      expect((read.contents[0] as { text: string }).text).toContain('http-first-session');
      expect((await second.listResources()).resources.map((r) => r.uri)).toContain(files.stdout);
      const info = await second.readResource({ uri: `shell-job://${handle}/info.json` });
      expect((info.contents[0] as { text: string }).text).toContain('echo http-first-session');
      expect((await second.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toContain('shell-job://{job}/{file}{?offset,length}');
    } finally {
      await second.close();
    }
  }, 180_000);

  it('a session left without DELETE ends when idle: its jobs then show as from an ended session, and its id is gone', async () => {
    const d = await listen({ args: ['--mcp-session-idle-ms', '1500'] });
    const headers = { Authorization: `Bearer ${d.token}` };
    const first = await connect(d.url, headers);
    const sessionId = first.http.sessionId!;
    const ran = await first.callTool({ name: 'run_shell_command', arguments: { command: 'exec sleep 120', ai_callback_delay: 0 } });
    const handle = (ran.structuredContent as { handle: number }).handle;
    // As Claude Code leaves: the connection closes, no DELETE is sent.
    await first.close();
    const second = await connect(d.url, headers);
    try {
      const attached = async () => {
        const r = await second.callTool({ name: 'jobs', arguments: {} });
        const job = ((r.structuredContent as { running: Array<{ handle: number; attached: string }> }).running ?? []).find((j) => j.handle === handle);
        return { attached: job?.attached, text: (r.content as Array<{ text: string }>)[0]!.text };
      };
      expect(await eventuallyAsync(async () => (await attached()).attached === 'none', 30_000)).toBe(true);
      expect((await attached()).text).toContain('Started by: an earlier session');
      const gone = await post(d.url, '/mcp', { ...headers, 'mcp-session-id': sessionId }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
      expect(gone.status).toBe(404);
      await second.callTool({ name: 'kill', arguments: { handle } });
    } finally {
      await second.close();
    }
  }, 180_000);

  it('--mcp-session-idle-ms takes a whole number of milliseconds, else the command stops with a usage error', () => {
    const r = spawnSync(process.execPath, [BIN, 'daemon', '--listen', '127.0.0.1:0', '--mcp-session-idle-ms', 'soon'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--mcp-session-idle-ms is a whole number of milliseconds');
  });

  it('without the token: 401 (the SDK client fails to connect); a foreign Origin: 403 with a code; the mcp options apply', async () => {
    // `--deny` is the `mcp` command's option: the wrapper gives it to the /mcp sessions' tools.
    const d = await listen({ args: ['--deny', 'run_shell_command(rm)', '--allowed-origin', 'https://ide.example'] });
    // The SDK's StreamableHTTPError carries the HTTP status as `code`.
    for (const headers of [{}, { Authorization: 'Bearer wrong' }]) {
      const refused = (await connect(d.url, headers).then(() => null, (e: unknown) => e)) as { code?: number } | null;
      expect(refused?.code).toBe(401);
    }
    const noToken = await post(d.url, '/mcp', {}, INITIALIZE);
    expect(noToken).toEqual({ status: 401, body: '' });
    const auth = { authorization: `Bearer ${d.token}` };
    const rebinding = await post(d.url, '/mcp', { ...auth, origin: 'http://evil.example:8080' }, INITIALIZE);
    expect(rebinding.status).toBe(403);
    expect(JSON.parse(rebinding.body).error.code).toBe('ORIGIN_REFUSED');
    // --allowed-origin lets that one origin in.
    expect((await post(d.url, '/mcp', { ...auth, origin: 'https://ide.example' }, INITIALIZE)).status).toBe(200);
    const loopback = await post(d.url, '/mcp', { ...auth, origin: 'http://localhost:5173' }, INITIALIZE);
    expect(loopback.status).toBe(200);
    expect(loopback.body).toContain('"protocolVersion"');
    // HTTP/2 in, HTTP/1.1 to the MCP server: the proxy carries it.
    const h2 = await postH2(d.url, auth, INITIALIZE);
    expect(h2.status).toBe(200);
    expect(h2.body).toContain('"protocolVersion"');
    expect((await postH2(d.url, {}, INITIALIZE)).status).toBe(401);

    writeFileSync(join(d.place.project, 'keep.txt'), 'x');
    const client = await connect(d.url, { Authorization: `Bearer ${d.token}` });
    try {
      const denied = await client.callTool({ name: 'run_shell_command', arguments: { command: 'rm keep.txt' } });
      expect(denied.isError).toBe(true);
      expect(existsSync(join(d.place.project, 'keep.txt'))).toBe(true);
    } finally {
      await client.close();
    }
  }, 180_000);

  it('the bare daemon (no MCP server beside it) answers /mcp with 503 and a code', async () => {
    const p = place();
    const child = spawn(daemonBinary(), ['--listen', '127.0.0.1:0', '--socket', p.socket], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (x) => (stderr += x));
    try {
      expect(await eventuallyAsync(() => /listening on http:\/\/[\d.]+:\d+/.test(stderr))).toBe(true);
      const url = `http://${/listening on http:\/\/([\d.]+:\d+)/.exec(stderr)![1]}`;
      const r = await post(url, '/mcp', {}, INITIALIZE);
      expect(r.status).toBe(503);
      expect(JSON.parse(r.body).error.code).toBe('MCP_UNAVAILABLE');
    } finally {
      child.kill('SIGTERM');
      await eventuallyAsync(() => child.exitCode !== null || child.signalCode !== null);
    }
  }, 120_000);

  it('the wrapper and the daemon end together: SIGKILL of the wrapper ends the daemon, and the daemon\'s end ends the wrapper', async () => {
    const a = await listen();
    const probe = new ShellExecutionService({ projectRoot: a.place.project, daemon: { socket: a.place.socket } });
    await probe.getActiveProcesses();
    const pid = probe.daemon!.pid;
    seen(pid);
    await probe.shutdown();
    a.wrapper.kill('SIGKILL');
    expect(await eventuallyAsync(() => !alive(pid))).toBe(true);

    const b = await listen();
    const probe2 = new ShellExecutionService({ projectRoot: b.place.project, daemon: { socket: b.place.socket } });
    await probe2.getActiveProcesses();
    const pid2 = probe2.daemon!.pid;
    seen(pid2);
    await probe2.shutdown();
    process.kill(pid2, 'SIGKILL');
    expect(await eventuallyAsync(() => b.wrapper.exitCode !== null || b.wrapper.signalCode !== null)).toBe(true);
  }, 180_000);
});
