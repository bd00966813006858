// scripts/test-pod.sh's MCP client: the MCP SDK over Streamable HTTP to the pod's /mcp,
// with the token. Prints one JSON object. Usage: node drive_mcp.mjs URL TOKEN
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
  requestInit: { headers: { authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'test-pod', version: '1' });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const ran = await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo mcp-$((6*7)); id -u' } });
const text = ran.content.map((c) => c.text ?? '').join('');
await client.close();
process.stdout.write(`${JSON.stringify({ tools, text })}\n`);
