// The seed's Python REPL workflow over MCP, with the official SDK's client:
//   node examples/mcp-client.mjs
// It starts `native-shell-service mcp` on stdio, computes fib(10), and closes the
// connection, which kills everything the server started.
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const bin = fileURLToPath(new URL('../bin/native-shell-service.js', import.meta.url));
const client = new Client({ name: 'example', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'] }));

const text = (result) => result.content.map((c) => c.text).join('\n');
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  console.log(`▶ ${name} ${JSON.stringify(args)}\n${text(result)}\n`);
  return text(result);
};

const started = await call('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
const handle = Number(/^Handle: (\d+)$/m.exec(started)[1]);
await call('send_input', { handle, input: 'fib = lambda n: n if n <= 1 else fib(n-1) + fib(n-2)', ai_callback_pattern: '>>> ' });
await call('send_input', { handle, input: 'print(fib(10))', ai_callback_pattern: '>>> ' });
await call('jobs', {});
await client.close();
