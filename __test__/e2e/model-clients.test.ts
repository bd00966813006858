// What the MODEL of the real Claude Code and Codex CLIs is handed as our tool results
// (__test__/e2e/model-clients.ts runs them offline against a scripted model on
// 127.0.0.1). Both give the model `structuredContent` as JSON and drop the text, so the
// hints the text carries ("use send_input ...", where the rest of a cut output is) must
// be in it, and the output in it once. Codex also cuts a long result (about 12 KB,
// keeping its head and tail): the hints come before the output and survive the cut.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';

import { eventuallyAsync, place, stopDaemons } from '../daemon/setup';
import { listen, stopAll } from '../remote/listen';

import { type ClientRun, CLAUDE, CODEX, runClaude, runClaudeInteractive, runCodex, TASK_ENDED, unavailable } from './model-clients';
import { docBlock } from './doc-blocks';
import type { ScriptedCall } from './fake-model';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

/** `readResource`: the client's own tool that reads an MCP resource (ReadMcpResourceTool, read_mcp_resource). */
const script = (readResource: string): ScriptedCall[] => [
  { tool: 'run_shell_command', args: { command: 'python3 -q', ai_callback_pattern: '>>> ' } },
  { tool: 'run_shell_command', args: { command: 'seq 1 100000' } },
  { tool: 'kill', args: { handle: 1 } },
  { tool: readResource, args: { server: 'shell', uri: 'shell-job://2/stdout.txt' } },
];

/** How often `needle` occurs in `text`. */
function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

