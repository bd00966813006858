// A protocol error reaches the client with one `MCP error <code>:` prefix: the server
// sends the bare message (tools/mcp-server.ts, ProtocolError), the client adds the prefix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { connect, type McpSession } from './setup';

let m: McpSession;
beforeAll(async () => {
  m = await connect();
}, 60_000);
afterAll(() => m?.cleanup());

describe('mcp protocol errors', () => {
  it('carry their code and one prefix', async () => {
    const uri = 'shell-job://x/stdout.txt';
    const error = await m.client.readResource({ uri }).then(
      () => null,
      (e: unknown) => e as { code?: number; message: string; data?: unknown },
    );
    expect(error).not.toBeNull();
    expect(error!.code).toBe(-32002);
    expect(error!.message).toMatch(/^MCP error -32002: shell-job:\/\/x\/stdout\.txt is not a job file/);
    expect(error!.message.match(/MCP error/g)).toHaveLength(1);
    expect(error!.data).toEqual({ uri });
  });
});
