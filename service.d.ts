// The package entry's types (package.json "types"; written by hand, unlike the
// generated index.d.ts they extend). Everything of index.d.ts, with
// `ShellExecutionService`'s constructor overloaded on `daemon`: without it (or with
// `daemon: false`) the in-process service, typed exactly as generated; with it a daemon
// client whose methods that are synchronous in process return promises of the same
// values (docs/daemon.md).
import type * as Native from './index';
import type {
  CommandCheck,
  CommandPolicy,
  ContainmentMode,
  DaemonOptions,
  HistoryEntry,
  JobStatus,
  InteractionResult,
  KillOptions,
  KillResult,
  OutputChunk,
  OutputEvent,
  OutputOptions,
  PackedScreen,
  ProcessInfo,
  ReadOutputOptions,
  ResultOptions,
  RunOptions,
  RunResult,
  Screen,
  ScreenOptions,
  SendInputOptions,
  ServiceOptions,
  StartedJob,
  WaitOptions,
} from './index';

export * from './index';

/** The daemon a client is connected to. */
export interface DaemonInfo {
  pid: number;
  /** The socket's path; for a client of `daemon.url`, the URL's origin. */
  socket: string;
  version: string;
}

/**
 * A job the daemon no longer holds because a client removed it (`removeProcess`; the
 * MCP tools remove each finished job once the model has seen its end), as the daemon
 * remembers it: the newest 1000 removed jobs, for 24 hours, while the daemon lives
 * (docs/daemon.md, "Removed jobs").
 */
export interface EndedJob {
  /** The daemon's handle (what `getResult` no longer answers for). */
  handle: number;
  /** The command (its first 1024 bytes; the job's `info.json` has all of it). */
  command: string;
  /** As it was removed; `killed` for a job removed while it ran (removal kills it). */
  status: JobStatus;
  exitCode: number | null;
  signal: number | null;
  startedAt: number;
  removedAt: number;
  /** The job's folder (`stdout.txt`, `stderr.txt`, `info.json`) when it was removed; the output retention may prune it later. */
  outputDir: string;
}

export interface EndedJobsOptions {
  /** Only this handle's record. */
  handle?: number;
  /** At most this many, newest first. */
  limit?: number;
}

export interface ShutdownOptions {
  /**
   * Daemon mode: end the jobs this client started too (default: they run on, but those
   * started with `keep: false`). In process every job ends at `shutdown()` anyway.
   */
  killJobs?: boolean;
}

/**
 * The in-process service: the generated class, and `daemon` (always `null`; optional in
 * the type so an instance of the generated loader, index.js, is one too).
 */
export interface ShellExecutionService extends Native.ShellExecutionService {
  readonly daemon?: null;
  shutdown(options?: ShutdownOptions | null): Promise<void>;
}

/**
 * A daemon client (`daemon: true | { socket, idleExitMs }`): the same methods, results
 * and error codes; what is synchronous in process returns a promise of it here, and the
 * getters are promises of the values the daemon gives when it opened the service.
 * Handles are the daemon's: valid in every later client of the same daemon.
 */
export interface DaemonShellExecutionService {
  /** `{ pid, socket, version }` once connected (the connection is made in the background); `null` before and after a loss. */
  readonly daemon: DaemonInfo | null;
  readonly outputDir: Promise<string>;
  readonly projectRoot: Promise<string>;
  readonly containment: Promise<ContainmentMode>;
  readonly sessionId: Promise<string>;
  run(command: string, options?: RunOptions | null): Promise<RunResult>;
  start(command: string, options?: RunOptions | null): Promise<StartedJob>;
  sendInput(handle: number, input: string, options?: SendInputOptions | null): Promise<InteractionResult>;
  waitFor(handle: number, options?: WaitOptions | null): Promise<InteractionResult>;
  writeToPty(handle: number, data: string | Buffer): Promise<void>;
  getResult(handle: number, options?: ResultOptions | null): Promise<RunResult>;
  isPtyActive(handle: number): Promise<boolean>;
  /** Every job of the daemon under this service's project root, whoever started it (`attached`). */
  getActiveProcesses(): Promise<ProcessInfo[]>;
  getProcessOutput(handle: number, options?: OutputOptions | null): Promise<string>;
  /** Settles with the function that stops the calls (or rejects, e.g. `PROCESS_NOT_FOUND`). */
  onOutput(handle: number, listener: (event: OutputEvent) => void): Promise<() => void>;
  readOutput(handle: number, options?: ReadOutputOptions | null): Promise<OutputChunk>;
  getScreen(handle: number, options?: ScreenOptions | null): Promise<Screen>;
  getScreenPacked(handle: number, options?: ScreenOptions | null): Promise<PackedScreen>;
  readScreenPacked(handle: number, options?: ScreenOptions | null): Promise<PackedScreen>;
  resizePty(handle: number, cols: number, rows: number): Promise<void>;
  kill(handle: number, options?: KillOptions | null): Promise<KillResult>;
  removeProcess(handle: number): Promise<void>;
  getExecutionHistory(limit?: number | null): Promise<HistoryEntry[]>;
  clearExecutionHistory(): Promise<number>;
  /**
   * Daemon mode only: the jobs of this project root that clients removed, newest first,
   * with their folders, so their output stays readable by handle (docs/daemon.md).
   */
  getEndedJobs(options?: EndedJobsOptions | null): Promise<EndedJob[]>;
  /** Checked here, no daemon needed (as the module's `checkCommand`). */
  checkCommand(command: string, policy?: CommandPolicy | null): CommandCheck;
  /** Closes this client; its jobs run on unless `killJobs` (docs/daemon.md). */
  shutdown(options?: ShutdownOptions | null): Promise<void>;
}

/** Either kind of service: what code that takes any service (the tools) is written against, awaiting each call. */
export type AnyShellExecutionService = ShellExecutionService | DaemonShellExecutionService;

export interface ShellExecutionServiceConstructor {
  new (options: ServiceOptions & { daemon: true | DaemonOptions }): DaemonShellExecutionService;
  new (options?: (ServiceOptions & { daemon?: false | null }) | null): ShellExecutionService;
  new (options?: ServiceOptions | null): AnyShellExecutionService;
  readonly prototype: ShellExecutionService;
}

export declare const ShellExecutionService: ShellExecutionServiceConstructor;
export type JsShellExecutionService = ShellExecutionService;
export declare const JsShellExecutionService: ShellExecutionServiceConstructor;
