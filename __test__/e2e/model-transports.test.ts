// What the MODEL of the real Claude Code and Codex sees, on every transport this server
// has: stdio with the jobs in process, stdio with `--daemon`, and Streamable HTTP on the
// daemon's port (a tap in between records what the client asked: http-tap.ts). The same
// scripted turns each time: a running REPL (its hint, its file read right after the call
// that printed its banner), a cut output (where the rest is, the output once), a kill,
// a page of a finished job's file with where to read on in its content, and the killed
// job's file after the tools forgot it. Over HTTP a job is left running and the client
// leaves: its session (or the stateless server) ends when idle, and the job then shows
// as from an ended session. Each run prints the bytes of every result as the model got
// it and the protocol version spoken (BENCHMARKS.md, "What the model sees").
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';

import { eventuallyAsync, place, stopDaemons } from '../daemon/setup';
import { listen, stopAll } from '../remote/listen';

import { docBlock } from './doc-blocks';
import type { ScriptedCall } from './fake-model';
import { httpTap } from './http-tap';
import { type ClientRun, CLAUDE, CODEX, runClaude, runClaudeInteractive, runCodex, TASK_ENDED, unavailable } from './model-clients';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

type Transport = 'stdio' | 'daemon' | 'http';
type Which = 'claude' | 'codex';

const LEFT_RUNNING = 'echo left-$((6*7)); exec sleep 120';

/** The turns; `readResource` is the client's own tool that reads an MCP resource. */
const script = (readResource: string, transport: Transport): ScriptedCall[] => [
  { tool: 'run_shell_command', args: { command: 'python3', ai_callback_pattern: '>>> ' } },
  { tool: readResource, args: { server: 'shell', uri: 'shell-job://1/stdout.txt' } },
  { tool: 'run_shell_command', args: { command: 'seq 1 100000' } },
  { tool: 'kill', args: { handle: 1 } },
  { tool: readResource, args: { server: 'shell', uri: 'shell-job://2/stdout.txt' } },
  { tool: readResource, args: { server: 'shell', uri: 'shell-job://1/stdout.txt' } },
  ...(transport === 'http' ? [{ tool: 'run_shell_command', args: { command: LEFT_RUNNING, ai_callback_pattern: 'left-42' } }] : []),
];

/** How often `needle` occurs in `text`. */
function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/**
 * The revision the client spoke: the one it asked for in `initialize` (a client that
 * asked `server/discover` first and was refused falls back to it), else the one its
 * framed requests name (2026-07-28).
 */
