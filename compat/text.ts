// Reading a job's committed text by byte offset (`readOutput`, see index.d.ts): what
// is new since a reader's last offset, and the whole text for a result. Only what the
// native service no longer holds anywhere (neither memory nor the output file) is
// missing; where it was, the reader gets a gap marker.
//
// A flood can leave many MiB unread between two renders: `readSlice` reads at most
// `TURN_BYTES` per call so that a caller can hand the rest to a later turn of the
// event loop (compat/execution.ts) instead of holding the host's JS thread for the
// whole of it.
import { setImmediate as nextTurn } from 'node:timers/promises';

import type { JobService } from './native.js';
import { LineTail } from './tail.js';

/** Put where output was lost (it left memory and the output file). */
export const GAP_MARKER = '[... output omitted ...]\n';

/** Bytes asked for per `readOutput` call (the native maximum). */
const READ_BYTES = 16 * 1024 * 1024;

/**
 * Bytes read in one turn of the event loop: decoding and copying 256 KiB into a JS
 * string takes well under a millisecond, so a turn that reads one slice and hands it
 * on stays short whatever the flood.
 */
export const TURN_BYTES = 256 * 1024;

/** A reader's position in one job's committed text. */
export interface TextCursor {
  /** Byte offset to read from next. */
  offset: number;
  /** The text handed out so far ends inside a line (a gap marker then starts a new one). */
  midLine?: boolean;
}

/**
 * One read turned into text, a gap marker where bytes were lost: the native read puts
 * a gap only ever at the start of a chunk, so the marker goes there, on a line of its own.
 */
async function readOnce(
  service: JobService,
  handle: number,
  since: number,
  midLine: boolean,
  maxBytes = READ_BYTES,
): Promise<{ text: string; next: number; omitted: boolean }> {
  const chunk = await service.readOutput(handle, { since, maxBytes });
  if (chunk.omitted === 0) return { text: chunk.text, next: chunk.next, omitted: false };
  return { text: `${midLine ? '\n' : ''}${GAP_MARKER}${chunk.text}`, next: chunk.next, omitted: true };
}

/**
 * At most `maxBytes` of the committed text from `cursor.offset` (a gap marker where
 * bytes were lost), advancing the cursor; `undefined` when there is nothing new. The
 * slices of successive calls join to what `readNew` would have returned at once.
 */
export async function readSlice(
  service: JobService,
  handle: number,
  cursor: TextCursor,
  maxBytes = TURN_BYTES,
): Promise<{ text: string; omitted: boolean } | undefined> {
  const { text, next, omitted } = await readOnce(service, handle, cursor.offset, cursor.midLine === true, maxBytes);
  if (next <= cursor.offset) return undefined;
  cursor.offset = next;
  if (text.length > 0) cursor.midLine = !text.endsWith('\n');
  return { text, omitted };
}

/**
 * Reads the committed text from `cursor.offset` to its end a slice per turn, handing
 * each slice to `take`; resolves once a read finds nothing new.
 */
export async function readPaced(
  service: JobService,
  handle: number,
  cursor: TextCursor,
  take: (text: string, omitted: boolean) => void,
): Promise<void> {
  for (;;) {
    const slice = await readSlice(service, handle, cursor);
    if (!slice) return;
    take(slice.text, slice.omitted);
    await nextTurn();
  }
}

/** Whether a native call was refused as bad input (see index.d.ts, `ErrorCode`). */
function invalidArgument(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === 'INVALID_ARGUMENT';
}

/**
 * The text from byte `from` up to byte `to` (a character boundary), read in as many
 * calls as the native reads take; `undefined` if a part of it is lost (a gap).
 * `from` inside a character is refused natively: it moves back to the character's
 * start (at most 3 bytes), so the text may start a little before `from`.
 */
async function readRange(service: JobService, handle: number, from: number, to: number): Promise<{ text: string; from: number } | undefined> {
  const parts: string[] = [];
  let since = from;
  for (let back = 0; ; back++) {
    try {
      const chunk = await service.readOutput(handle, { since, maxBytes: to - since });
      if (chunk.omitted > 0 || chunk.next <= since) return undefined;
      parts.push(chunk.text);
      since = chunk.next;
      break;
    } catch (e) {
      if (!invalidArgument(e) || back === 3 || since === 0) throw e;
      since--;
      from = since;
    }
  }
  while (since < to) {
    const chunk = await service.readOutput(handle, { since, maxBytes: to - since });
    if (chunk.omitted > 0 || chunk.next <= since) return undefined;
    parts.push(chunk.text);
    since = chunk.next;
  }
  return { text: parts.join(''), from };
}

/**
 * The last `maxLines` lines of a job's committed text, read backwards from byte `end`
 * a slice per turn (`TURN_BYTES`), then on from `end` to wherever the text ends now:
 * an ended PTY job's result (`ptyOutput` of the whole text) needs only its last lines,
 * and reading a 64 MiB flood from the start to keep the last 300 030 lines decoded
 * three times the text the result holds, on the host's JS thread.
 * `undefined` when a read met lost bytes: the caller reads from the start then, where
 * the gap markers go as they always did.
 */
export async function readLastLines(
  service: JobService,
  handle: number,
  end: number,
  maxLines: number,
): Promise<LineTail | undefined> {
  const tail = new LineTail(maxLines);
  let start = end;
  let seen = 0;
  while (start > 0 && seen < maxLines) {
    const range = await readRange(service, handle, Math.max(0, start - TURN_BYTES), start);
    if (!range) return undefined;
    seen += tail.prepend(range.text);
    start = range.from;
    await nextTurn();
  }
  const after: TextCursor = { offset: end };
  let gap = false;
  await readPaced(service, handle, after, (text, omitted) => {
    gap ||= omitted;
    tail.append(text);
  });
  return gap ? undefined : tail;
}
