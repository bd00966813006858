// One connection to the daemon: requests with ids, replies matched by id (they may come
// out of order), events, and the end of the connection. Nothing here blocks: a slow or
// stopped daemon only delays the replies.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, type Socket } from 'node:net';

import { DEFAULT_URL_MAX_FRAME, encodeFrame, FRAME_TOO_LARGE, FrameReader } from './envelope.js';
import { codedError, replyError } from './errors.js';

/** The `Upgrade` token of the daemon's protocol over HTTP (src/daemon/http/upgrade.rs). */
export const UPGRADE_PROTOCOL = 'native-shell-service/1';

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * Set in every job's environment (src/platform/mod.rs `JOB_MARKER`): this process runs
 * in a job, and the daemon refuses its jobs' processes as clients (docs/daemon.md, "Who
 * may connect"). Only used to explain a refusal: the daemon decides from kernel facts.
 */
const JOB_MARKER = 'NATIVE_SHELL_JOB';

/** The error for a connection the daemon closed before answering anything, when this process is one of a job's. */
function refusedAsJob(): Error | null {
  if (!process.env[JOB_MARKER]) return null;
  return codedError(
    'DAEMON_REFUSED',
    `the daemon closed the connection unread: this process runs in one of its jobs (${JOB_MARKER} is set), and a daemon serves no process of its own jobs, sandboxed or not (docs/daemon.md, "Who may connect")`,
  );
}

export interface LinkEvents {
  /** An `output` event of a subscription. */
  output(sub: number, data: unknown): void;
  /** The connection ended (`why`: the daemon's `bye` reason or the socket's error); pending calls rejected already. */
  closed(why: string): void;
}

/**
 * What one read from the daemon's unix socket takes at most: a link's one buffer, read
 * into again and again (Node's `onread`), where a `'data'` event would hand over a new
 * Buffer per read for the collector to free; a reply of a round trip fits whole.
 */
const READ_BUFFER = 64 * 1024;

export class Link {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly reader: FrameReader;
  private ended = false;
  /** The code calls made after the end reject with (`DAEMON_LOST` unless a frame was too large). */
  private endCode = 'DAEMON_LOST';
  private bye: string | null = null;
  /** Anything came from the daemon (a refused connection is closed before a byte). */
  private heard = false;
  /** Keep Node alive while idle (`setRef`); a call waiting for its reply always does. */
  private holding = true;
  /** Whether the socket is ref'd now: changed only when it must change. */
  private refd = true;
  private resolveEnded: () => void = () => {};
  /** Settles once the connection has ended (pending calls rejected, `closed` reported). */
  readonly whenClosed = new Promise<void>((resolve) => {
    this.resolveEnded = resolve;
  });

  /** `dataEvents`: the socket's bytes come as `'data'` events (not through `onread`). */
  private constructor(
    private readonly socket: Socket,
    private readonly events: LinkEvents,
    maxFrame: number | undefined,
    dataEvents: boolean,
  ) {
    this.reader = new FrameReader(maxFrame);
    if (dataEvents) socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', (e) => this.end(`the connection failed: ${e.message}`));
    socket.on('close', () => this.end(this.bye ?? 'the daemon closed the connection'));
  }

  /** Connects to `path`; rejects with the socket's error (`code` ENOENT, ECONNREFUSED, ...). */
  static open(path: string, events: LinkEvents): Promise<Link> {
    return new Promise((resolve, reject) => {
      let link: Link | null = null;
      const socket = createConnection({
        path,
        onread: {
          buffer: Buffer.allocUnsafe(READ_BUFFER),
          callback: (n: number, buffer: Uint8Array) => {
            // Nothing comes before `connect`, where the link is made.
            link?.received(Buffer.from(buffer.buffer, buffer.byteOffset, n), true);
            return true;
          },
        },
      });
      const failed = (e: Error) => reject(e);
      socket.once('error', failed);
      socket.once('connect', () => {
        socket.off('error', failed);
        socket.setNoDelay?.(true);
        link = new Link(socket, events, undefined, false);
        resolve(link);
      });
    });
  }

