// native-shell-service/gemini-compat: the static API of `@google/gemini-cli-core@0.61.0`'s
// ShellExecutionService, run by the native service. The Gemini CLI switches by changing
// the module it imports `ShellExecutionService` from; see docs/gemini-compat.md.
//
// Every execution is one native job. Callers still name it by its pid (upstream's key);
// the native handle behind it is available from `getHandle(pid)`.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve as resolvePath } from 'node:path';

import { exactEnvironment, prepare } from './environment.js';
import { defaultNativeOptions, loadAddon, type NativeService, type NativeServiceOptions } from './native.js';
import { type Lifecycle, LocalLifecycle } from './lifecycle.js';
import { RenderPacer } from './pacer.js';
import { screenGrid } from './screen.js';
import { readAll, readNew, type TextCursor } from './text.js';
import type {
  AnsiOutput,
  BackgroundProcess,
  BackgroundProcessRecord,
  ExecutionMethod,
  ShellExecutionConfig,
  ShellExecutionHandle,
  ShellExecutionResult,
  ShellOutputEvent,
} from './types.js';
import { gridLines, looksBinary, pipesOutput, ptyOutput } from './views.js';

export * from './types.js';
export * from './lifecycle.js';
export type { NativeServiceOptions } from './native.js';

export const GEMINI_CLI_IDENTIFICATION_ENV_VAR = 'GEMINI_CLI';
export const GEMINI_CLI_IDENTIFICATION_ENV_VAR_VALUE = '1';
export const SCROLLBACK_LIMIT = 300000;

/** Upstream's cadence for `data` events (one render per 68 ms at most). */
export const RENDER_INTERVAL_MS = 68;
/** Upstream's cap on a pipes-mode result (it keeps the last 16 MB). */
const MAX_PIPES_OUTPUT = 16 * 1024 * 1024;
const MAX_BACKGROUND_HISTORY = 100;
/** Bytes upstream sniffs for binary output. */
const SNIFF_BYTES = 512;
/** Upstream's default for `maxSerializedLines`. */
const MAX_SERIALIZED_LINES = 2000;
const PTY_METHOD: ExecutionMethod = 'lydell-node-pty';
const PIPES_METHOD: ExecutionMethod = 'child_process';

type Listener = (event: ShellOutputEvent) => void;

interface Job {
  /** The native service that runs this job (a shutdown starts a new one for later jobs). */
  service: NativeService;
  pid: number;
  handle: number;
  pty: boolean;
  command: string;
  sessionId: string | undefined;
  config: ShellExecutionConfig;
  onOutputEvent: Listener;
  abortSignal: AbortSignal;
  outputDir: string | null;
  /** Where results and events are reported (fixed for the job's life). */
  lifecycle: Lifecycle;
  running: boolean;
  /** The exit is being reported (from the subscription's last call, or its failure). */
  finishing: boolean;
  /** Raw bytes the process has written, as of the last notification. */
  seenBytes: number;
  binary: 'unknown' | 'text' | 'binary';
  /** PTY: output has started (a non-blank line was seen), so renders are emitted. */
  started: boolean;
  /** Pipes: the text handed out in `data` events so far. */
  streamed: string;
  /** Raw bytes reported by the last `binary_progress` event. */
  progressBytes: number;
  /** PTY: the last grid emitted (what upstream's terminal showed before binary came). */
  lastGrid: AnsiOutput;
  /** Pipes: where the `data` events have read the committed text up to. */
  streamCursor: TextCursor;
  log: WriteStream | undefined;
  /** Where the background log has read the committed text up to. */
  logCursor: TextCursor;
  pacer: RenderPacer | undefined;
  unsubscribe: (() => void) | undefined;
  scroll: number;
  cleanup: (() => void) | undefined;
  abortHandler: (() => void) | undefined;
}

let nativeOptions: NativeServiceOptions = {};
let nativeService: NativeService | undefined;

function native(): NativeService {
  if (!nativeService) {
    nativeService = new (loadAddon().ShellExecutionService)({ ...defaultNativeOptions(), ...nativeOptions });
  }
  return nativeService;
}

