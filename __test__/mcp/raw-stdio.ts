// A bare JSON-RPC client of `native-shell-service mcp` over stdio: what a client of any
// protocol revision sends, line by line, with nothing of an SDK in between (the 1.x SDK's
// client cannot speak 2026-07-28). Used by __test__/mcp/modern.test.ts.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

import { BIN, ensureBuilt } from './setup';

export const MODERN = '2026-07-28';
export const TASKS = 'io.modelcontextprotocol/tasks';

export interface RawReply {
  id: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export interface RawClient {
  request(method: string, params?: Record<string, unknown>): Promise<RawReply>;
  /** A 2026-07-28 request: its `_meta` names the revision, the client and its capabilities. */
  modern(method: string, params?: Record<string, unknown>, tasks?: boolean): Promise<RawReply>;
  /** Every message the server sent that was not a reply (notifications). */
  notices: Record<string, unknown>[];
  stderr(): string;
  /** Closes stdin and waits for the server to exit. */
  close(): Promise<void>;
}

export function envelope(tasks = true): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'nss-raw-test', version: '0.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

export function startRaw(args: string[], cwd: string): RawClient {
  ensureBuilt();
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, 'mcp', ...args], { cwd, stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const waiting = new Map<number, (r: RawReply) => void>();
  const notices: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line) as Record<string, unknown>;
      const resolve = typeof message.id === 'number' && !('method' in message) ? waiting.get(message.id) : undefined;
      if (resolve) {
        waiting.delete(message.id as number);
        resolve(message as unknown as RawReply);
      } else notices.push(message);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let next = 1;
  const request = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<RawReply>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  return {
    request,
    modern: (method, params = {}, tasks = true) => {
      const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
      return request(method, { ...params, _meta: { ...meta, ...envelope(tasks) } });
    },
    notices,
    stderr: () => stderr,
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}
