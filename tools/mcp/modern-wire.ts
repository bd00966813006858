// MCP 2026-07-28 beside the versions the SDK negotiates (2025-11-25 down to 2024-11-05),
// on one connection or HTTP request, as a layer between the transport and the SDK's
// Server. The 2026-07-28 revision has no `initialize`: a client asks `server/discover`
// (versions, capabilities, instructions) and then frames every request itself, its
// `_meta` naming the revision (`io.modelcontextprotocol/protocolVersion`), the client
// and its capabilities; each result says what it is (`resultType`), list and read
// results say how long they may be cached (`ttlMs`, `cacheScope`), and every result
// names the server (`_meta["io.modelcontextprotocol/serverInfo"]`).
//
// Why a layer on the 1.x SDK, not the 2.x server packages (@modelcontextprotocol/server
// 2.4): the 2.x server speaks 2026-07-28 but serves no Tasks (the Tasks package,
// @modelcontextprotocol/ext-tasks 0.2, has a requester and a 2025-11-25 receiver only),
// and Tasks are what this revision is wanted for here; the tools, resources, progress
// and the HTTP sessions are written against the 1.x Server, which answers the framed
// requests unchanged (it never required `initialize` before a request). So this layer
// answers `server/discover` and the tasks methods itself, passes the rest to that Server
// and adds the revision's fields to its results. A request without the envelope is a
// 2025-era one and passes through untouched (docs/mcp.md, "Protocol versions").
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js' with { 'resolution-mode': 'import' };
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js' with { 'resolution-mode': 'import' };

import { type ShellTasks, TaskError } from './tasks/shell-tasks.js';
import { TaskSubscriptions } from './tasks/task-subscriptions.js';

export const MODERN_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const VERSION_META = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';
/** The revision's code for a request naming a revision this server does not speak. */
const UNSUPPORTED_VERSION = -32022;
/** Results the revision lets a client cache; nothing here may be (jobs change), so 0. */
const CACHEABLE = new Set(['tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list']);

/** What `server/discover` tells, besides the versions. */
export interface ModernInfo {
  serverInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
  instructions?: string;
  /** The tasks run_shell_command calls become; none: the extension is not offered. */
  tasks?: ShellTasks;
}

type Json = Record<string, unknown>;
type Id = string | number;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The answer to `server/discover`. */
export function discoverResult(info: ModernInfo): Json {
  const extensions = info.tasks ? { [TASKS_EXTENSION]: {} } : {};
  return {
    resultType: 'complete',
    supportedVersions: [MODERN_VERSION],
    capabilities: { ...info.capabilities, extensions },
    ...(info.instructions ? { instructions: info.instructions } : {}),
    ttlMs: 0,
    cacheScope: 'private',
    _meta: { [SERVER_INFO_META]: info.serverInfo },
  };
}

/** What a request is: 2025-era (pass it on), 2026-07-28, or framed for a revision not spoken here. */
export function requestEra(message: Json): 'legacy' | 'modern' | { unsupported: unknown } {
  if (message.method === 'server/discover') return 'modern';
  const meta = isObject(message.params) ? message.params._meta : undefined;
  if (!isObject(meta) || !(VERSION_META in meta)) return 'legacy';
  return meta[VERSION_META] === MODERN_VERSION ? 'modern' : { unsupported: meta[VERSION_META] };
}

export function declaresTasks(params: Json): boolean {
  const meta = params._meta;
  const caps = isObject(meta) ? meta[CAPABILITIES_META] : undefined;
  return isObject(caps) && isObject(caps.extensions) && isObject(caps.extensions[TASKS_EXTENSION]);
}

/**
 * The answer this layer gives itself to a 2026-07-28 request, or undefined when the SDK's
 * Server answers it. Errors are JSON-RPC errors with a stable code, never a throw.
 */
export async function answerModern(info: ModernInfo, message: Json): Promise<{ result: Json } | { error: Json } | undefined> {
  const method = message.method;
  const params = isObject(message.params) ? message.params : {};
  const era = requestEra(message);
  if (typeof era === 'object') {
    return {
      error: {
        code: UNSUPPORTED_VERSION,
        message: `Unsupported protocol version ${JSON.stringify(era.unsupported)}: this server speaks ${MODERN_VERSION} (framed per request) and 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 (initialize)`,
        data: { supported: [MODERN_VERSION], requested: era.unsupported },
      },
    };
  }
  const tasks = info.tasks;
  try {
    if (method === 'server/discover') return { result: discoverResult(info) };
    if (typeof method === 'string' && method.startsWith('tasks/')) {
      if (!tasks) return { error: { code: -32601, message: `Method not found: ${method} (this server offers no tasks)` } };
      switch (method) {
        case 'tasks/get':
          return { result: { ...(await tasks.get(params.taskId)), resultType: 'complete' } };
        case 'tasks/update':
          await tasks.update(params.taskId, params.inputResponses);
          return { result: { resultType: 'complete' } };
        case 'tasks/cancel':
          await tasks.cancel(params.taskId);
          return { result: { resultType: 'complete' } };
        default:
          // tasks/list and tasks/result are 2025-11-25's experimental tasks, not this extension's.
          return { error: { code: -32601, message: `Method not found: ${method} (the tasks extension of ${MODERN_VERSION} has tasks/get, tasks/update and tasks/cancel)` } };
      }
    }
    if (method === 'tools/call' && tasks && params.name === 'run_shell_command' && declaresTasks(params)) {
      const args = isObject(params.arguments) ? params.arguments : {};
      const created = await tasks.create(args, new AbortController().signal);
      return 'task' in created ? { result: { ...created.task, resultType: 'task' } } : { result: { ...created.result, resultType: 'complete' } };
    }
  } catch (e) {
    if (e instanceof TaskError) return { error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } };
    return { error: { code: -32603, message: `Internal error: ${(e as Error).message}` } };
  }
  return undefined;
}

