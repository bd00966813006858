// The published MCP client that speaks the Tasks extension of 2026-07-28, as a host
// wires it: the SDK's 2.x `Client` (@modelcontextprotocol/client, which negotiates
// 2026-07-28 with `server/discover`) under the Tasks requester of
// @modelcontextprotocol/ext-tasks (`createTaskSessionFromClient`). The SDK's own codecs
// refuse a `tools/call` answered with a task (`resultType: "task"`), so ext-tasks asks
// its host for a raw request path (`rawDispatch`) and the request framing; this file is
// that host part, nothing else: a transport in front of the SDK's that sends the
// requests ext-tasks hands it and takes back their answers, and `subscriptions/listen`
// for task notifications (the SDK's `listen()` knows no `taskIds`; ext-tasks builds the
// filter, `contributeTaskFilterV2`). Used by __test__/mcp/sdk-tasks.test.ts.
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  type ApplicationElicitResult,
  type ApplicationInputHandler,
  type ApplicationInputRequest,
  createTaskSessionFromClient,
  type ResolvedInputExchangeContext,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { contributeTaskFilterV2, readAcceptedTaskIdsV2 } from '@modelcontextprotocol/ext-tasks/core/v2';

import { BIN, ensureBuilt } from './setup';

type Json = Record<string, unknown>;
type Message = Parameters<NonNullable<Transport['onmessage']>>[0];
type Reply = { kind: 'result'; result: never } | { kind: 'error'; error: { code: number; message: string; data?: never } };

export const MODERN = '2026-07-28';
const CLIENT_INFO = { name: 'nss-ext-tasks-test', version: '0.0.0' };
const SUBSCRIPTION_META = 'io.modelcontextprotocol/subscriptionId';

/** The 2026-07-28 envelope of a request sent past the SDK (what the SDK adds to its own). */
function envelope(): Json {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
}

/**
 * The SDK's transport with a side door: requests sent through `dispatch` get string ids
 * of their own (`raw-N`; the SDK's are numbers) and their answers are taken out before
 * the SDK sees them. Every message is recorded (`seen`), notifications included.
 */
class RawDoor implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly seen: Json[] = [];
  private readonly waiting = new Map<string, (m: Json) => void>();
  private next = 1;

  constructor(private readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onmessage = (message, extra) => {
      const m = message as unknown as Json;
      this.seen.push(m);
      const resolve = typeof m.id === 'string' && !('method' in m) ? this.waiting.get(m.id) : undefined;
      if (resolve) {
        this.waiting.delete(m.id as string);
        resolve(m);
        return;
      }
      this.onmessage?.(message, extra);
    };
    await this.inner.start();
  }

  send(message: Message, options?: Parameters<Transport['send']>[1]): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Sends `request` with an id of its own; resolves with its answer (a listen request: when it ends). */
  ask(request: Json): { id: string; reply: Promise<Json> } {
    const id = `raw-${this.next++}`;
    const reply = new Promise<Json>((resolve) => this.waiting.set(id, resolve));
    void this.inner.send({ jsonrpc: '2.0', id, ...request } as unknown as Message).catch((e: Error) => this.waiting.get(id)?.({ error: { code: -1, message: e.message } }));
    return { id, reply };
  }

  /** ext-tasks' `rawDispatch`: one request, its answer as ext-tasks wants it. */
  readonly dispatch = async (request: unknown): Promise<Reply> => {
    const answer = await this.ask(request as Json).reply;
    return ('error' in answer ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result }) as Reply;
  };
}

export interface TasksClient {
  client: Client;
  session: TaskEnabledSession;
  /** Every message the server sent (answers and notifications). */
  seen: Json[];
  /**
   * Asks for task notifications (`subscriptions/listen`) of `taskIds`; resolves with
   * the task ids the server acknowledged, and a `close` that cancels the listen request.
   */
  listen(taskIds: string[]): Promise<{ id: string; accepted: readonly string[]; close(): Promise<void> }>;
  /** The `notifications/tasks` the server sent for `taskId`, in order. */
  notifications(taskId: string): Json[];
  close(): Promise<void>;
}

/** What the host does with a task's question (our server asks only elicitations: a form). */
export type InputHandler = (request: ApplicationInputRequest, context: ResolvedInputExchangeContext) => Promise<ApplicationElicitResult>;

/** One client of `transport` (connected here), its Tasks session answering input with `onInput`. */
export async function connectTasksClient(transport: Transport, onInput: InputHandler, endpointId = 'native-shell-service'): Promise<TasksClient> {
  const door = new RawDoor(transport);
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(door);
  const session = createTaskSessionFromClient<void>(client, {
    endpointId,
    rawDispatch: door.dispatch,
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: {} },
    onInputRequest: onInput as ApplicationInputHandler['handle'],
  });
  return {
    client,
    session,
    seen: door.seen,
    async listen(taskIds) {
      const params = contributeTaskFilterV2({ _meta: envelope() } as Parameters<typeof contributeTaskFilterV2>[0], taskIds);
      const { id } = door.ask({ method: 'subscriptions/listen', params });
      // The acknowledgement names the listen request (its id) in `_meta`.
      for (let i = 0; ; i++) {
        const ack = door.seen.find((m) => m.method === 'notifications/subscriptions/acknowledged' && (m.params as { _meta?: Json })?._meta?.[SUBSCRIPTION_META] === id);
        const refused = door.seen.find((m) => m.id === id && 'error' in m);
        if (refused) throw new Error(`subscriptions/listen refused: ${JSON.stringify(refused.error)}`);
        if (ack) {
          return {
            id,
            accepted: readAcceptedTaskIdsV2(ack.params),
            close: () => door.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, _meta: envelope() } } as unknown as Message),
          };
        }
        if (i > 3000) throw new Error('no acknowledgement of subscriptions/listen');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    notifications: (taskId) => door.seen.filter((m) => m.method === 'notifications/tasks' && (m.params as Json).taskId === taskId),
    async close() {
      await session.close();
      await client.close();
    },
  };
}

/** `native-shell-service mcp` over stdio with `args`, started in `cwd`. */
export function stdioServer(args: string[], cwd: string): StdioClientTransport {
  ensureBuilt();
  return new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], cwd, stderr: 'pipe' });
}

/** The daemon's `/mcp` at `url`, with its token. */
export function httpServer(url: string, token: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(url.endsWith('/mcp') ? url : `${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
}
