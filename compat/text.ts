// Reading a job's committed text by byte offset (`readOutput`, see index.d.ts): what
// is new since a reader's last offset, and the whole text for a result. Only what the
// native service no longer holds anywhere (neither memory nor the output file) is
// missing; where it was, the reader gets a gap marker.
import type { NativeService } from './native.js';

/** Put where output was lost (it left memory and the output file). */
export const GAP_MARKER = '[... output omitted ...]\n';

/** Bytes asked for per `readOutput` call (the native maximum). */
const READ_BYTES = 16 * 1024 * 1024;

/** A reader's position in one job's committed text. */
export interface TextCursor {
  /** Byte offset to read from next. */
  offset: number;
}

/**
 * Bytes of committed text from `since` that come before the gap in a read that
 * reported one. The native read lays out memory's head, then the file, then the gap,
 * then memory's tail; a read whose budget runs out before the gap reports none, so
 * the smallest budget that reports it is one byte past the text ahead of it.
 */
function bytesBeforeGap(service: NativeService, handle: number, since: number, upTo: number): number {
  let lo = 0;
  let hi = upTo;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (service.readOutput(handle, { since, maxBytes: mid + 1 }).omitted > 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** One read turned into text, a gap marker where bytes were lost. */
function readOnce(service: NativeService, handle: number, since: number): { text: string; next: number } {
  const chunk = service.readOutput(handle, { since, maxBytes: READ_BYTES });
  if (chunk.omitted === 0) return { text: chunk.text, next: chunk.next };
  const bytes = Buffer.from(chunk.text, 'utf8');
  const before = bytesBeforeGap(service, handle, since, bytes.length);
  const head = bytes.subarray(0, before).toString('utf8');
  const newline = head.length > 0 && !head.endsWith('\n') ? '\n' : '';
  return { text: `${head}${newline}${GAP_MARKER}${bytes.subarray(before).toString('utf8')}`, next: chunk.next };
}

/**
 * The committed text from `cursor.offset` up to `until` bytes (or as far as there is),
 * advancing the cursor: each line is handed out once.
 */
export function readNew(service: NativeService, handle: number, cursor: TextCursor, until = Infinity): string {
  const parts: string[] = [];
  while (cursor.offset < until) {
    const { text, next } = readOnce(service, handle, cursor.offset);
    if (next <= cursor.offset) break;
    cursor.offset = next;
    parts.push(text);
  }
  return parts.join('');
}

/** The whole committed text of a job (an ended job's is final). */
export function readAll(service: NativeService, handle: number): string {
  return readNew(service, handle, { offset: 0 });
}
