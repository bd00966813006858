// native-shell-service/gemini-compat: the static API of `@google/gemini-cli-core@0.61.0`'s
// ShellExecutionService, run by the native service. The Gemini CLI switches by changing
// the module it imports `ShellExecutionService` from; see docs/gemini-compat.md.
//
// Every execution is one native job. Callers still name it by its pid (upstream's key);
// the native handle behind it is available from `getHandle(pid)`.
import { mkdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve as resolvePath } from 'node:path';

import { BackgroundLog } from './background-log.js';
import { exactEnvironment, prepare } from './environment.js';
import { asError } from './errors.js';
import { Execution, MAX_SERIALIZED_LINES, PIPES_METHOD } from './execution.js';
import {
  type DaemonService,
  defaultNativeOptions,
  isDaemonClient,
  type JobService,
  loadAddon,
  type NativeService,
  type NativeServiceOptions,
  placementOf,
} from './native.js';
import { type Lifecycle, LocalLifecycle } from './lifecycle.js';
import type {
  AnsiOutput,
  BackgroundProcess,
  BackgroundProcessRecord,
  ShellExecutionConfig,
  ShellExecutionHandle,
  ShellExecutionResult,
  ShellOutputEvent,
} from './types.js';

export * from './types.js';
export * from './lifecycle.js';
export type { NativeServiceOptions } from './native.js';
export { RENDER_INTERVAL_MS, SCROLLBACK_LIMIT } from './execution.js';

export const GEMINI_CLI_IDENTIFICATION_ENV_VAR = 'GEMINI_CLI';
export const GEMINI_CLI_IDENTIFICATION_ENV_VAR_VALUE = '1';

const MAX_BACKGROUND_HISTORY = 100;

let nativeOptions: NativeServiceOptions = {};
/** The in-process service, made at its first job. */
let localService: NativeService | undefined;
/** The daemon client, made at the first job placed in the daemon. */
let daemonService: DaemonService | undefined;
/**
 * The default placement met a daemon it could not reach (no binary, a socket directory
 * refused): later jobs run in process without trying again, until `shutdown()`.
 */
let daemonUnreachable = false;

/**
 * Where this execution's job runs: in process, or in the per-user daemon, which then owns
 * it. A job cannot move between processes once it runs, and upstream's `execute` is not
 * told whether the command will be backgrounded (the CLI's shell tool calls
 * `background(pid)` after `delay_ms`), so the choice is made at the start, from the
 * configuration (`placementOf`): by default a pipes-mode job (the CLI's headless runs)
 * goes where it can outlive us, as upstream's detached child does.
 */
function placeJob(pty: boolean): { service: JobService; fallback: boolean } {
  const { daemon: configured, ...options } = { ...defaultNativeOptions(), ...nativeOptions };
  const placement = placementOf(configured);
  const Service = loadAddon().ShellExecutionService;
  if ((pty ? placement.pty : placement.pipes) === 'daemon' && !(placement.fallback && daemonUnreachable)) {
    // Its own session name: the in-process service's session directory is not shared.
    daemonService ??= new Service({ ...options, sessionId: `${options.sessionId}-daemon`, daemon: placement.daemon }) as DaemonService;
    return { service: daemonService, fallback: placement.fallback };
  }
  localService ??= new Service(options) as NativeService;
  return { service: localService, fallback: false };
}

/** Whether a start failed because no daemon could be reached or started (client/launch.ts). */
function daemonUnavailable(e: unknown): boolean {
  return (e as { code?: string } | null)?.code === 'DAEMON_UNAVAILABLE';
}

/**
 * The home the Gemini CLI keeps its state under: `GEMINI_CLI_HOME` when set (the CLI's
 * `homedir()` in gemini-cli-core's utils/paths), else the user's. Read on every call,
 * as upstream does, so a change of the variable moves the logs as it moves upstream's.
 */
function geminiHome(): string {
  return process.env['GEMINI_CLI_HOME'] || homedir();
}

