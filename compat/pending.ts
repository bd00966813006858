// A job's text that is not committed yet: a PTY job's lines still on its screen, which a
// program may redraw (src/output/line.rs keeps them editable until they scroll off or
// the job has been quiet for half a second), and the unfinished last line (a prompt, a
// progress bar's current state) in either mode. `readOutput` reads only committed text,
// so the background log (compat/background-log.ts) would otherwise lag a screenful
// behind a PTY job that prints steadily, and miss a prompt until its line ends.
//
// The native API has no read of this text by itself. It is the end of the text a
// result excerpt holds (`getResult(..., { maxOutputSize })`: committed text followed by
// the pending text): the excerpt's length — or, when it was cut, the count its marker
// gives of what it left out — says how long the whole text is, and the pending text is
// whatever lies past the committed length. A read of the pending text by offset in the
// native service would make this exact and cheaper (the excerpt copies up to
// `PROBE_BYTES`); until then every step below is checked, and any doubt gives
// `undefined` (the log then shows the committed text only, as before).
import type { JobService } from './native.js';

/** The excerpt asked for: its back half holds the pending text (a screenful is far less). */
const PROBE_BYTES = 64 * 1024;

/** The marker an excerpt puts where it left bytes out (src/output/bounded.rs, `marker`). */
const MARKER = /\[\.\.\. (\d+) bytes omitted(?:; the full output is in [^\n]*)? \.\.\.\]\n/gu;

/**
 * The text past the first `committed` bytes of the job's text, as it stands now;
 * `undefined` when it cannot be told for sure (more was committed meanwhile, or the
 * excerpt does not read as expected). `committedEnd` is the end of the committed text
 * as the caller has it (its last bytes), used to check where the pending text starts.
 */
export async function readPending(service: JobService, handle: number, committed: number, committedEnd: string): Promise<string | undefined> {
  const result = await service.getResult(handle, { maxOutputSize: PROBE_BYTES });
  // The excerpt is of the text as it was then: it counts only if nothing was committed
  // since `committed` (committed text only grows, so one look after suffices).
  if ((await service.readOutput(handle, { since: committed, maxBytes: 1 })).next !== committed) return undefined;
  const text = result.output;
  let total: number;
  let back: string;
  if (!result.truncated) {
    total = Buffer.byteLength(text, 'utf8');
    back = text;
  } else {
    // Cut: `front`, the marker, `back`. `front` is the start of the committed text (a
    // newline added when it does not end with one); a line of output that looks like a
    // marker is told apart by that. Of the candidates, the last whose front matches.
    const head = (await service.readOutput(handle, { since: 0, maxBytes: PROBE_BYTES })).text;
    let found: { front: string; dropped: number; rest: number } | undefined;
    for (const match of text.matchAll(MARKER)) {
      const before = text.slice(0, match.index);
      const front = head.startsWith(before) ? before : before.endsWith('\n') && head.startsWith(before.slice(0, -1)) ? before.slice(0, -1) : undefined;
      if (front !== undefined) found = { front, dropped: Number(match[1]), rest: match.index + match[0].length };
    }
    if (!found || !Number.isSafeInteger(found.dropped)) return undefined;
    back = text.slice(found.rest);
    total = found.dropped + Buffer.byteLength(found.front, 'utf8') + Buffer.byteLength(back, 'utf8');
  }
  const backBytes = Buffer.from(back, 'utf8');
  const pendingBytes = total - committed;
  if (pendingBytes < 0 || pendingBytes > backBytes.length) return undefined;
  const split = backBytes.length - pendingBytes;
  // What precedes the pending text in the excerpt must be the end of the committed text.
  const end = Buffer.from(committedEnd, 'utf8');
  const overlap = Math.min(split, end.length);
  if (!backBytes.subarray(split - overlap, split).equals(end.subarray(end.length - overlap))) return undefined;
  return backBytes.subarray(split).toString('utf8');
}
