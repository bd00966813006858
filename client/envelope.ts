// The wire's framing (docs/daemon.md, "Protocol"): the Connect protocol's streaming
// envelope on a byte stream — 1 byte of flags (0: a message), 4 bytes of big-endian
// length, that many bytes of UTF-8 JSON — the same as the daemon's src/daemon/frame.rs,
// so a network transport can carry the same messages.

/** The largest request the daemon accepts (src/daemon/frame.rs `MAX_REQUEST`). */
export const MAX_REQUEST = 16 << 20;

/**
 * The largest reply or event accepted from the daemon (src/daemon/frame.rs `MAX_REPLY`):
 * the largest text a result carries (64 MiB, `maxOutputSize`'s bound in
 * src/base/limits.rs) all in JSON's six-byte escapes, plus 64 MiB for the rest. Larger
 * than a request so every call answers as in process; allocated only for our own
 * daemon (same user, its socket directory checked: client/place.ts).
 */
export const MAX_REPLY = 6 * (64 << 20) + (64 << 20);

/**
 * The largest frame taken from a daemon reached by `url` unless `daemon.maxFrameBytes`
 * says otherwise: 16 MiB, the same bound the daemon puts on what it takes from a
 * client (`MAX_REQUEST`). Whoever answers a URL may be anyone (a wrong address, a proxy,
 * a hostile host), and a frame is held whole before it is parsed: `MAX_REPLY` would let
 * it make this process hold 448 MiB and more. Every reply of the default options fits
 * (outputs of 16 KiB, `maxOutputSize`'s default); one carrying a larger `maxOutputSize`
 * of output, or a vast screen, needs a larger `maxFrameBytes`.
 */
export const DEFAULT_URL_MAX_FRAME = 16 << 20;

/** A frame announced over the reader's limit: the link ends with this code. */
export const FRAME_TOO_LARGE = 'DAEMON_FRAME_TOO_LARGE';

/** One message as a frame. Throws (`LIMIT_REACHED`) for a request over the limit. */
export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > MAX_REQUEST) {
    throw Object.assign(new Error(`the request is ${body.length} bytes, over the wire's limit of ${MAX_REQUEST}`), {
      code: 'LIMIT_REACHED',
    });
  }
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/**
 * Cuts a byte stream into messages. Chunks are kept as they came until a whole frame
 * is there (a 64 MiB read arrives in many chunks: no copy per chunk). A frame whose
 * header announces more than `max` bytes is refused as soon as its header is in, before
 * any more of it is kept (`FRAME_TOO_LARGE`).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly max: number = MAX_REPLY) {}

  /** Adds bytes; returns the messages now complete, parsed. Throws on a bad frame. */
  push(chunk: Buffer): unknown[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: unknown[] = [];
    for (;;) {
      if (this.buffered < 5) return out;
      const head = this.peek(5);
      if (head[0] !== 0) throw new Error(`frame flags 0x${head[0]!.toString(16)} are reserved`);
      const length = head.readUInt32BE(1);
      if (length > this.max) {
        throw Object.assign(new Error(`a message of ${length} bytes is over the limit of ${this.max}`), { code: FRAME_TOO_LARGE });
      }
      if (this.buffered < 5 + length) return out;
      const frame = this.take(5 + length);
      out.push(JSON.parse(frame.toString('utf8', 5)));
    }
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0]!;
    return first.length >= n ? first : Buffer.concat(this.chunks).subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return all.subarray(0, n);
  }
}