function checkSeen(run: ClientRun, client: string): void {
  const detail = `${client} exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  expect(run.results, detail).toHaveLength(4);
  const [repl, seq, kill, page] = run.results.map((r) => r.text) as [string, string, string, string];
  // The running REPL: the model is told how to go on (the text's hint line).
  expect(repl).toContain('use send_input(handle=1, input=');
  expect(repl).toContain('shell-job://1/stdout.txt');
  // The cut output: where the rest is, before the output; and the output once (the head's
  // line 1000 once: JSON escapes its newlines as the two characters \n).
  expect(seq).toMatch(/Read them from shell-job:\/\/2\/stdout\.txt\?offset=\d+/);
  expect(seq.indexOf('shell-job://2/stdout.txt?offset=')).toBeLessThan(seq.indexOf('"output"'));
  expect(count(seq, '\\n1000\\n')).toBe(1);
  expect(seq).not.toContain('"stdout":"1\\n2');
  expect(kill).toContain('"status":"killed"');
  // A page of the job's file, whole (not put in a file or cut by the client), and where
  // to read on said in its contents (the clients drop or hide _meta).
  expect(page).toContain('1\\n2\\n3\\n');
  expect(page).toMatch(/… continues: read shell-job:\/\/2\/stdout\.txt\?offset=\d+/);
  expect(page).not.toContain('persisted-output');
}

/** A command and a read of its output: what a set-up must carry for the model to see both. */
const echoAndRead = (readResource: string): ScriptedCall[] => [
  { tool: 'run_shell_command', args: { command: 'echo docs-config-$((6*7))' } },
  { tool: readResource, args: { server: 'shell', uri: 'shell-job://1/stdout.txt' } },
];

function checkEchoAndRead(run: ClientRun, client: string): void {
  const tools = run.requests.map((r) => JSON.stringify((r.body as { tools?: unknown[] }).tools ?? []).match(/"name":"[^"]*"/g)?.join(' '));
  const detail = `${client} exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}\ntools offered: ${tools.join('\n')}`;
  expect(run.results, detail).toHaveLength(2);
  expect(run.results[0]!.text, detail).toContain('docs-config-42');
  expect(run.results[1]!.text, detail).toContain('docs-config-42');
}

/**
 * Claude Code's debug log lines at [ERROR] about the server `shell`: it logs each line a
 * server writes to stderr so; the server says what is not an error as MCP logging.
 */
function claudeErrors(debugLog: string): string[] {
  return debugLog.split('\n').filter((l) => l.includes('[ERROR]') && l.includes('"shell"'));
}

describe('the set-ups docs/mcp.md gives, as written, with the real clients', () => {
  it("Claude Code: the project's .mcp.json", async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const mcpJson = JSON.parse(docBlock('## Claude Code', 'json')) as unknown;
    const run = await runClaude(echoAndRead('ReadMcpResourceTool'), { setup: { kind: 'project-file', mcpJson } });
    checkEchoAndRead(run, 'claude');
    expect(run.debugLog).toContain('native-shell-service');
    expect(claudeErrors(run.debugLog)).toEqual([]);
  }, 240_000);

  it('Claude Code: `claude mcp add`', async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const line = docBlock('## Claude Code', 'sh').trim();
    expect(line.startsWith('claude mcp add ')).toBe(true);
    const run = await runClaude(echoAndRead('ReadMcpResourceTool'), { setup: { kind: 'mcp-add', args: line.split(/\s+/).slice(3) } });
    checkEchoAndRead(run, 'claude');
    expect(claudeErrors(run.debugLog)).toEqual([]);
  }, 240_000);

  it('Codex: config.toml', async (ctx) => {
    const why = await unavailable(CODEX);
    if (why) ctx.skip(why);
    const run = await runCodex(echoAndRead('read_mcp_resource'), { serverToml: docBlock('## Codex CLI', 'toml') });
    checkEchoAndRead(run, 'codex');
  }, 240_000);
});

describe('what the model of Claude Code sees', () => {
  it('the hints and the output once, from structuredContent', async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const run = await runClaude(script('ReadMcpResourceTool'));
    checkSeen(run, 'claude');
    // It asks server/discover first and, answered, speaks MCP 2026-07-28: no initialize,
    // every request framed with the revision (tools/mcp/modern-wire.ts).
    const version = (m: ClientRun['wire'][number]) => (m.params?._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/protocolVersion'];
    expect(run.wire[0]?.method).toBe('server/discover');
    expect(run.wire.map((m) => m.method)).not.toContain('initialize');
    const calls = run.wire.filter((m) => m.method === 'tools/call');
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(version(call)).toBe('2026-07-28');
    // `claude -p` runs as the entrypoint sdk-cli, where Claude Code turns MCP tasks off
    // (docs/mcp.md, "Tasks in each client"): its calls do not declare the extension, so
    // they are answered at once, as above, and none becomes a task.
    for (const call of calls) {
      const caps = (call.params?._meta as Record<string, { extensions?: Record<string, unknown> }>)['io.modelcontextprotocol/clientCapabilities'];
      expect(caps?.extensions?.['io.modelcontextprotocol/tasks']).toBeUndefined();
    }
    expect(run.wire.map((m) => m.method).filter((m) => m?.startsWith('tasks/'))).toEqual([]);
    expect(claudeErrors(run.debugLog)).toEqual([]);
  }, 240_000);

  it('with --daemon: the same, and nothing from the server logged as [ERROR]', async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const p = place();
    const run = await runClaude(echoAndRead('ReadMcpResourceTool'), { extraArgs: ['--daemon-socket', p.socket, '--daemon-idle-exit-ms', '3000'] });
    checkEchoAndRead(run, 'claude');
    expect(claudeErrors(run.debugLog)).toEqual([]);
  }, 240_000);

  it('over HTTP it speaks 2026-07-28 with no session; the idle stateless server ends and its job shows as from an ended session', async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const d = await listen({ args: ['--mcp-session-idle-ms', '1500'] });
    const headers = { Authorization: `Bearer ${d.token}` };
    const run = await runClaude([{ tool: 'run_shell_command', args: { command: 'echo left-running; exec sleep 120', ai_callback_pattern: 'left-running' } }], {
      server: { type: 'http', url: `${d.url}/mcp`, headers },
    });
    expect(run.results.map((r) => r.text).join('\n'), run.stderr).toContain('"status":"running"');
    expect(claudeErrors(run.debugLog)).toEqual([]);
    const client = new Client({ name: 'nss-after-claude', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { requestInit: { headers } }));
    try {
      const job = async () => {
        const r = await client.callTool({ name: 'jobs', arguments: {} });
        return (r.structuredContent as { running: Array<{ command: string; attached: string; handle: number }> }).running.find((j) =>
          j.command.includes('left-running'),
        );
      };
      expect((await job())?.attached).toBeDefined();
      expect(await eventuallyAsync(async () => (await job())?.attached === 'none', 30_000)).toBe(true);
      // Claude Code asked server/discover, was answered, and opened no session
      // (tools/mcp/modern-http.ts); the server that answered it ended by the idle rule.
      expect(d.stderr()).toMatch(/the 2026-07-28 server ends \(idle for 1500 ms/);
      expect(d.stderr()).not.toMatch(/session \S+ ends/);
      await client.callTool({ name: 'kill', arguments: { handle: (await job())!.handle } });
    } finally {
      await client.close();
    }
  }, 240_000);
});

describe('Claude Code run as a person runs it (interactive, in a terminal): MCP tasks', () => {
  it('run_shell_command becomes a task; its input_required is asked of the user, answered with tasks/update; the model gets the end', async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const run = await runClaudeInteractive(`python3 -c "print('you said', input('word? '))"`, 'Ada');
    const detail = `asked:\n${run.asked}\nscreen:\n${run.screen}\nwire: ${run.wire.map((m) => m.method).join(' ')}\nmodel requests: ${run.modelSaw.length}`;
    // 2026-07-28, and this time its calls declare the tasks extension.
    expect(run.wire[0]?.method, detail).toBe('server/discover');
    const call = run.wire.find((m) => m.method === 'tools/call');
    const caps = (call?.params?._meta as Record<string, { extensions?: Record<string, unknown> }> | undefined)?.['io.modelcontextprotocol/clientCapabilities'];
    expect(caps?.extensions?.['io.modelcontextprotocol/tasks'], detail).toEqual({});
    // The model is told at once that the call became a background task.
    expect(run.results[0]?.text, detail).toMatch(/started server-side task shell-job-\d+/);
    // Claude Code polled the task, and showed its user what the program waits for.
    expect(run.wire.some((m) => m.method === 'tasks/get'), detail).toBe(true);
    expect(run.asked, detail).toContain('waits for input at "word?"');
    // The user's answer went back as tasks/update, and was typed into the program.
    const update = run.wire.find((m) => m.method === 'tasks/update');
    expect(Object.values((update?.params?.inputResponses ?? {}) as Record<string, unknown>), detail).toEqual([{ action: 'accept', content: { input: 'Ada' } }]);
    // The model got the task's end: the run_shell_command result, output included.
    const told = run.modelSaw.find((b) => b.includes(TASK_ENDED)) ?? '';
    expect(told, detail).toContain('<status>completed</status>');
    expect(told, detail).toContain('you said Ada');
  }, 400_000);
});

describe('what the model of Codex sees', () => {
  it('the hints and the output once, from structuredContent cut to about 12 KB', async (ctx) => {
    const why = await unavailable(CODEX);
    if (why) ctx.skip(why);
    const run = await runCodex(script('read_mcp_resource'));
    checkSeen(run, 'codex');
    // Codex 0.171 speaks 2025-06-18 (initialize, no server/discover) and asks for no tasks.
    expect(run.wire[0]?.method).toBe('initialize');
    expect(run.wire[0]?.params?.protocolVersion).toBe('2025-06-18');
    expect(run.wire.map((m) => m.method)).not.toContain('server/discover');
    expect(run.wire.filter((m) => m.method?.startsWith('tasks/') || (m.params as { task?: unknown } | undefined)?.task !== undefined)).toEqual([]);
    expect(run.results[1]!.text.length).toBeLessThan(16_000);
  }, 240_000);

  it('refuses every call under `codex exec` without default_tools_approval_mode (docs/mcp.md says to set it)', async (ctx) => {
    const why = await unavailable(CODEX);
    if (why) ctx.skip(why);
    const run = await runCodex([{ tool: 'run_shell_command', args: { command: 'echo never' } }], { approve: false });
    expect(run.results.map((r) => r.text).join('\n')).toContain('MCP tool call requires approval, but approval policy is never');
  }, 240_000);
});
