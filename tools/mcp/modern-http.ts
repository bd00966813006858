// The stateless HTTP form of MCP 2026-07-28 on `/mcp`: a POST with no `Mcp-Session-Id`
// whose requests are `server/discover` or framed for 2026-07-28 (tools/mcp/modern-wire.ts)
// is answered in its own HTTP response, as JSON; there is no session to open or end.
// Those requests share one server (tools/mcp/server.ts) and so one client of the daemon,
// opened at the first such request: every request names what it needs itself, and the
// state it reaches (jobs, tasks) is the daemon's, so which server answers does not matter.
// A 2025-era client keeps its `initialize` and its session (tools/mcp/http.ts).
//
// Notifications the server sends while it answers (progress, list changes, logging) have
// no stream to go to here and are dropped. The one request answered as a stream is
// `subscriptions/listen` for task status notifications: its response is an SSE stream
// (the acknowledgement, then `notifications/tasks`) that lasts until the client closes it.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js' with { 'resolution-mode': 'import' };
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js' with { 'resolution-mode': 'import' };
import type { ServerResponse } from 'node:http';

import { answerModern, declaresTasks, requestEra, shapeModernResult } from './modern-wire.js';
import type { McpSession } from './server.js';
import { TaskSubscriptions } from './tasks/task-subscriptions.js';

type Json = Record<string, unknown>;

/** Whether a POST body (one message or a batch) is for the 2026-07-28 stateless form. */
export function isModernBody(messages: unknown[]): boolean {
  return messages.length > 0 && messages.every((m) => m !== null && typeof m === 'object' && 'method' in m && requestEra(m as Json) !== 'legacy');
}

/**
 * A transport inside this process: the SDK's Server answers through it, each answer
 * going back to the request that asked. Ids are its own (two HTTP clients may both send
 * id 1), mapped back on the way out.
 */
class InProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private next = 1;
  private readonly waiting = new Map<number, (reply: Json) => void>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    for (const resolve of this.waiting.values()) resolve({ error: { code: -32603, message: 'the server is closing' } });
    this.waiting.clear();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const m = message as unknown as Json;
    if ('method' in m || typeof m.id !== 'number') return; // a notification or a request to the client: no stream here
    const resolve = this.waiting.get(m.id);
    this.waiting.delete(m.id);
    resolve?.(m);
  }

  /** `message` to the Server; resolves with its reply (`result` or `error`). */
  ask(message: Json): Promise<Json> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.onmessage?.({ ...message, id } as unknown as JSONRPCMessage);
    });
  }
}

export interface StatelessMcp {
  /** The replies to `messages` (requests only; notifications get none). */
  answer(messages: Json[]): Promise<Json[]>;
  /**
   * Answers one `subscriptions/listen` request on `res`: an SSE stream of the
   * acknowledgement and the task notifications, open until the client closes it (or
   * a JSON error, when refused). Resolves when the stream has ended.
   */
  listen(message: Json, res: ServerResponse): Promise<void>;
  close(): Promise<void>;
}

/** Whether a POST body is one `subscriptions/listen` request (answered as a stream). */
export function isListenBody(messages: unknown[]): boolean {
  const m = messages[0] as Json | undefined;
  return messages.length === 1 && m?.method === 'subscriptions/listen' && (typeof m.id === 'string' || typeof m.id === 'number');
}

/**
 * One server for every stateless request, made by `open` when first needed and ended
 * after `idleMs` with no request (its daemon client with it), as an idle session is
 * (tools/mcp/http.ts): while it lives, the jobs it started are "another session's that is
 * still connected" to every other client of the project. The next request opens another.
 */
export function statelessMcp(open: () => Promise<McpSession>, idleMs: number, log: (line: string) => void): StatelessMcp {
  let session: Promise<{ mcp: McpSession; transport: InProcessTransport }> | null = null;
  let busy = 0;
  let lastSeen = Date.now();
  const sweep = setInterval(
    () => {
      if (session && busy === 0 && Date.now() - lastSeen > idleMs) {
        log(`native-shell-service mcp-http: the 2026-07-28 server ends (idle for ${idleMs} ms); its jobs run on in the daemon`);
        void close();
      }
    },
    Math.min(60_000, Math.max(100, Math.floor(idleMs / 4))),
  );
  sweep.unref();
  const connect = async () => {
    const mcp = await open();
    const transport = new InProcessTransport();
    await mcp.server.connect(transport);
    return { mcp, transport };
  };
  const one = async (message: Json): Promise<Json | null> => {
    const id = message.id;
    if (typeof id !== 'string' && typeof id !== 'number') return null;
    const reply = (body: Json): Json => ({ jsonrpc: '2.0', id, ...body });
    session ??= connect().catch((e: unknown) => {
      session = null; // the next request tries again (the daemon may be back)
      throw e;
    });
    const { mcp, transport } = await session;
    const own = await answerModern(mcp.modern, message);
    if (own) return reply(own);
    const answered = await transport.ask(message);
    if ('error' in answered) return reply({ error: answered.error });
    return reply({ result: shapeModernResult(mcp.modern, String(message.method), (answered.result ?? {}) as Json) });
  };
  /** The open listen streams, ended (with the listen request's result) when the server ends. */
  const streams = new Set<{ subscriptions: TaskSubscriptions; res: ServerResponse }>();
  const close = async () => {
    for (const stream of streams) {
      await stream.subscriptions.closeAll(true);
      stream.res.end();
    }
    streams.clear();
    const opened = session;
    session = null;
    if (!opened) return;
    const { mcp, transport } = await opened.catch(() => ({ mcp: null, transport: null }));
    if (!mcp || !transport) return;
    mcp.quiet();
    await mcp.service.shutdown().catch(() => {});
    await transport.close();
  };
  return {
    answer: async (messages) => {
      busy += 1;
      try {
        return (await Promise.all(messages.map(one))).filter((r): r is Json => r !== null);
      } finally {
        busy -= 1;
        lastSeen = Date.now();
      }
    },
    listen: async (message, res) => {
      busy += 1;
      try {
        const id = message.id as string | number;
        const json = (body: Json) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
        session ??= connect().catch((e: unknown) => {
          session = null;
          throw e;
        });
        const { mcp } = await session;
        const refused = requestEra(message) !== 'modern' ? await answerModern(mcp.modern, message) : undefined;
        if (refused) return json(refused);
        const tasks = mcp.modern.tasks;
        if (!tasks) return json({ error: { code: -32601, message: 'Method not found: subscriptions/listen (this server offers no tasks)' } });
        const params = message.params !== null && typeof message.params === 'object' && !Array.isArray(message.params) ? (message.params as Json) : {};
        const subscriptions = new TaskSubscriptions(tasks, async (m) => {
          if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          if (!res.writableEnded) res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
        });
        const error = await subscriptions.listen(id, params, declaresTasks(params));
        if (error) return json({ error });
        const stream = { subscriptions, res };
        streams.add(stream);
        // The client ends it by closing the stream (or cancelling the request, which closes it too).
        await new Promise<void>((resolve) => (res.closed ? resolve() : res.once('close', () => resolve())));
        streams.delete(stream);
        await subscriptions.closeAll(false);
      } finally {
        busy -= 1;
        lastSeen = Date.now();
      }
    },
    close: async () => {
      clearInterval(sweep);
      await close();
    },
  };
}
