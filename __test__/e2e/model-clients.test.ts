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

import { type ClientRun, CLAUDE, CODEX, runClaude, runCodex, unavailable } from './model-clients';
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

  it('over HTTP it leaves without DELETE; the idle session ends and its job shows as from an ended session', async (ctx) => {
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
      // Ended by the idle rule: Claude Code sent no DELETE (that would read "ends (closed)").
      expect(d.stderr()).toMatch(/session \S+ ends \(idle for 1500 ms/);
      expect(d.stderr()).not.toContain('ends (closed)');
      await client.callTool({ name: 'kill', arguments: { handle: (await job())!.handle } });
    } finally {
      await client.close();
    }
  }, 240_000);
});

describe('what the model of Codex sees', () => {
  it('the hints and the output once, from structuredContent cut to about 12 KB', async (ctx) => {
    const why = await unavailable(CODEX);
    if (why) ctx.skip(why);
    const run = await runCodex(script('read_mcp_resource'));
    checkSeen(run, 'codex');
    expect(run.results[1]!.text.length).toBeLessThan(16_000);
  }, 240_000);

  it('refuses every call under `codex exec` without default_tools_approval_mode (docs/mcp.md says to set it)', async (ctx) => {
    const why = await unavailable(CODEX);
    if (why) ctx.skip(why);
    const run = await runCodex([{ tool: 'run_shell_command', args: { command: 'echo never' } }], { approve: false });
    expect(run.results.map((r) => r.text).join('\n')).toContain('MCP tool call requires approval, but approval policy is never');
  }, 240_000);
});
