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
 * The service's options. `daemon` (adapter extension): `true` or the daemon's options:
 * every execution's job belongs to the per-user daemon, so a backgrounded job outlives
 * this process; `false` or `null`: every job runs in process; unset: the environment,
 * else pipes-mode jobs in the daemon and PTY ones in process (`placementOf`;
 * docs/gemini-compat.md, "Jobs that outlive the CLI").
 */
export type NativeServiceOptions = Omit<ServiceOptions, 'daemon'> & { daemon?: true | DaemonOptions | false | null };

/**
 * Where an execution's job runs. `pty`/`pipes`: in process or in the daemon, by the mode
 * the caller asked for (`shouldUseNodePty`); `daemon`: which daemon; `fallback`: when
 * that daemon cannot be reached, run in process instead of failing (the default only:
 * a daemon the caller asked for by name fails the execution as any other start error).
 */
export interface Placement {
  pty: 'process' | 'daemon';
  pipes: 'process' | 'daemon';
  daemon: true | DaemonOptions;
  fallback: boolean;
}

/**
 * The default: pipes-mode executions in the user's daemon, PTY ones in process. The
 * Gemini CLI passes `shouldUseNodePty = config.isInteractiveShellEnabled()`, false in
 * every headless (`-p`) run, and upstream runs such commands as detached children that
 * outlive the CLI; its PTY children get the terminal's hang-up when the CLI exits, as
 * an in-process job ends with it (docs/gemini-compat.md, "Jobs that outlive the CLI").
 */
const BY_MODE: Placement = { pty: 'process', pipes: 'daemon', daemon: true, fallback: true };

function everything(where: 'process' | 'daemon', daemon: true | DaemonOptions = true): Placement {
  return { pty: where, pipes: where, daemon, fallback: false };
}

/**
 * `NATIVE_SHELL_GEMINI_DAEMON`: `1` or `true` runs every job of the drop-in in the
 * user's daemon, a path in the daemon listening on that socket; `0` or `false` runs them
 * all in process; unset or empty: the default placement above. How a Gemini CLI run
 * chooses without a code change (docs/gemini-compat.md).
 */
export function placementFromEnv(value = process.env['NATIVE_SHELL_GEMINI_DAEMON']): Placement {
  const v = value?.trim();
  if (!v) return BY_MODE;
  const lower = v.toLowerCase();
  if (v === '0' || lower === 'false') return everything('process');
  if (v === '1' || lower === 'true') return everything('daemon');
  return everything('daemon', { socket: v });
}

/** The placement from `configure({ daemon })`: set wins over the environment. */
export function placementOf(configured: NativeServiceOptions['daemon']): Placement {
  if (configured === undefined) return placementFromEnv();
  return configured ? everything('daemon', configured) : everything('process');
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