function globalTempDir(): string {
  const home = homedir();
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

/** Upstream's text for a finished background command, with its own truncation. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}...[TRUNCATED]`;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

export class ShellExecutionService {
  private static jobs = new Map<number, Job>();
  private static localLifecycle = new LocalLifecycle();
  private static lifecycle: Lifecycle = ShellExecutionService.localLifecycle;
  private static backgroundHistory = new Map<string, Map<number, BackgroundProcessRecord>>();

  /**
   * Options for the native service behind the static API (root, ioDir, sessionId,
   * maxJobs). Takes effect when the service is first used, or after `shutdown()`.
   */
  static configure(options: NativeServiceOptions): void {
    nativeOptions = { ...options };
  }

  /** Kills every job and releases the native service (a new one starts on next use). */
  static async shutdown(): Promise<void> {
    const service = nativeService;
    nativeService = undefined;
    if (service) await service.shutdown();
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
    const service = native();
    try {
      const prepared = await prepare(commandToExecute, resolvePath(cwd), config, pty);
      cleanup = prepared.cleanup;
      const directory = relative('/', resolvePath(prepared.cwd ?? cwd)) || '.';
      started = await service.run(prepared.program, {
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
      });
    } catch (e) {
      cleanup?.();
      return { pid: undefined, result: Promise.resolve(failedResult(asError(e), pty)) };
    }
    if (started.pid === null) {
      cleanup?.();
      try {
        service.removeProcess(started.handle);
      } catch {
        // already gone
      }
      return { pid: undefined, result: Promise.resolve(failedResult(new Error(started.error ?? 'spawn failed'), pty)) };
    }

    const job: Job = {
      service,
      pid: started.pid,
      handle: started.handle,
      pty,
      command: config.originalCommand ?? commandToExecute,
      sessionId: config.sessionId,
      config,
      onOutputEvent,
      abortSignal,
      outputDir: started.outputDir,
      lifecycle: this.lifecycle,
      running: true,
      finishing: false,
      seenBytes: 0,
      binary: 'unknown',
      started: false,
      streamed: '',
      progressBytes: 0,
      lastGrid: [],
      streamCursor: { offset: 0 },
      log: undefined,
      logCursor: { offset: 0 },
      pacer: undefined,
      unsubscribe: undefined,
      scroll: 0,
      cleanup,
      abortHandler: undefined,
    };
    let result: Promise<ShellExecutionResult>;
    try {
      result = job.lifecycle.attachExecution(job.pid, this.registration(job)).result;
    } catch (e) {
      job.service.kill(job.handle, { graceMs: 0 }).catch(() => undefined);
      cleanup?.();
      return { pid: undefined, result: Promise.resolve(failedResult(asError(e), pty)) };
    }
    this.jobs.set(job.pid, job);

    const onAbort = (): void => {
      if (job.running) job.service.kill(job.handle, { graceMs: 200 }).catch(() => undefined);
    };
    job.abortHandler = onAbort;
    if (abortSignal.aborted) onAbort();
    else abortSignal.addEventListener('abort', onAbort, { once: true });

    this.follow(job);
    return { pid: job.pid, result };
  }

  private static registration(job: Job): Parameters<Lifecycle['attachExecution']>[1] {
    const behavior = job.config.backgroundCompletionBehavior ?? 'silent';
    return {
      executionMethod: job.pty ? PTY_METHOD : PIPES_METHOD,
      getBackgroundOutput: () => (job.running ? this.currentOutput(job) : ''),
      getSubscriptionSnapshot: () => {
        if (!job.running || job.binary === 'binary') return undefined;
        if (!job.pty) return job.streamed || undefined;
        const { grid } = this.grid(job);
        return grid.length > 0 ? grid : undefined;
      },
      writeInput: (input) => {
        if (!job.running) return;
        try {
          job.service.writeToPty(job.handle, input);
        } catch {
          // exited meanwhile
        }
      },
      kill: () => {
        if (job.running) job.service.kill(job.handle, { graceMs: 0 }).catch(() => undefined);
      },
      isActive: () => job.running,
      formatInjection: (output, error) => {
        const status = error ? `with error: ${error.message}` : 'successfully';
        const head = `[Background command completed ${status}. Output saved to ${this.getLogFilePath(job.pid)}]`;
        return behavior === 'inject' ? `${head}\n\n${truncate(output, 5000)}` : head;
      },
      completionBehavior: behavior,
    };
  }

  // ---- output ----------------------------------------------------------------------

  /**
   * Follows the job: output notifications drive the renders (paced as upstream's), and
   * their last call reports the exit. The subscription keeps Node alive until then, as
   * upstream's child process does (index.d.ts, `onOutput`). A service `shutdown()`
   * kills the job, whose exit then comes the same way.
   */
  private static follow(job: Job): void {
    const pacer = new RenderPacer(RENDER_INTERVAL_MS, () => {
      if (job.finishing) return;
      try {
        this.render(job, false);
      } catch {
        // the job was removed meanwhile
      }
    });
    job.pacer = pacer;
    try {
      job.unsubscribe = job.service.onOutput(job.handle, (event) => {
        job.seenBytes = event.totalBytes;
        if (event.exited) this.finish(job, { exitCode: event.exitCode, signal: event.signal, error: null });
        else pacer.news();
      });
      // Output that came before the subscription notifies nobody: look once now.
      job.seenBytes = job.service.getResult(job.handle, { maxOutputSize: 1 }).totalBytes;
      if (job.seenBytes > 0) pacer.news();
    } catch (e) {
      // The job is gone already: nothing will report its exit but this.
      this.finish(job, { exitCode: null, signal: null, error: asError(e) });
    }
  }

  private static emit(job: Job, event: ShellOutputEvent): void {
    job.onOutputEvent(event);
    job.lifecycle.emitEvent(job.pid, event);
  }

  /** Decides text or binary from the first bytes, as upstream does. */
  private static sniff(job: Job, final: boolean): void {
    if (job.binary !== 'unknown' || job.seenBytes === 0) return;
    const raw = job.service.getProcessOutput(job.handle, { view: 'raw' });
    const head = Buffer.from(raw.slice(0, SNIFF_BYTES * 2), 'utf8');
    if (looksBinary(head, job.pty)) {
      job.binary = 'binary';
      this.emit(job, { type: 'binary_detected' });
    } else if (final || head.length >= SNIFF_BYTES) {
      job.binary = 'text';
    }
  }

  /** The grid a PTY job shows, from the native screen (see compat/screen.ts). */
  private static grid(job: Job): { grid: AnsiOutput; blank: boolean } {
    const maxLines = job.config.maxSerializedLines ?? MAX_SERIALIZED_LINES;
    // On the alternate screen the native screen has no scrollback, as upstream's
    // terminal (the corpus case 'ends on the alternate screen').
    const screen = job.service.getScreen(job.handle, { scrollback: maxLines });
    return screenGrid(screen, {
      maxLines,
      showColor: !!job.config.showColor,
      trim: !job.config.disableDynamicLineTrimming,
    });
  }

  private static render(job: Job, final: boolean): void {
    this.sniff(job, final);
    if (job.binary === 'binary') {
      if (job.seenBytes !== job.progressBytes) {
        job.progressBytes = job.seenBytes;
        this.emit(job, { type: 'binary_progress', bytesReceived: job.seenBytes });
      }
      return;
    }
    if (job.log) {
      const fresh = readNew(job.service, job.handle, job.logCursor);
      if (fresh) job.log.write(fresh);
    }
    if (job.pty) {
      const { grid, blank } = this.grid(job);
      // Upstream waits for non-blank output before its first render, unless told not
      // to trim (then every render is sent).
      if (!job.started && !job.config.disableDynamicLineTrimming) {
        if (blank) return;
        job.started = true;
      }
      job.lastGrid = grid;
      this.emit(job, { type: 'data', chunk: grid });
    } else {
      const fresh = readNew(job.service, job.handle, job.streamCursor);
      if (fresh) {
        job.streamed += fresh;
        // Kept for subscription snapshots and `background`; bounded like upstream's buffer.
        if (job.streamed.length > MAX_PIPES_OUTPUT) job.streamed = job.streamed.slice(-MAX_PIPES_OUTPUT);
        this.emit(job, { type: 'data', chunk: fresh });
      }
    }
  }

  /** Lines upstream's terminal buffer holds: the scrollback plus the screen. */
  private static bufferLines(job: Job): number {
    return (job.config.scrollback ?? SCROLLBACK_LIMIT) + (job.config.terminalHeight ?? 30);
  }

  private static currentOutput(job: Job): string {
    if (job.pty) {
      // The text view so far, the lines not yet committed included.
      const text = job.service.getProcessOutput(job.handle, { view: 'text' });
      return ptyOutput(text, this.bufferLines(job));
    }
    return job.streamed;
  }

  // ---- exit ------------------------------------------------------------------------

  private static finish(job: Job, exit: { exitCode: number | null; signal: number | null; error: Error | null }): void {
    if (job.finishing) return;
    job.finishing = true;
    job.pacer?.stop();
    job.unsubscribe?.();
    void this.report(job, exit);
  }

  private static async report(
    job: Job,
    exit: { exitCode: number | null; signal: number | null; error: Error | null },
  ): Promise<void> {
    let { exitCode, signal, error } = exit;
    job.running = false;
    if (job.abortHandler) job.abortSignal.removeEventListener('abort', job.abortHandler);
    job.cleanup?.();

    let output = '';
    let ansiOutput: AnsiOutput | undefined;
    try {
      const info = job.service.getResult(job.handle, { maxOutputSize: 1 });
      job.seenBytes = info.totalBytes;
      this.render(job, true);
      if (job.binary === 'binary') {
        output = job.pty ? gridLines(job.lastGrid) : pipesOutput(job.streamed);
      } else {
        const text = readAll(job.service, job.handle);
        if (job.pty) {
          output = ptyOutput(text, this.bufferLines(job));
        } else {
          output = pipesOutput(text.length > MAX_PIPES_OUTPUT ? text.slice(text.length - MAX_PIPES_OUTPUT) : text);
          if (text.length > MAX_PIPES_OUTPUT) {
            output += `\n[GEMINI_CLI_WARNING: Output truncated. The buffer is limited to ${MAX_PIPES_OUTPUT / (1024 * 1024)}MB.]`;
          }
        }
      }
      if (job.pty) ansiOutput = this.grid(job).grid;
    } catch (e) {
      error ??= asError(e);
    }

    // node-pty reports signal 0 for a normal exit and exit code 0 for a signalled one;
    // the PTY path keeps that convention so results compare equal to upstream's.
    if (job.pty) {
      exitCode = signal !== null ? 0 : exitCode;
      signal = signal ?? 0;
    }
    job.onOutputEvent({ type: 'exit', exitCode, signal });
    this.finishHistory(job, exitCode, signal);
    await this.closeLog(job);

    const result: ShellExecutionResult = {
      rawOutput: Buffer.from(''),
      output,
      ...(job.pty ? { ansiOutput: ansiOutput ?? [] } : {}),
      exitCode,
      signal,
      error,
      aborted: job.abortSignal.aborted,
      pid: job.pid,
      executionMethod: job.pty ? PTY_METHOD : PIPES_METHOD,
    };
    this.jobs.delete(job.pid);
    job.lifecycle.completeWithResult(job.pid, result);
    try {
      job.service.removeProcess(job.handle);
    } catch {
      // already gone (service shut down)
    }
  }

  private static finishHistory(job: Job, exitCode: number | null, signal: number | null): void {
    const history = this.backgroundHistory.get(job.sessionId ?? 'default');
    const item = history?.get(job.pid);
    if (item) {
      item.status = 'exited';
      item.exitCode = exitCode ?? undefined;
      item.signal = signal ?? undefined;
      item.endTime = Date.now();
    }
  }

  private static async closeLog(job: Job): Promise<void> {
    const log = job.log;
    job.log = undefined;
    if (log) await new Promise<void>((r) => log.end(() => r()));
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
    if (job) await this.closeLog(job);
    this.lifecycleOf(pid).kill(pid);
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

    if (!job.log) {
      try {
        mkdirSync(this.getLogDir(), { recursive: true, mode: 0o700 });
        const log = createWriteStream(this.getLogFilePath(pid), { flags: 'wx' });
        log.on('error', () => undefined);
        job.log = log;
        const fresh = readNew(job.service, job.handle, job.logCursor);
        if (fresh) log.write(fresh);
      } catch {
        // logging is best effort, as upstream
      }
    }
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
    try {
      job.service.resizePty(job.handle, cols, rows);
    } catch (e) {
      if ((e as { code?: string }).code === 'PROCESS_NOT_FOUND') return;
      throw e;
    }
    job.lifecycle.emitEvent(pid, { type: 'data', chunk: this.grid(job).grid });
  }

  /**
   * Moves the job's viewport by `lines`. Upstream renders from fixed line ranges, so
   * scrolling changes no event there either; the offset is kept for parity only.
   */
  static scrollPty(pid: number, lines: number): void {
    const job = this.jobs.get(pid);
    if (!job?.running || !job.pty) return;
    job.scroll = Math.min(0, job.scroll + lines);
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
