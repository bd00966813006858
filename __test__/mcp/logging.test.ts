// What the stdio server says that is not an error reaches the client as MCP logging
// (notifications/message), and stderr stays empty: clients show a server's stderr as
// errors (Claude Code logs each line as [ERROR]).
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';

import { eventually } from '../helpers';
import { BIN, ensureBuilt } from './setup';

describe('mcp logging', () => {
  it('the start-up line is a notifications/message; nothing is written to stderr', async () => {
    ensureBuilt();
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-mcp-log-')));
    const root = join(base, 'project');
    mkdirSync(root);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--project-root', root, '--io-dir', join(base, 'io')],
      cwd: root,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += d));
    const client = new Client({ name: 'nss-log-test', version: '0.0.0' });
    const messages: Array<{ level: string; logger?: string; data: unknown }> = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    try {
      await client.connect(transport);
      expect(client.getServerCapabilities()?.logging).toEqual({});
      expect(await eventually(() => messages.length > 0, 10_000)).toBe(true);
      expect(messages[0]).toMatchObject({ level: 'info', logger: 'native-shell-service' });
      expect(String(messages[0]!.data)).toMatch(/^native-shell-service mcp: serving 5 tools for /);
      // A call and the end of the session add nothing to stderr either.
      await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo quiet' } });
      await client.setLoggingLevel('error');
    } finally {
      await client.close();
      rmSync(base, { recursive: true, force: true });
    }
    expect(stderr).toBe('');
  });
});