  /**
   * Connects to a daemon's HTTP port (`--listen`): an HTTP/1.1 request to `/daemon`
   * asking to upgrade to `native-shell-service/1` (src/daemon/http/upgrade.rs), with
   * the token; after the daemon's 101 the connection carries the socket's frames.
   * `https:` goes through TLS (a reverse proxy's). Rejects with `DAEMON_UNAUTHORIZED`
   * on 401 or 403 (a missing or wrong token), `DAEMON_UNAVAILABLE` for any other answer,
   * and the socket's error (`code` ECONNREFUSED, ...) when nothing answers. Frames over
   * `maxFrame` bytes (default `DEFAULT_URL_MAX_FRAME`, 16 MiB) end the link: pending
   * calls reject with `DAEMON_FRAME_TOO_LARGE`, and none of the frame is kept.
   */
  static openUrl(url: URL, token: string | undefined, events: LinkEvents, maxFrame: number = DEFAULT_URL_MAX_FRAME): Promise<Link> {
    return new Promise((resolve, reject) => {
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = request({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        method: 'GET',
        path: `${url.pathname.replace(/\/+$/, '')}/daemon`,
        // Never pooled: the upgraded connection is this client's own.
        agent: false,
        headers: {
          Connection: 'Upgrade',
          Upgrade: UPGRADE_PROTOCOL,
          ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}),
        },
      });
      // Closed before any answer, in a job: refused as one (the daemon's TCP port closes a job's connection unread).
      const failed = (e: Error) => reject(refusedAsJob() ?? e);
      req.once('error', failed);
      req.once('response', (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        const where = `${url.origin}`;
        if (status === 401 || status === 403) {
          reject(codedError('DAEMON_UNAUTHORIZED', `the daemon at ${where} refused this client (HTTP ${status}): ${token === undefined ? 'it wants a token (daemon.token)' : 'the token is wrong'}`));
        } else {
          reject(codedError('DAEMON_UNAVAILABLE', `${where} did not take the daemon's protocol (HTTP ${status}); is it a native-shell-daemon with --listen?`));
        }
      });
      req.once('upgrade', (res, socket, head) => {
        req.off('error', failed);
        if (String(res.headers.upgrade ?? '').toLowerCase() !== UPGRADE_PROTOCOL) {
          socket.destroy();
          reject(codedError('DAEMON_UNAVAILABLE', `${url.origin} upgraded to ${String(res.headers.upgrade)}, not ${UPGRADE_PROTOCOL}`));
          return;
        }
        socket.setNoDelay?.(true);
        const link = new Link(socket, events, maxFrame, true);
        // Frames the daemon sent with its answer.
        if (head.length > 0) link.received(head);
        resolve(link);
      });
      req.end();
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Sends a request; settles with its reply (or `DAEMON_LOST` if the connection ends first). */
  request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (this.ended) return Promise.reject(codedError(this.endCode, `the connection to the daemon is gone (${this.bye ?? 'closed'})`));
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffff_ffff ? 1 : this.nextId + 1;
    let frame: Buffer;
    try {
      frame = encodeFrame({ id, method, params });
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.updateRef();
      this.socket.write(frame);
    });
  }

  /**
   * Closes the connection on purpose; what is pending rejects with `DAEMON_LOST`. Keeps
   * Node alive until the daemon has closed its side (`whenClosed`), so a caller awaiting
   * that is not left with an unsettled promise when nothing else runs.
   */
  close(): void {
    this.holding = true;
    this.updateRef();
    this.socket.end();
  }

  /** Closes at once (no more writes). */
  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Whether this connection keeps Node alive while no call waits (`false` lets the
   * process exit while it is open and idle). A call waiting for its reply keeps Node
   * alive either way, as a pending in-process promise does.
   */
  setRef(ref: boolean): void {
    this.holding = ref;
    this.updateRef();
  }

  /** Refs or unrefs the socket when what it should be has changed (each is a call into libuv). */
  private updateRef(): void {
    const want = this.holding || this.pending.size > 0;
    if (want === this.refd) return;
    this.refd = want;
    if (want) this.socket.ref();
    else this.socket.unref();
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** `reused`: the chunk is the link's read buffer (`onread`), read into again after this. */
  private received(chunk: Buffer, reused = false): void {
    this.heard = true;
    let messages: unknown[];
    try {
      messages = this.reader.push(chunk, reused);
    } catch (e) {
      const code = (e as { code?: string }).code === FRAME_TOO_LARGE ? FRAME_TOO_LARGE : 'DAEMON_LOST';
      this.end(`the daemon sent a bad frame: ${(e as Error).message}`, code);
      this.socket.destroy();
      return;
    }
    for (const m of messages) this.dispatch(m as Record<string, unknown>);
  }

  private dispatch(m: Record<string, unknown>): void {
    if (typeof m.id === 'number') {
      const p = this.pending.get(m.id);
      if (!p) return; // a reply to nothing we wait for: ignored
      this.pending.delete(m.id);
      this.updateRef();
      if ('error' in m && m.error !== undefined && m.error !== null) p.reject(replyError(m.error));
      else p.resolve(m.result ?? null);
      return;
    }
    if (m.event === 'output' && typeof m.sub === 'number') this.events.output(m.sub, m.data);
    else if (m.event === 'bye') this.bye = typeof m.reason === 'string' ? m.reason : 'the daemon said goodbye';
  }

  /** Ends the link; pending calls reject with `code` (`DAEMON_LOST`, or `DAEMON_FRAME_TOO_LARGE` for an oversized frame). */
  private end(why: string, code = 'DAEMON_LOST'): void {
    if (this.ended) return;
    this.ended = true;
    this.endCode = code;
    this.bye ??= why;
    const pending = [...this.pending.values()];
    this.pending.clear();
    const refused = this.heard ? null : refusedAsJob();
    for (const p of pending) p.reject(refused ?? codedError(code, `the connection to the daemon was lost (${why}); the call's outcome is unknown`));
    this.socket.destroy();
    this.events.closed(why);
    this.resolveEnded();
  }
}
