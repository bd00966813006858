// The native service as the adapter sees it: the generated types under the names the
// drop-in uses, and the service's defaults. The addon itself is loaded by the one
// loader of the package's TypeScript (contract/addon.ts).
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type {
  CellRun,
  JobStatus,
  OutputChunk,
  OutputEvent,
  PackedScreen,
  RunResult,
  Screen,
  ServiceOptions,
  ShellExecutionService,
} from '../contract/addon.js';

export { loadAddon } from '../contract/addon.js';

export type NativeStatus = JobStatus;
export type NativeRunResult = RunResult;
/** What an `onOutput` listener is told: the job's output position (see index.d.ts). */
export type NativeOutputEvent = OutputEvent;
/** One `readOutput` answer: committed text from `since` to `next`, `omitted` bytes gone from both memory and file. */
export type NativeOutputChunk = OutputChunk;
/** A run of screen cells with the same attributes; colours `#rrggbb` or `''` (default). */
export type NativeCellRun = CellRun;
/** A PTY job's screen: `lines` are the scrollback asked for, oldest first, then the rows. */
export type NativeScreen = Screen;
/** The same screen packed: all runs' text in one string, their lengths and looks in typed arrays. */
export type NativePackedScreen = PackedScreen;
export type NativeService = ShellExecutionService;
/**
 * The drop-in's service is in process (it stands in for the Gemini CLI's own, whose jobs
 * are its process's): no `daemon` here; the tools take a daemon client (docs/daemon.md).
 */
export type NativeServiceOptions = Omit<ServiceOptions, 'daemon'>;

/** Defaults for the one native service behind the adapter's static API. */
export function defaultNativeOptions(): NativeServiceOptions {
  return {
    // Upstream takes absolute working directories; the native service takes them
    // relative to its root, so the root is `/` and every directory is inside it.
    projectRoot: '/',
    ioDir: join(tmpdir(), 'native-shell-service-gemini-compat'),
    sessionId: `gemini-compat-${process.pid}`,
    maxJobs: 256,
    persistOutput: true,
  };
}
