// MCP over Streamable HTTP (the spec's stateful mode): one `Mcp-Session-Id` per client,
// each session a server of its own (tools/mcp/server.ts) whose jobs run in the daemon,
// as a client of its unix socket, so MCP, envd and the daemon's own clients see the
// same jobs. It listens on a unix socket in a private directory; the daemon's HTTP port
// forwards `/mcp` here (src/daemon/http/mcp_proxy.rs), after the token and Origin
// checks. Nothing here faces the network. Only the daemon's process may connect
// (`onlyPeer`, asked of the kernel: `unixPeerPid`): the directory keeps other users
// out, but not the daemon's own jobs, which run as this user; a sandboxed job that
// reached this socket would have its commands run by the daemon outside its sandbox.
import { randomUUID } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js' with { 'resolution-mode': 'import' };

import { isListenBody, isModernBody, statelessMcp } from './modern-http.js';
import { createMcpServer, type McpSession, type McpToolOptions, openMcpService } from './server.js';

/** The largest POST body read here (the transport's own default bound). */
const MAX_BODY = 4 << 20;
/**
 * A session with no request or stream open for this long is ended, DELETE or not: some
 * clients (Claude Code) never send DELETE, and while a session lives its daemon client
 * does, so the next session would be told its jobs belong to "another session that is
 * still connected". A client that is there keeps a request or its GET stream open, or
 * comes back sooner; one that comes back later gets 404 and starts a new session (the
 * spec's rule), whose `jobs` lists the old session's jobs as from an ended session.
 */
export const SESSION_IDLE_MS = 5 * 60_000;

export interface McpHttpOptions {
  /** The unix socket to listen on (its directory private to this user: the caller's job). */
  listen: string;
  /** The daemon's unix socket: every session's tools are a client of it. */
  daemonSocket: string;
  /** What the tools do (`daemon` is set here). */
  tools: McpToolOptions;
  /**
   * The pid of the one process whose connections are served (the daemon, whose `/mcp`
   * proxies here); `undefined` while there is none yet: every connection is refused.
   */
  onlyPeer: () => number | undefined;
  /** The pid at the other end of a connected unix socket (the addon's `unixPeerPid`). */
  peerPid: (fd: number) => number | null;
  log: (line: string) => void;
  /** How long a session may sit with nothing open before it is ended (default SESSION_IDLE_MS). */
  sessionIdleMs?: number;
}

export interface RunningMcpHttp {
  /** Closes every session (their jobs run on in the daemon) and stops listening. */
  close(): Promise<void>;
  sessions(): number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  mcp: McpSession;
  lastSeen: number;
  /** Requests (and SSE streams) not yet finished. */
  open: number;
}