/** Upstream's `Storage.getGlobalTempDir()`: the runtime directory's `tmp`. */
function globalTempDir(): string {
  const home = geminiHome();
  if (process.env['SANDBOX'] === 'sandbox-exec' && home) return join(home, '.cache', '.gemini', 'tmp');
  return join(home ? join(home, '.gemini') : join(tmpdir(), '.gemini'), 'tmp');
}

/** A command that could not start: upstream's pipes-mode shape (no pid, exit code 1). */
function failedResult(error: Error, pty: boolean): ShellExecutionResult {
  return {
    error,
    rawOutput: Buffer.from(''),
    output: '',
    exitCode: 1,
    signal: null,
    aborted: false,
    pid: undefined,
    executionMethod: pty ? 'none' : PIPES_METHOD,
  };
}

export class ShellExecutionService {
  private static jobs = new Map<number, Execution>();
  private static localLifecycle = new LocalLifecycle();
  private static lifecycle: Lifecycle = ShellExecutionService.localLifecycle;
  private static backgroundHistory = new Map<string, Map<number, BackgroundProcessRecord>>();

  /**
   * Options for the native services behind the static API (root, ioDir, sessionId,
   * maxJobs, and `daemon`: where jobs run, `placementOf`). Takes effect when a service is
   * first used, or after `shutdown()`.
   */
  static configure(options: NativeServiceOptions): void {
    nativeOptions = { ...options };
  }

  /**
   * Kills every job and releases the native service (a new one starts on next use). In
   * daemon mode the backgrounded jobs run on in the daemon, as upstream's outlive the
   * CLI; the others end here, as they would in process.
   */
  static async shutdown(): Promise<void> {
    const local = localService;
    const daemon = daemonService;
    localService = undefined;
    daemonService = undefined;
    daemonUnreachable = false;
    if (daemon) {
      const ending = [...this.jobs.values()].filter((job) => job.service === daemon && job.running && !job.backgrounded);
      await Promise.all(ending.map((job) => job.killNow()));
    }
    await Promise.all([local?.shutdown(), daemon?.shutdown()]);
  }

  /**
   * Reports executions to `lifecycle`: pass gemini-cli-core's `ExecutionLifecycleService`
   * so the Gemini CLI's background-task UI (which calls it directly) sees them. Without
   * an argument, the adapter's own lifecycle is used again. Affects later executions.
   */
  static useLifecycle(lifecycle?: Lifecycle): void {
    this.lifecycle = lifecycle ?? this.localLifecycle;
  }

  /** The lifecycle in use: `onBackground`/`onBackgroundComplete` live on the local one. */
  static getLifecycle(): Lifecycle {
    return this.lifecycle;
  }

  /** The native handle of the execution with this pid (handles are never reused). */
  static getHandle(pid: number): number | undefined {
    return this.jobs.get(pid)?.handle;
  }

  static getLogDir(): string {
    return join(globalTempDir(), 'background-processes');
  }

  static getLogFilePath(pid: number): string {
    return join(this.getLogDir(), `background-${pid}.log`);
  }

