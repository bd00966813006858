// What one MCP tool result costs the model: the bytes of its text (`content`) and of
// its `structuredContent` (what Claude Code and Codex hand the model instead of the
// text), for a few typical calls. Drives the built server (dist/, `npx tsc` +
// scripts/bundle.mjs, or any vitest run of __test__/mcp) over stdio with the SDK client.
//   node bench/mcp-result-sizes.mjs
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-sizes-')));
const project = join(base, 'project');
mkdirSync(project);
const client = new Client({ name: 'sizes', version: '0.0.0' });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin', 'native-shell-service.js'), 'mcp', '--project-root', project, '--io-dir', join(base, 'io')],
    cwd: project,
    stderr: 'ignore',
  }),
);

const calls = [
  ['echo', 'run_shell_command', { command: 'echo hello' }],
  ['seq 1 100000 (truncated)', 'run_shell_command', { command: 'seq 1 100000' }],
  ['python3 -q (running)', 'run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' }],
  ['send_input print', 'send_input', { handle: 3, input: 'print(6 * 7)', ai_callback_pattern: '>>> ' }],
  ['jobs', 'jobs', {}],
  ['shell_cmd ls -la /', 'shell_cmd', { command: 'ls', parameters: ['-la', '/'] }],
  ['kill', 'kill', { handle: 3 }],
];
const rows = [];
for (const [label, name, args] of calls) {
  const r = await client.callTool({ name, arguments: args });
  const text = r.content.map((c) => c.text ?? '').join('\n');
  const structured = r.structuredContent ? JSON.stringify(r.structuredContent) : '';
  rows.push({ call: label, textBytes: Buffer.byteLength(text), structuredBytes: Buffer.byteLength(structured) });
}
await client.close();
rmSync(base, { recursive: true, force: true });
console.table(rows);
