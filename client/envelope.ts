// The wire's framing (docs/daemon.md, "Protocol"): the Connect protocol's streaming
// envelope on a byte stream — 1 byte of flags (0: a message), 4 bytes of big-endian
// length, that many bytes of UTF-8 JSON — the same as the daemon's src/daemon/frame.rs,
// so a network transport (issue 33) can carry the same messages.

/** The largest message either side accepts (the daemon's `MAX_MESSAGE`). */
export const MAX_MESSAGE = 16 << 20;

/** One message as a frame. Throws (`LIMIT_REACHED`) for a message over the limit. */
export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > MAX_MESSAGE) {
    throw Object.assign(new Error(`the request is ${body.length} bytes, over the wire's limit of ${MAX_MESSAGE}`), {
      code: 'LIMIT_REACHED',
    });
  }
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/**
 * Cuts a byte stream into messages. Chunks are kept as they came until a whole frame
 * is there (a 64 MiB read arrives in many chunks: no copy per chunk).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

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
      if (length > MAX_MESSAGE) throw new Error(`a message of ${length} bytes is over the limit of ${MAX_MESSAGE}`);
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
