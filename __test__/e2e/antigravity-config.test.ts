// The Antigravity CLI's `mcp_config.json` as docs/mcp.md gives it, read from the page:
// the CLI is not on the npm registry and is not run here, so each block is driven as
// written by the MCP TypeScript SDK's clients against a real server — `serverUrl` with
// the Streamable HTTP client against `daemon --listen`, `command`/`args` with the stdio
// client. That checks the server's end of each configuration, not the CLI's reading of it.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';

import { stopDaemons } from '../daemon/setup';
import { ensureBuilt } from '../mcp/setup';
import { listen, stopAll } from '../remote/listen';
import { docBlocks } from './doc-blocks';
import { installHere } from './model-clients';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

interface ServerEntry {
  serverUrl?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
}

/** The `shell` entry of each `mcp_config.json` block of the page's Antigravity section. */
function configs(): ServerEntry[] {
  return docBlocks('## Antigravity CLI', 'json').map((block) => {
    const parsed = JSON.parse(block) as { mcpServers?: Record<string, ServerEntry> };
    const entry = parsed.mcpServers?.shell;
    if (!entry) throw new Error(`an Antigravity block has no mcpServers.shell: ${block}`);
    return entry;
  });
}

/** `$NAME` in a header value, from `env` (as the CLI expands its environment's variables). */
function expand(value: string, env: Record<string, string>): string {
  return value.replace(/\$([A-Z_][A-Z0-9_]*)/g, (_, name: string) => env[name] ?? '');
}

async function echoAndRead(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['jobs', 'kill', 'run_shell_command', 'send_input', 'shell_cmd']);
  const ran = await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo antigravity-$((6*7))' } });
  const { output, files } = ran.structuredContent as { output: string; files: { stdout: string } };
  expect(output).toContain('antigravity-42');
  const read = await client.readResource({ uri: files.stdout });
  expect((read.contents[0] as { text: string }).text).toContain('antigravity-42');
}

describe("Antigravity's mcp_config.json, as docs/mcp.md writes it", () => {
  it('has a serverUrl block and a command block', () => {
    const entries = configs();
    expect(entries.some((e) => e.serverUrl)).toBe(true);
    expect(entries.some((e) => e.command)).toBe(true);
  });

  it('serverUrl with its Authorization header reaches /mcp on the daemon\'s port', async () => {
    const entry = configs().find((e) => e.serverUrl)!;
    const documented = new URL(entry.serverUrl!);
    // The page's example port: the test's daemon listens where the kernel put it.
    expect(documented.origin).toBe('http://127.0.0.1:49983');
    const d = await listen();
    const url = new URL(documented.pathname, d.url);
    const headers = Object.fromEntries(Object.entries(entry.headers ?? {}).map(([k, v]) => [k, expand(v, { SHELL_TOKEN: d.token! })]));
    expect(headers.Authorization).toBe(`Bearer ${d.token}`);
    const client = new Client({ name: 'antigravity-config', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    try {
      await echoAndRead(client);
    } finally {
      await client.close();
    }
  }, 180_000);

  it('command and args start the stdio server (npx finding the package in the project)', async () => {
    ensureBuilt();
    const entry = configs().find((e) => e.command)!;
    expect(entry.command).toBe('npx');
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-agy-')));
    const project = join(base, 'project');
    const home = join(base, 'home');
    mkdirSync(project);
    mkdirSync(home);
    installHere(project);
    const client = new Client({ name: 'antigravity-config', version: '0.0.0' });
    try {
      await client.connect(
        new StdioClientTransport({
          command: entry.command!,
          args: entry.args ?? [],
          cwd: project,
          // A scratch HOME: the server's default ioDir (~/.gemini/io) and npm's cache are the test's.
          env: { PATH: process.env.PATH ?? '', HOME: home },
          stderr: 'pipe',
        }),
      );
      await echoAndRead(client);
    } finally {
      await client.close();
      rmSync(base, { recursive: true, force: true });
    }
  }, 180_000);
});
