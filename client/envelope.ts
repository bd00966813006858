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

/** The bytes before a message's body: its flags (0) and its length. */
const HEAD = 5;

/**
 * One message as a frame, in one buffer: the JSON is written after room for the
 * header (no second buffer, no concatenation; a small frame comes from Node's shared
 * pool). Throws (`LIMIT_REACHED`) for a request over the limit.
 */
export function encodeFrame(message: unknown): Buffer {
  const json = JSON.stringify(message);
  const length = Buffer.byteLength(json, 'utf8');
  if (length > MAX_REQUEST) {
    throw Object.assign(new Error(`the request is ${length} bytes, over the wire's limit of ${MAX_REQUEST}`), {
      code: 'LIMIT_REACHED',
    });
  }
  const frame = Buffer.allocUnsafe(HEAD + length);
  frame[0] = 0;
  frame.writeUInt32BE(length, 1);
  frame.write(json, HEAD, 'utf8');
  return frame;
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

  /**
   * Adds bytes; returns the messages now complete, parsed. Throws on a bad frame.
   * `reused`: the chunk's memory is read into again after this call (a link's one read
   * buffer): whole frames are parsed from it where they lie, and only what is left of a
   * frame cut by the read's end is copied out to be kept.
   */
  push(chunk: Buffer, reused = false): unknown[] {
    const out: unknown[] = [];
    let at = 0;
    if (this.buffered === 0) {
      // Nothing held from before (the usual case: a reply comes in one read): its
      // frames are parsed straight from the chunk.
      while (chunk.length - at >= HEAD) {
        const length = this.announced(chunk, at);
        if (chunk.length - at - HEAD < length) break;
        out.push(JSON.parse(chunk.toString('utf8', at + HEAD, at + HEAD + length)));
        at += HEAD + length;
      }
      if (at === chunk.length) return out;
      chunk = chunk.subarray(at);
    }
    this.chunks.push(reused ? Buffer.from(chunk) : chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.buffered < HEAD) return out;
      const length = this.announced(this.peek(HEAD), 0);
      if (this.buffered < HEAD + length) return out;
      const frame = this.take(HEAD + length);
      out.push(JSON.parse(frame.toString('utf8', HEAD)));
    }
  }

  /** The length a frame's header at `at` announces; throws for reserved flags or one over the limit. */
  private announced(bytes: Buffer, at: number): number {
    const flags = bytes[at]!;
    if (flags !== 0) throw new Error(`frame flags 0x${flags.toString(16)} are reserved`);
    const length = bytes.readUInt32BE(at + 1);
    if (length > this.max) {
      throw Object.assign(new Error(`a message of ${length} bytes is over the limit of ${this.max}`), { code: FRAME_TOO_LARGE });
    }
    return length;
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