/** A JSON-RPC error as an HTTP answer (what the SDK's transport answers too). */
function reject(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The request's body as JSON, at most MAX_BODY bytes; `undefined` when it is not JSON. */
function readJson(req: IncomingMessage): Promise<{ tooBig: boolean; value: unknown }> {
  return new Promise((resolve, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.destroy();
        resolve({ tooBig: true, value: undefined });
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', fail);
    req.on('end', () => {
      try {
        resolve({ tooBig: false, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolve({ tooBig: false, value: undefined });
      }
    });
  });
}

export async function serveMcpHttp(options: McpHttpOptions): Promise<RunningMcpHttp> {
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js');
  const { log } = options;
  const sessions = new Map<string, Session>();
  const tools: McpToolOptions = { ...options.tools, daemon: { socket: options.daemonSocket } };

  const stateless = statelessMcp(
    async () => {
      const { native } = await openMcpService(tools, log, true);
      return createMcpServer(native, tools);
    },
    options.sessionIdleMs ?? SESSION_IDLE_MS,
    log,
  );

  const end = async (id: string, session: Session, why: string): Promise<void> => {
    if (sessions.get(id) !== session) return;
    sessions.delete(id);
    session.mcp.quiet();
    log(`native-shell-service mcp-http: session ${id} ends (${why}); its jobs run on in the daemon`);
    // This session's client of the daemon closes; the jobs stay the daemon's.
    await session.mcp.service.shutdown().catch((e: Error) => log(`native-shell-service mcp-http: shutdown failed: ${e.message}`));
    await session.mcp.server.close().catch(() => {});
  };

  /** A new session: its daemon client opened first, so a daemon that is gone answers 503, not a half session. */
  const initialize = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    let mcp: McpSession;
    try {
      const { native } = await openMcpService(tools, log, true);
      mcp = await createMcpServer(native, tools);
    } catch (e) {
      const err = e as Error & { code?: string };
      log(`native-shell-service mcp-http: cannot open a session: ${err.code ?? ''} ${err.message}`);
      reject(res, 503, -32603, `the daemon cannot be reached (${err.code ?? 'EXECUTION_FAILED'})`);
      return;
    }
    let session: Session | null = null;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { transport, mcp, lastSeen: Date.now(), open: 1 };
        sessions.set(id, session);
        res.once('close', () => {
          if (session) session.open -= 1;
        });
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && session) void end(id, session, 'closed');
    };
    mcp.server.onerror = (e) => log(`native-shell-service mcp-http: protocol error: ${e.message}`);
    await mcp.server.connect(transport);
    await transport.handleRequest(req, res, body);
    // Not initialized after all (a bad request): nothing to keep.
    if (!session) {
      mcp.quiet();
      await mcp.service.shutdown().catch(() => {});
      await mcp.server.close().catch(() => {});
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const session = sessions.get(id);
      // The spec's answer to a session that is not (or no longer) there: 404, and the client starts a new one.
      if (!session) return reject(res, 404, -32001, 'Session not found');
      session.lastSeen = Date.now();
      session.open += 1;
      res.once('close', () => {
        session.open -= 1;
        session.lastSeen = Date.now();
      });
      return session.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return reject(res, 400, -32000, 'Bad Request: no Mcp-Session-Id (send initialize first)');
    const { tooBig, value } = await readJson(req);
    if (tooBig) return reject(res, 413, -32600, `the request is over ${MAX_BODY} bytes`);
    if (value === undefined) return reject(res, 400, -32700, 'Parse error: the body is not JSON');
    const messages = Array.isArray(value) ? value : [value];
    // MCP 2026-07-28: no session; each request answered in this response (modern-http.ts).
    if (isModernBody(messages)) {
      // Task notifications: the one request answered as a stream, open until the client closes it.
      if (isListenBody(messages)) return stateless.listen(messages[0] as Record<string, unknown>, res);
      let replies: Record<string, unknown>[];
      try {
        replies = await stateless.answer(messages);
      } catch (e) {
        const err = e as Error & { code?: string };
        log(`native-shell-service mcp-http: cannot answer a 2026-07-28 request: ${err.code ?? ''} ${err.message}`);
        return reject(res, 503, -32603, `the daemon cannot be reached (${err.code ?? 'EXECUTION_FAILED'})`);
      }
      if (replies.length === 0) return void res.writeHead(202).end();
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(value) ? replies : replies[0]));
    }
    if (!messages.some((m) => isInitializeRequest(m))) {
      return reject(res, 400, -32000, 'Bad Request: no Mcp-Session-Id (send initialize first)');
    }
    return initialize(req, res, value);
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      log(`native-shell-service mcp-http: ${e.stack ?? e.message}`);
      if (!res.headersSent) reject(res, 500, -32603, 'Internal error');
      else res.destroy();
    });
  });
  // Before the HTTP server's own listener reads a byte: a connection of any process but
  // the daemon's is closed unread (fails closed: a descriptor or pid that cannot be had).
  http.prependListener('connection', (socket: Socket) => {
    const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
    const pid = typeof fd === 'number' ? options.peerPid(fd) : null;
    const daemon = options.onlyPeer();
    if (pid === null || daemon === undefined || pid !== daemon) {
      log(`native-shell-service mcp-http: refused a connection from pid ${pid ?? '(unknown)'}: only the daemon (pid ${daemon ?? 'not started'}) may connect`);
      socket.destroy();
    }
  });
  // SSE streams stay open as long as the client wants them.
  http.requestTimeout = 0;
  http.headersTimeout = 60_000;
  await new Promise<void>((resolve, fail) => {
    http.once('error', fail);
    http.listen(options.listen, () => {
      http.off('error', fail);
      resolve();
    });
  });
  // Only this user, whatever the umask (its directory is private already: two locks).
  chmodSync(options.listen, 0o600);

  const idleMs = options.sessionIdleMs ?? SESSION_IDLE_MS;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) if (s.open <= 0 && now - s.lastSeen > idleMs) void end(id, s, `idle for ${idleMs} ms with nothing open`);
    },
    // Often enough that a session ends within a quarter of its idle time past it.
    Math.min(60_000, Math.max(100, Math.floor(idleMs / 4))),
  );
  sweep.unref();

  return {
    sessions: () => sessions.size,
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...[...sessions].map(([id, s]) => end(id, s, 'the server stops')), stateless.close()]);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