  /**
   * Runs `commandToExecute` with `bash -c` in `cwd`, in a PTY when `shouldUseNodePty`,
   * streaming events to `onOutputEvent`; resolves with the pid and a result promise.
   */
  static async execute(
    commandToExecute: string,
    cwd: string,
    onOutputEvent: (event: ShellOutputEvent) => void,
    abortSignal: AbortSignal,
    shouldUseNodePty: boolean,
    shellExecutionConfig: ShellExecutionConfig,
  ): Promise<ShellExecutionHandle> {
    const config = shellExecutionConfig;
    const pty = shouldUseNodePty;
    let cleanup: (() => void) | undefined;
    let started: { handle: number; pid: number | null; outputDir: string | null; error: string | null };
    let { service, fallback } = placeJob(pty);
    try {
      const prepared = await prepare(commandToExecute, resolvePath(cwd), config, pty);
      cleanup = prepared.cleanup;
      const directory = relative('/', resolvePath(prepared.cwd ?? cwd)) || '.';
      const start = (on: JobService) =>
        on.run(prepared.program, {
          args: prepared.args,
          env: exactEnvironment(prepared.env),
          clearEnv: true,
          mode: pty ? 'pty' : 'pipes',
          directory,
          cols: config.terminalWidth ?? 80,
          rows: config.terminalHeight ?? 30,
          scrollback: pty ? (config.maxSerializedLines ?? MAX_SERIALIZED_LINES) : 0,
          callbackDelayMs: 0,
          description: config.originalCommand ?? commandToExecute,
          // A daemon's job runs on when this process goes (docs/daemon.md, `keep`).
          ...(isDaemonClient(on) ? { keep: true } : {}),
        });
      try {
        started = await start(service);
      } catch (e) {
        if (!fallback || !daemonUnavailable(e)) throw e;
        // The default placement without a daemon: the command still runs, in process
        // (it then ends with this process, as it did before daemons were the default).
        daemonUnreachable = true;
        if (service === daemonService) {
          daemonService = undefined;
          service.shutdown().catch(() => undefined);
        }
        ({ service, fallback } = placeJob(pty));
        started = await start(service);
      }
    } catch (e) {
      cleanup?.();
      return { pid: undefined, result: Promise.resolve(failedResult(asError(e), pty)) };
    }
    if (started.pid === null) {
      cleanup?.();
      try {
        await service.removeProcess(started.handle);
      } catch {
        // already gone
      }
      return { pid: undefined, result: Promise.resolve(failedResult(new Error(started.error ?? 'spawn failed'), pty)) };
    }

    const job = new Execution(
      {
        service,
        pid: started.pid,
        handle: started.handle,
        pty,
        command: config.originalCommand ?? commandToExecute,
        sessionId: config.sessionId,
        config,
        onOutputEvent,
        abortSignal,
        lifecycle: this.lifecycle,
        cleanup,
      },
      {
        logFilePath: (pid) => this.getLogFilePath(pid),
        ended: (execution, exitCode, signal) => this.finishHistory(execution, exitCode, signal),
        forget: (execution) => this.jobs.delete(execution.pid),
      },
    );
    let result: Promise<ShellExecutionResult>;
    try {
      result = job.attach();
    } catch (e) {
      job.abandon();
      return { pid: undefined, result: Promise.resolve(failedResult(asError(e), pty)) };
    }
    this.jobs.set(job.pid, job);
    job.watchAbort();
    job.follow();
    return { pid: job.pid, result };
  }

  /** Records the exit of a backgrounded execution in its session's history. */
  private static finishHistory(job: Execution, exitCode: number | null, signal: number | null): void {
    const history = this.backgroundHistory.get(job.sessionId ?? 'default');
    const item = history?.get(job.pid);
    if (item) {
      item.status = 'exited';
      item.exitCode = exitCode ?? undefined;
      item.signal = signal ?? undefined;
      item.endTime = Date.now();
    }
  }

  // ---- the rest of the static API ----------------------------------------------------

  /** Writes to the job's terminal (PTY) or stdin (pipes, with `keepStdinOpen`). */
  static writeToPty(pid: number, input: string): void {
    this.lifecycleOf(pid).writeInput(pid, input);
  }

  /** True while the execution with this pid runs. */
  static isPtyActive(pid: number): boolean {
    return this.lifecycleOf(pid).isActive(pid);
  }

  /** Calls back once the execution exits; at once if it exited in the last 5 minutes. */
  static onExit(pid: number, callback: (exitCode: number, signal?: number) => void): () => void {
    return this.lifecycleOf(pid).onExit(pid, callback);
  }

