// `notifications/progress` for a `tools/call` that carries a progressToken: the tools'
// live output (tools/live-output.ts, already coalesced there) becomes one notification
// per update, whose message is the job's latest lines.
import type { UpdateOutput } from '../live-output.js';

/** How many of the latest lines a progress message carries. */
export const PROGRESS_LINES = 10;
/** The longest progress message (characters); longer ones keep their end. */
export const PROGRESS_MAX_CHARS = 2000;

export type ProgressToken = string | number;

export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: ProgressToken; progress: number; message: string };
}

/** The last `lines` non-empty lines of `text`, at most `maxChars` characters (the end kept). */
export function latestLines(text: string, lines = PROGRESS_LINES, maxChars = PROGRESS_MAX_CHARS): string {
  const tail = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-lines)
    .join('\n');
  return tail.length > maxChars ? `…${tail.slice(tail.length - maxChars + 1)}` : tail;
}

/** Progress for one call: the `UpdateOutput` to hand the tool, and a wait for its sends. */
export interface ProgressSender {
  update: UpdateOutput;
  /** Resolves once every notification sent so far is written, so the last one goes out before the result. */
  settled(): Promise<void>;
}

/**
 * Sends progress for `token`. `progress` counts the updates (it must grow with each
 * notification; a command has no known total). A failed send is dropped: progress is
 * a courtesy, the result is what counts.
 */
export function progressUpdates(
  token: ProgressToken,
  send: (notification: ProgressNotification) => Promise<void>,
): ProgressSender {
  let progress = 0;
  let last: Promise<void> = Promise.resolve();
  return {
    update: (text) => {
      progress += 1;
      const notification: ProgressNotification = {
        method: 'notifications/progress',
        params: { progressToken: token, progress, message: latestLines(text) },
      };
      last = send(notification).catch(() => {});
    },
    settled: () => last,
  };
}