function protocolVersion(wire: ClientRun['wire']): string {
  const init = wire.find((m) => m.method === 'initialize');
  if (init) return String(init.params?.protocolVersion);
  for (const m of wire) {
    const framed = (m.params?._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/protocolVersion'];
    if (typeof framed === 'string') return framed;
  }
  return 'none seen';
}

function checkSeen(run: ClientRun, transport: Transport, detail: string): void {
  expect(run.results, detail).toHaveLength(transport === 'http' ? 7 : 6);
  const [repl, running, seq, kill, page, finished] = run.results.map((r) => r.text) as string[] as [string, string, string, string, string, string];
  // The running REPL: how to go on, and where its output is.
  expect(repl, detail).toContain('use send_input(handle=1, input=');
  expect(repl, detail).toContain('shell-job://1/stdout.txt');
  // Its file, read right after the call that printed the banner: the banner is there
  // (a terminal's lines reach the file only later; the read goes through the service).
  expect(running, detail).toContain('credits');
  expect(running, detail).toContain('still running');
  // The cut output: where the rest is, before the output; the output once.
  expect(seq, detail).toMatch(/Read them from shell-job:\/\/2\/stdout\.txt\?offset=\d+/);
  expect(seq.indexOf('shell-job://2/stdout.txt?offset='), detail).toBeLessThan(seq.indexOf('"output"'));
  expect(count(seq, '\\n1000\\n'), detail).toBe(1);
  expect(seq, detail).not.toContain('"stdout":"1\\n2');
  expect(kill, detail).toContain('"status":"killed"');
  // A page of the finished job's file, whole, and where to read on in its contents.
  expect(page, detail).toContain('1\\n2\\n3\\n');
  expect(page, detail).toMatch(/… continues: read shell-job:\/\/2\/stdout\.txt\?offset=\d+/);
  expect(page, detail).not.toContain('persisted-output');
  // The killed job's file, after the tools forgot the job.
  expect(finished, detail).toContain('credits');
  expect(finished, detail).not.toContain('no job 1');
}

/** One line per run: what each result cost the model, in bytes, and the revision spoken. */
function report(which: Which, transport: Transport, run: ClientRun): void {
  const bytes = run.results.map((r) => Buffer.byteLength(r.text));
  console.log(`model saw (${which}, ${transport}, MCP ${protocolVersion(run.wire)}): ${bytes.join(' ')} bytes per result`);
  // Against another build (the "before" figures), whose checks fail: how each result began.
  if (process.env.NSS_E2E_SERVER_BIN) for (const r of run.results) console.log(`  ${JSON.stringify(r.text.slice(0, 160))}`);
}

/** docs/mcp.md's Claude Code .mcp.json for the HTTP port, pointed at `url` (the token: `SHELL_TOKEN` in Claude Code's environment). */
function claudeHttpJson(url: string): unknown {
  const block = docBlock('## Claude Code', 'json', 1);
  const documented = 'http://127.0.0.1:49983/mcp';
  expect(block).toContain(documented);
  expect(block).toContain('${SHELL_TOKEN}');
  return JSON.parse(block.replace(documented, url)) as unknown;
}

/** docs/mcp.md's Codex config for the HTTP port, pointed at `url`. */
function codexHttpToml(url: string): string {
  const block = docBlock('## Codex CLI', 'toml', 1);
  const documented = 'http://127.0.0.1:49983/mcp';
  expect(block).toContain(documented);
  return block.replace(documented, url);
}

async function runOn(which: Which, transport: Transport): Promise<void> {
  const readResource = which === 'claude' ? 'ReadMcpResourceTool' : 'read_mcp_resource';
  const turns = script(readResource, transport);
  const go = (extra: { http?: { url: string; token: string }; extraArgs?: string[] }) =>
    which === 'claude'
      ? runClaude(turns, {
          // Over HTTP, the project's .mcp.json docs/mcp.md gives, as written but for the port.
          ...(extra.http ? { setup: { kind: 'project-file' as const, mcpJson: claudeHttpJson(extra.http.url) }, env: { SHELL_TOKEN: extra.http.token } } : {}),
          ...(extra.extraArgs ? { extraArgs: extra.extraArgs } : {}),
        })
      : runCodex(turns, {
          ...extra,
          // Over HTTP, the config docs/mcp.md gives, as written but for the port.
          ...(extra.http ? { serverToml: codexHttpToml(extra.http.url) } : {}),
        });
  if (transport !== 'http') {
    const p = place();
    const run = await go(transport === 'daemon' ? { extraArgs: ['--daemon-socket', p.socket, '--daemon-idle-exit-ms', '3000'] } : {});
    report(which, transport, run);
    checkSeen(run, transport, `${which} exit ${run.code}\nstderr: ${run.stderr.slice(0, 2000)}`);
    return;
  }
  const d = await listen({ args: ['--mcp-session-idle-ms', '1500'] });
  const tap = await httpTap(d.url);
  const headers = { Authorization: `Bearer ${d.token}` };
  let run: ClientRun;
  try {
    run = { ...(await go({ http: { url: `${tap.url}/mcp`, token: d.token! } })), wire: tap.wire() };
  } finally {
    await tap.close();
  }
  const methods = tap.httpMethods();
  report(which, transport, run);
  console.log(`${which} over HTTP sent: ${[...new Set(methods)].join(', ')}; DELETE ${methods.includes('DELETE') ? 'sent' : 'never sent'}`);
  const detail = `${which} exit ${run.code}\nstderr: ${run.stderr.slice(0, 2000)}\nwire: ${run.wire.map((m) => m.method).join(' ')}\ndaemon: ${d.stderr().slice(-2000)}`;
  checkSeen(run, transport, detail);
  expect(run.results[6]!.text, detail).toContain('"status":"running"');
  // The client has left (with or without DELETE): once its session, or the stateless
  // server, has been idle past --mcp-session-idle-ms, its job is from an ended session.
  const client = new Client({ name: 'nss-after-client', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { requestInit: { headers } }));
  try {
    const job = async () => {
      const r = await client.callTool({ name: 'jobs', arguments: {} });
      return (r.structuredContent as { running?: Array<{ command: string; attached: string; handle: number }> }).running?.find((j) =>
        j.command.includes('left-'),
      );
    };
    expect(await eventuallyAsync(async () => (await job())?.attached === 'none', 30_000), detail).toBe(true);
    const { content } = await client.callTool({ name: 'jobs', arguments: {} });
    expect((content as Array<{ text: string }>)[0]!.text).toContain('Started by: an earlier session');
    await client.callTool({ name: 'kill', arguments: { handle: (await job())!.handle } });
  } finally {
    await client.close();
  }
}

for (const [which, launcher] of [
  ['claude', CLAUDE],
  ['codex', CODEX],
] as const) {
  describe(`what the model of ${which === 'claude' ? 'Claude Code' : 'Codex'} sees, on each transport`, () => {
    for (const transport of ['stdio', 'daemon', 'http'] as const) {
      it(`${transport === 'daemon' ? 'stdio with --daemon' : transport === 'http' ? 'Streamable HTTP on the daemon port' : 'stdio, jobs in process'}: hints, the output once, every job's file current, paging in the content`, async (ctx) => {
        const why = await unavailable(launcher);
        if (why) ctx.skip(why);
        await runOn(which, transport);
      }, 300_000);
    }
  });
}

describe('over HTTP, from a new session of another client', () => {
  it("Claude Code's model reads the output of a job Codex ran in an earlier session, by its URI", async (ctx) => {
    const why = (await unavailable(CODEX)) ?? (await unavailable(CLAUDE));
    if (why) ctx.skip(why);
    const d = await listen();
    const first = await runCodex([{ tool: 'run_shell_command', args: { command: 'echo first-session-$((6*7))' } }], {
      http: { url: `${d.url}/mcp`, token: d.token! },
      serverToml: codexHttpToml(`${d.url}/mcp`),
    });
    expect(first.results[0]?.text, first.stderr.slice(0, 2000)).toContain('first-session-42');
    const second = await runClaude([{ tool: 'ReadMcpResourceTool', args: { server: 'shell', uri: 'shell-job://1/stdout.txt' } }], {
      server: { type: 'http', url: `${d.url}/mcp`, headers: { Authorization: `Bearer ${d.token}` } },
    });
    const detail = `claude exit ${second.code}\nstderr: ${second.stderr.slice(0, 2000)}`;
    expect(second.results, detail).toHaveLength(1);
    expect(second.results[0]!.text, detail).toContain('first-session-42');
  }, 300_000);
});

describe('Claude Code run as a person runs it, over Streamable HTTP: MCP tasks', () => {
  it('run_shell_command becomes a task with no session; its input_required is asked of the user, answered with tasks/update; the model gets the end', async (ctx) => {
    const why = await unavailable(CLAUDE);
    if (why) ctx.skip(why);
    const d = await listen();
    const tap = await httpTap(d.url);
    try {
      const server = { type: 'http', url: `${tap.url}/mcp`, headers: { Authorization: `Bearer ${d.token}` } };
      const run = await runClaudeInteractive(`python3 -c "print('you said', input('word? '))"`, 'Ada', { server, wire: () => tap.wire() });
      const methods = tap.httpMethods();
      const detail = `asked:\n${run.asked}\nscreen:\n${run.screen}\nwire: ${run.wire.map((m) => m.method).join(' ')}\nhttp: ${methods.join(' ')}`;
      console.log(`interactive Claude Code over HTTP, MCP ${protocolVersion(run.wire)}: ${run.wire.map((m) => m.method).join(' ')}`);
      // 2026-07-28 statelessly: discover first, no initialize, no session to end.
      expect(run.wire[0]?.method, detail).toBe('server/discover');
      expect(run.wire.map((m) => m.method), detail).not.toContain('initialize');
      expect(protocolVersion(run.wire), detail).toBe('2026-07-28');
      const call = run.wire.find((m) => m.method === 'tools/call');
      const caps = (call?.params?._meta as Record<string, { extensions?: Record<string, unknown> }> | undefined)?.['io.modelcontextprotocol/clientCapabilities'];
      expect(caps?.extensions?.['io.modelcontextprotocol/tasks'], detail).toEqual({});
      expect(run.results[0]?.text, detail).toMatch(/started server-side task shell-job-\d+/);
      expect(run.wire.some((m) => m.method === 'tasks/get'), detail).toBe(true);
      expect(run.asked, detail).toContain('waits for input at "word?"');
      const update = run.wire.find((m) => m.method === 'tasks/update');
      expect(Object.values((update?.params?.inputResponses ?? {}) as Record<string, unknown>), detail).toEqual([{ action: 'accept', content: { input: 'Ada' } }]);
      const told = run.modelSaw.find((b) => b.includes(TASK_ENDED)) ?? '';
      expect(told, detail).toContain('<status>completed</status>');
      expect(told, detail).toContain('you said Ada');
    } finally {
      await tap.close();
    }
  }, 400_000);
});
