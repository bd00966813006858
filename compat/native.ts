// The native service as the adapter sees it: the generated types under the names the
// drop-in uses, and the service's defaults. The addon itself is loaded by the one
// loader of the package's TypeScript (contract/addon.ts).
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type {
  CellRun,
  DaemonOptions,
  DaemonShellExecutionService,
  JobStatus,
  OutputChunk,
  OutputEvent,
  PackedScreen,
  RunResult,
  Screen,
  ServiceOptions,
  ShellExecutionService,
} from '../contract/addon.js';

export { isDaemonClient, loadAddon } from '../contract/addon.js';

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
/** The in-process service: its reads answer at once. */
export type NativeService = ShellExecutionService;
/** A client of the per-user daemon (docs/daemon.md): the same calls, answered by promises. */
export type DaemonService = DaemonShellExecutionService;
/**
 * Either: an execution runs its job through whichever the drop-in was configured with
 * (compat/execution.ts awaits every read, which costs the in-process service nothing).
 */
export type JobService = NativeService | DaemonService;
/**
 * The service's options. `daemon` (adapter extension): every execution's job belongs
 * to the per-user daemon, so a backgrounded job outlives this process (docs/gemini-compat.md,
 * "Jobs that outlive the CLI").
 */
export type NativeServiceOptions = Omit<ServiceOptions, 'daemon'> & { daemon?: true | DaemonOptions | false | null };

/**
 * `NATIVE_SHELL_GEMINI_DAEMON`: `1` or `true` runs the drop-in's jobs in the user's
 * daemon, a path in the daemon listening on that socket; unset, empty, `0` or `false`:
 * in process. How a Gemini CLI run opts in without a code change (docs/gemini-compat.md).
 */
export function daemonFromEnv(value = process.env['NATIVE_SHELL_GEMINI_DAEMON']): true | DaemonOptions | undefined {
  const v = value?.trim();
  if (!v || v === '0' || v.toLowerCase() === 'false') return undefined;
  if (v === '1' || v.toLowerCase() === 'true') return true;
  return { socket: v };
}

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
