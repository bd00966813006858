// Live output: while a call waits on a job, the host's `updateOutput` callback gets the
// job's text so far (its last LIVE_OUTPUT_MAX_BYTES), driven by the service's `onOutput`
// events and coalesced to at most one update per interval. No timer runs unless an event
// asked for an update that the interval held back.
import type { AnyShellExecutionService as ShellExecutionService } from '../contract/addon.js';

/** What the Gemini CLI passes to a tool that declares `canUpdateOutput`. */
export type UpdateOutput = (output: string) => void;

/** The shortest time between two updates (the Gemini CLI's own shell tool waits as long). */
export const LIVE_OUTPUT_INTERVAL_MS = 1000;
/** How much of the job's text an update carries: its tail, like the Gemini CLI's live buffer. */
export const LIVE_OUTPUT_MAX_BYTES = 100_000;

export interface LiveOutputOptions {
  intervalMs?: number;
  maxBytes?: number;
}

/** A running stream of updates; `finish` sends the last one and ends it. */
export interface LiveOutput {
  /**
   * Sends the text as it is now if it changed since the last update, then stops;
   * settles once sent (a daemon answers later), so no update follows the caller's
   * result. Idempotent.
   */
  finish(): Promise<void>;
}

const NOTHING: LiveOutput = { finish: async () => {} };

/**
 * Starts streaming `handle`'s text to `updateOutput`. The first output is sent at once,
 * later output at most once per `intervalMs`, the exit at once. After `finish` nothing
 * is sent. A throwing `updateOutput` is ignored: the display is the host's business,
 * the call's result must not depend on it.
 */
export async function streamOutput(
  service: ShellExecutionService,
  handle: number,
  updateOutput: UpdateOutput | undefined,
  options: LiveOutputOptions = {},
): Promise<LiveOutput> {
  if (!updateOutput) return NOTHING;
  const intervalMs = options.intervalMs ?? LIVE_OUTPUT_INTERVAL_MS;
  const maxBytes = options.maxBytes ?? LIVE_OUTPUT_MAX_BYTES;

  let finished = false;
  let lastSent = '';
  let lastSentAt: number | null = null;
  let timer: NodeJS.Timeout | null = null;

  // A daemon's answer comes later: the last one asked is the one shown, and nothing is
  // shown once finished (except the final text `finish` asks for).
  let asked = 0;
  const show = (text: string, ticket: number, final: boolean) => {
    if (ticket !== asked || (finished && !final)) return;
    if (text === lastSent) return;
    lastSent = text;
    lastSentAt = Date.now();
    try {
      updateOutput(text);
    } catch {
      // see the doc comment above
    }
  };
  const send = (final = false): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    const ticket = ++asked;
    let text: string | Promise<string>;
    try {
      // The text view (not the committed text) so the line being written shows too.
      text = service.getProcessOutput(handle, { view: 'text', tailBytes: maxBytes });
    } catch {
      return Promise.resolve(); // the job was removed meanwhile
    }
    if (typeof text === 'string') {
      show(text, ticket, final);
      return Promise.resolve();
    }
    return text.then(
      (t) => show(t, ticket, final),
      () => {},
    );
  };

  const onEvent = (event: { exited: boolean }) => {
    if (finished) return;
    const waited = lastSentAt === null ? Infinity : Date.now() - lastSentAt;
    if (event.exited || waited >= intervalMs) void send();
    else timer ??= setTimeout(() => void send(), intervalMs - waited);
  };

  let unsubscribe: () => void;
  try {
    unsubscribe = await service.onOutput(handle, onEvent);
  } catch {
    return NOTHING; // the job is gone: nothing to stream
  }
  return {
    async finish() {
      if (finished) return;
      finished = true;
      try {
        unsubscribe();
      } catch {
        // already ended
      }
      const last = send(true);
      if (timer) clearTimeout(timer);
      timer = null;
      await last;
    },
  };
}