/** A result of the SDK's Server, as the 2026-07-28 revision shapes it. */
export function shapeModernResult(info: ModernInfo, method: string, result: Json): Json {
  const meta = isObject(result._meta) ? result._meta : {};
  // A tool that may run as a task says so (the revision's `execution.taskSupport`).
  const tools =
    method === 'tools/list' && info.tasks && Array.isArray(result.tools)
      ? { tools: result.tools.map((t: Json) => (t.name === 'run_shell_command' ? { ...t, execution: { taskSupport: 'optional' } } : t)) }
      : {};
  return {
    ...result,
    ...tools,
    resultType: typeof result.resultType === 'string' ? result.resultType : 'complete',
    ...(CACHEABLE.has(method) ? { ttlMs: 0, cacheScope: 'private' } : {}),
    _meta: { ...meta, [SERVER_INFO_META]: info.serverInfo },
  };
}

/**
 * A transport that speaks 2026-07-28 beside the 2025 versions, over `inner` (stdio, or
 * a Streamable HTTP session): the SDK's Server connects to this one.
 */
export class ModernWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** The 2026-07-28 requests the Server answers, by id: their results are shaped on the way out. */
  private readonly pending = new Map<Id, string>();
  /** Task status notifications (`subscriptions/listen`), when the server offers tasks. */
  private readonly subscriptions: TaskSubscriptions | undefined;

  constructor(
    private readonly inner: Transport,
    private readonly info: ModernInfo,
  ) {
    this.subscriptions = info.tasks ? new TaskSubscriptions(info.tasks, (m, listenId) => this.inner.send(m as unknown as JSONRPCMessage, { relatedRequestId: listenId })) : undefined;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onclose = () => {
      void this.subscriptions?.closeAll(false);
      this.onclose?.();
    };
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onmessage = (message, extra) => {
      void this.receive(message as unknown as Json, extra).catch((e: Error) => this.onerror?.(e));
    };
    await this.inner.start();
  }

  async close(): Promise<void> {
    // The server chose to end: each open listen request gets its result first.
    await this.subscriptions?.closeAll(true);
    await this.inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as unknown as Json;
    const id = m.id as Id | undefined;
    if (id !== undefined && !('method' in m) && this.pending.has(id)) {
      const method = this.pending.get(id) ?? '';
      this.pending.delete(id);
      if (isObject(m.result)) return this.inner.send({ ...m, result: shapeModernResult(this.info, method, m.result) } as unknown as JSONRPCMessage, options);
    }
    return this.inner.send(message, options);
  }

  private async receive(message: Json, extra?: MessageExtraInfo): Promise<void> {
    const isRequest = typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number');
    // A client ends a subscription by cancelling its listen request.
    if (!isRequest && message.method === 'notifications/cancelled' && isObject(message.params) && this.subscriptions?.cancel(message.params.requestId)) return;
    if (!isRequest || requestEra(message) === 'legacy') {
      this.onmessage?.(message as unknown as JSONRPCMessage, extra);
      return;
    }
    const id = message.id as Id;
    if (message.method === 'subscriptions/listen' && this.subscriptions && typeof requestEra(message) === 'string') {
      const params = isObject(message.params) ? message.params : {};
      const error = await this.subscriptions.listen(id, params, declaresTasks(params));
      if (error) await this.inner.send({ jsonrpc: '2.0', id, error } as unknown as JSONRPCMessage);
      return;
    }
    const answer = await answerModern(this.info, message);
    if (answer) {
      const reply = 'result' in answer ? { jsonrpc: '2.0', id, result: answer.result } : { jsonrpc: '2.0', id, error: answer.error };
      await this.inner.send(reply as unknown as JSONRPCMessage);
      return;
    }
    this.pending.set(id, message.method as string);
    this.onmessage?.(message as unknown as JSONRPCMessage, extra);
  }
}
