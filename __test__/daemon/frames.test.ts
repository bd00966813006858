// The client's framing (client/envelope.ts): a frame is one header and its JSON, and
// the reader takes a link's reads as they come — several frames in one read, a frame
// cut anywhere, even inside its header — from a buffer the link reads into again
// after each push (its `onread` buffer), so what is kept of a cut frame must be a copy.
import { describe, expect, it } from 'vitest';

import { encodeFrame, FRAME_TOO_LARGE, FrameReader } from '../../client/envelope';

/** Feeds `bytes` through one reused buffer, `size` bytes a read, scribbling over it after each push. */
function feedReused(reader: FrameReader, bytes: Buffer, size: number): unknown[] {
  const buffer = Buffer.alloc(size);
  const out: unknown[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    const n = bytes.copy(buffer, 0, at, Math.min(at + size, bytes.length));
    out.push(...reader.push(buffer.subarray(0, n), true));
    buffer.fill(0xff);
  }
  return out;
}

describe('client framing', () => {
  const messages = [{ id: 1, result: 'é'.repeat(40) }, { event: 'output', sub: 2, data: { totalBytes: 7 } }, { id: 3, result: null }];
  const stream = Buffer.concat(messages.map((m) => encodeFrame(m)));

  it('encodes a header of flags 0 and the body length, then the UTF-8 JSON', () => {
    const frame = encodeFrame({ a: 'é' });
    expect(frame[0]).toBe(0);
    expect(frame.readUInt32BE(1)).toBe(frame.length - 5);
    expect(JSON.parse(frame.toString('utf8', 5))).toEqual({ a: 'é' });
  });

  it('reads every frame however the reads cut the stream, from a buffer that is reused', () => {
    for (const size of [1, 2, 5, 6, 7, 64, 100, stream.length, stream.length + 10]) {
      expect(feedReused(new FrameReader(), stream, size), `reads of ${size} bytes`).toEqual(messages);
    }
  });

  it('reads chunks it may keep as they are', () => {
    const reader = new FrameReader();
    expect([...reader.push(stream.subarray(0, 60)), ...reader.push(stream.subarray(60))]).toEqual(messages);
  });

  it('refuses a frame announced over its limit as soon as the header is in', () => {
    const reader = new FrameReader(16);
    const big = encodeFrame({ text: 'x'.repeat(64) });
    expect(() => reader.push(big.subarray(0, 5), true)).toThrow(expect.objectContaining({ code: FRAME_TOO_LARGE }));
    expect(() => new FrameReader().push(Buffer.from([1, 0, 0, 0, 0]))).toThrow(/reserved/);
  });
});