  /**
   * Kills the execution's process group. As upstream, the result resolves at once as
   * cancelled (exit code 130, `aborted`), and subscribers get that exit.
   */
  static async kill(pid: number): Promise<void> {
    const job = this.jobs.get(pid);
    if (job) await job.closeLog();
    this.lifecycleOf(pid).kill(pid);
    // Resolve once the processes are gone, as upstream's (whose `isPtyActive` is then
    // false): the lifecycle's kill only starts the native one.
    await job?.killing();
  }

  /**
   * Resolves the execution's result now (`backgrounded: true`) and keeps it running;
   * its output goes on to `getLogFilePath(pid)` and it is listed for its session.
   */
  static background(pid: number, sessionId?: string, command?: string): void {
    const job = this.jobs.get(pid);
    const session = sessionId ?? job?.sessionId;
    if (!session) throw new Error('Session ID is required for background operations');
    if (!job || !job.running) return;
    const history = this.backgroundHistory.get(session) ?? new Map<number, BackgroundProcessRecord>();
    if (history.size >= MAX_BACKGROUND_HISTORY) {
      const oldest = history.keys().next().value;
      if (oldest !== undefined) history.delete(oldest);
    }
    history.set(pid, { command: command ?? job.command, status: 'running', startTime: Date.now() });
    this.backgroundHistory.set(session, history);
    job.sessionId = session;
    job.backgrounded = true;

    job.startLog(() => {
      mkdirSync(this.getLogDir(), { recursive: true, mode: 0o700 });
      return BackgroundLog.create(this.getLogFilePath(pid));
    });
    job.lifecycle.background(pid);
  }

  /** Streams the execution's events to `listener`, starting with the current output. */
  static subscribe(pid: number, listener: (event: ShellOutputEvent) => void): () => void {
    return this.lifecycleOf(pid).subscribe(pid, listener);
  }

  /** Resizes the job's terminal and sends subscribers the re-laid-out grid. */
  static resizePty(pid: number, cols: number, rows: number): void {
    const job = this.jobs.get(pid);
    if (!job?.running || !job.pty) return;
    const ended = (e: unknown): boolean => (e as { code?: string } | null)?.code === 'PROCESS_NOT_FOUND';
    let grid: ReturnType<Execution['resize']>;
    try {
      grid = job.resize(cols, rows);
    } catch (e) {
      if (ended(e)) return;
      throw e;
    }
    const send = (chunk: AnsiOutput): void => {
      if (job.running) job.lifecycle.emitEvent(pid, { type: 'data', chunk });
    };
    // A daemon's job answers later; an error then has no caller to reach.
    if (grid instanceof Promise) grid.then(send, () => undefined);
    else send(grid);
  }

  /**
   * Moves the job's viewport by `lines`. Upstream renders from fixed line ranges, so
   * scrolling changes no event there either; the offset is kept for parity only.
   */
  static scrollPty(pid: number, lines: number): void {
    const job = this.jobs.get(pid);
    if (!job?.running || !job.pty) return;
    job.scrollOffset = Math.min(0, job.scrollOffset + lines);
  }

  static listBackgroundProcesses(sessionId: string): BackgroundProcess[] {
    if (!sessionId) throw new Error('Session ID is required');
    const history = this.backgroundHistory.get(sessionId);
    if (!history) return [];
    return [...history.entries()].map(([pid, item]) => ({
      pid,
      command: item.command,
      status: item.status,
      exitCode: item.exitCode,
      signal: item.signal,
    }));
  }

  /**
   * Forgets the adapter's own bookkeeping (pid map, background history), as upstream's
   * does; running jobs still finish and report to their lifecycle. The local lifecycle
   * has its own `reset()`, like upstream's `ExecutionLifecycleService.resetForTest()`.
   */
  static resetForTest(): void {
    this.jobs.clear();
    this.backgroundHistory.clear();
  }

  private static lifecycleOf(pid: number): Lifecycle {
    return this.jobs.get(pid)?.lifecycle ?? this.lifecycle;
  }
}
