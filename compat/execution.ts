// One execution of the drop-in: the native job behind it and everything the adapter
// keeps for it while it runs — the paced renders, the binary sniffing, the text handed
// out so far, the background log — and the report of its exit to its lifecycle. The
// static API (gemini-compat.ts) creates one per `execute`, keeps them by pid and calls
// them; what spans executions (the native service, the pid map, the background
// history) stays there and is reached through `ExecutionHooks`.
import { setImmediate as nextTurn } from 'node:timers/promises';

import { type BackgroundLog, keepEnd, truncate } from './background-log.js';
import { asError, quietly } from './errors.js';

import { isDaemonClient, type JobService, type NativePackedScreen, type NativeService } from './native.js';
import type { Lifecycle } from './lifecycle.js';
import { RenderPacer } from './pacer.js';
import { readPending } from './pending.js';
import { screenGrid, unpackScreen } from './screen.js';
import { CharTail, LineTail } from './tail.js';
import { readLastLines, readPaced, readSlice, type TextCursor } from './text.js';
import type { AnsiOutput, ExecutionMethod, ShellExecutionConfig, ShellExecutionResult, ShellOutputEvent } from './types.js';
import { gridLines, looksBinary, ptyOutput } from './views.js';

export const SCROLLBACK_LIMIT = 300000;
/** Upstream's cadence for `data` events (one render per 68 ms at most). */
export const RENDER_INTERVAL_MS = 68;
/** Upstream's cap on a pipes-mode result (it keeps the last 16 MB). */
const MAX_PIPES_OUTPUT = 16 * 1024 * 1024;
/** Bytes upstream sniffs for binary output. */
const SNIFF_BYTES = 512;
/** Upstream's default for `maxSerializedLines`. */
export const MAX_SERIALIZED_LINES = 2000;
export const PTY_METHOD: ExecutionMethod = 'lydell-node-pty';
export const PIPES_METHOD: ExecutionMethod = 'child_process';

type Listener = (event: ShellOutputEvent) => void;

/** How the job ended, as its subscription's last call (or a failure) told it. */
interface ExitNews {
  exitCode: number | null;
  signal: number | null;
  error: Error | null;
  /** Bytes of committed text at the exit, when the subscription said. */
  textLength?: number;
}

/** What an execution is, fixed when its job has started. */
export interface ExecutionStart {
  /**
   * The native service that runs this job (a shutdown starts a new one for later jobs):
   * in process, or a client of the daemon that owns the job.
   */
  service: JobService;
  pid: number;
  handle: number;
  pty: boolean;
  command: string;
  sessionId: string | undefined;
  config: ShellExecutionConfig;
  onOutputEvent: Listener;
  abortSignal: AbortSignal;
  /** Where results and events are reported (fixed for the job's life). */
  lifecycle: Lifecycle;
  cleanup: (() => void) | undefined;
}

/** What an execution needs of the static API that owns it. */
export interface ExecutionHooks {
  /** Where a backgrounded execution's output goes (upstream's path for its pid). */
  logFilePath(pid: number): string;
  /** The exit is known: record it in the background history. */
  ended(execution: Execution, exitCode: number | null, signal: number | null): void;
  /** The result is about to be reported: stop naming the execution by its pid. */
  forget(execution: Execution): void;
}

export class Execution {
  readonly service: JobService;
  /** The in-process service, whose reads answer at once; undefined for a daemon's job. */
  private readonly local: NativeService | undefined;
  readonly pid: number;
  readonly handle: number;
  readonly pty: boolean;
  readonly command: string;
  sessionId: string | undefined;
  readonly config: ShellExecutionConfig;
  readonly lifecycle: Lifecycle;
  running = true;
  /** `background()` was called: in daemon mode the job outlives the drop-in's `shutdown()`. */
  backgrounded = false;
  /** Upstream's viewport offset, kept for parity only (see `scroll`). */
  scrollOffset = 0;
  private readonly onOutputEvent: Listener;
  private readonly abortSignal: AbortSignal;
  /** The exit is being reported (from the subscription's last call, or its failure). */
  private finishing = false;
  /** PTY: the screen read off the JS thread for a paced render, while it runs. */
  private screenRead: Promise<void> | undefined;
  /** PTY: a paced render came while `screenRead` ran. */
  private screenAgain = false;
  /** Raw bytes the process has written, as of the last notification. */
  private seenBytes = 0;
  private binary: 'unknown' | 'text' | 'binary' = 'unknown';
  /** PTY: output has started (a non-blank line was seen), so renders are emitted. */
  private started = false;
  /** Pipes: the text handed out in `data` events so far (its last 16 MB, as upstream's buffer). */
  private readonly streamed = new CharTail(MAX_PIPES_OUTPUT);
  /** Pipes: a `data` event's text had a gap marker (bytes lost from memory and file). */
  private streamGap = false;
  /**
   * The reads still to do after a render (the stream's and the log's), a slice per
   * turn of the event loop (see `drain`); set while they run.
   */
  private draining: Promise<void> | undefined;
  /** Raw bytes reported by the last `binary_progress` event. */
  private progressBytes = 0;
  /** PTY: the last grid emitted (what upstream's terminal showed before binary came). */
  private lastGrid: AnsiOutput = [];
  /** Pipes: where the `data` events have read the committed text up to. */
  private readonly streamCursor: TextCursor = { offset: 0 };
  private log: BackgroundLog | undefined;
  /** The last characters of the committed text in the log (checks where pending text starts). */
  private logEnd = '';
  /** A read of the pending text is under way (`syncPending`). */
  private pendingRead = false;
  /** Where the background log has read the committed text up to. */
  private readonly logCursor: TextCursor = { offset: 0 };
  private pacer: RenderPacer | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly cleanup: (() => void) | undefined;
  private abortHandler: (() => void) | undefined;
  /** The `killNow` under way: settles once the job's processes are gone. */
  private killed: Promise<void> | undefined;

  constructor(
    start: ExecutionStart,
    private readonly hooks: ExecutionHooks,
  ) {
    this.service = start.service;
    this.local = isDaemonClient(start.service) ? undefined : (start.service as NativeService);
    this.pid = start.pid;
    this.handle = start.handle;
    this.pty = start.pty;
    this.command = start.command;
    this.sessionId = start.sessionId;
    this.config = start.config;
    this.onOutputEvent = start.onOutputEvent;
    this.abortSignal = start.abortSignal;
    this.lifecycle = start.lifecycle;
    this.cleanup = start.cleanup;
  }

  /** Registers with the lifecycle; returns the promise of the execution's result. */
  attach(): Promise<ShellExecutionResult> {
    return this.lifecycle.attachExecution(this.pid, this.registration()).result;
  }

  /** A failed `attach`: the job is killed and its preparations undone. */
  abandon(): void {
    quietly(() => this.service.kill(this.handle, { graceMs: 0 }));
    this.cleanup?.();
  }

  /**
   * Ends the job's processes at once (SIGKILL); `killed` settles once they are gone
   * and reaped (the native kill waits for that), so a caller awaiting it no longer
   * finds the pid alive (`isPtyActive` falls back to `process.kill(pid, 0)` in
   * upstream's lifecycle once the execution is settled).
   */
  killNow(): Promise<void> {
    this.killed ??= this.service.kill(this.handle, { graceMs: 0 }).then(
      () => undefined,
      () => undefined,
    );
    return this.killed;
  }

  /** The kill under way (`killNow`), if any. */
  killing(): Promise<void> | undefined {
    return this.killed;
  }

  /** Kills the job when the caller aborts (now, if it aborted already). */
  watchAbort(): void {
    const onAbort = (): void => {
      if (this.running) this.service.kill(this.handle, { graceMs: 200 }).catch(() => undefined);
    };
    this.abortHandler = onAbort;
    if (this.abortSignal.aborted) onAbort();
    else this.abortSignal.addEventListener('abort', onAbort, { once: true });
  }

  private registration(): Parameters<Lifecycle['attachExecution']>[1] {
    const behavior = this.config.backgroundCompletionBehavior ?? 'silent';
    return {
      executionMethod: this.pty ? PTY_METHOD : PIPES_METHOD,
      getBackgroundOutput: () => (this.running ? this.currentOutput() : ''),
      getSubscriptionSnapshot: () => {
        if (!this.running || this.binary === 'binary') return undefined;
        if (!this.pty) return this.streamed.text() || undefined;
        const grid = this.shownGrid();
        return grid.length > 0 ? grid : undefined;
      },
      writeInput: (input) => {
        if (this.running) quietly(() => this.service.writeToPty(this.handle, input));
      },
      kill: () => {
        if (this.running) this.killNow();
      },
      isActive: () => this.running,
      formatInjection: (output, error) => {
        const status = error ? `with error: ${error.message}` : 'successfully';
        const head = `[Background command completed ${status}. Output saved to ${this.hooks.logFilePath(this.pid)}]`;
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
  follow(): void {
    const pacer = new RenderPacer(RENDER_INTERVAL_MS, () => {
      if (this.finishing) return;
      if (this.pty && this.binary !== 'binary') this.renderOffThread();
      else this.render(false).catch(() => undefined); // the job was removed meanwhile
    });
    this.pacer = pacer;
    const gone = (e: unknown): void => {
      // The job is gone already: nothing will report its exit but this.
      this.finish({ exitCode: null, signal: null, error: asError(e) });
    };
    try {
      const unsubscribe = this.service.onOutput(this.handle, (event) => {
        this.seenBytes = event.totalBytes;
        if (event.exited) {
          this.finish({ exitCode: event.exitCode, signal: event.signal, error: null, textLength: event.textLength });
        }
        else pacer.news();
      });
      if (unsubscribe instanceof Promise) {
        // A daemon's: the events may come before the subscription's reply.
        unsubscribe.then((off) => (this.finishing ? off() : (this.unsubscribe = off)), gone);
      } else this.unsubscribe = unsubscribe;
      // Output that came before the subscription notifies nobody: look once now.
      const look = (info: { totalBytes: number }): void => {
        this.seenBytes = Math.max(this.seenBytes, info.totalBytes);
        if (this.seenBytes > 0 && !this.finishing) pacer.news();
      };
      const info = this.service.getResult(this.handle, { maxOutputSize: 1 });
      if (info instanceof Promise) info.then(look, () => undefined);
      else look(info);
    } catch (e) {
      gone(e);
    }
  }

  private emit(event: ShellOutputEvent): void {
    this.onOutputEvent(event);
    this.lifecycle.emitEvent(this.pid, event);
  }

  /** Decides text or binary from the first bytes, as upstream does. */
  private async sniff(final: boolean): Promise<void> {
    if (this.binary !== 'unknown' || this.seenBytes === 0) return;
    const raw = await this.service.getProcessOutput(this.handle, { view: 'raw' });
    if (this.binary !== 'unknown') return;
    const head = Buffer.from(raw.slice(0, SNIFF_BYTES * 2), 'utf8');
    if (looksBinary(head, this.pty)) {
      this.binary = 'binary';
      this.emit({ type: 'binary_detected' });
    } else if (final || head.length >= SNIFF_BYTES) {
      this.binary = 'text';
    }
  }

  /**
   * The grid a PTY job shows now: read from the native screen in process; for a
   * daemon's job (whose reads are answers to wait for) the last grid rendered.
   */
  shownGrid(): AnsiOutput {
    return this.local ? this.grid(this.local).grid : this.lastGrid;
  }

  /** The grid a PTY job shows, from the native screen (see compat/screen.ts). */
  private grid(service: NativeService): { grid: AnsiOutput; blank: boolean } {
    // On the alternate screen the native screen has no scrollback, as upstream's
    // terminal (the corpus case 'ends on the alternate screen').
    // Packed: 2000 lines of runs as JS objects made through N-API cost more than
    // making them here from one string and typed arrays.
    return this.gridOf(service.getScreenPacked(this.handle, { scrollback: this.maxLines() }));
  }

  /**
   * Resizes the job's terminal; gives the grid laid out again: at once in process (and
   * throws as the native call does), a promise of it for a daemon's job.
   */
  resize(cols: number, rows: number): AnsiOutput | Promise<AnsiOutput> {
    if (this.local) {
      this.local.resizePty(this.handle, cols, rows);
      return this.grid(this.local).grid;
    }
    const service = this.service;
    return (async () => {
      await service.resizePty(this.handle, cols, rows);
      const grid = this.gridOf(await service.readScreenPacked(this.handle, { scrollback: this.maxLines() })).grid;
      this.lastGrid = grid;
      return grid;
    })();
  }

  private maxLines(): number {
    return this.config.maxSerializedLines ?? MAX_SERIALIZED_LINES;
  }

  /**
   * A paced PTY render whose screen is read off the JS thread (`readScreenPacked`):
   * during a flood that read first emulates the output queued since the last one and
   * then walks 2000 lines of cells, several ms that would otherwise hold the host's
   * event loop. One read at a time; a render asked for meanwhile reads again after it
   * (the screen as it is then), and none is made once the final render began.
   */
  private renderOffThread(): void {
    if (this.screenRead) {
      this.screenAgain = true;
      return;
    }
    this.screenAgain = false;
    this.screenRead = this.service.readScreenPacked(this.handle, { scrollback: this.maxLines() }).then(
      (packed) => {
        this.screenRead = undefined;
        if (this.finishing) return;
        this.render(false, this.gridOf(packed)).then(
          () => {
            if (this.screenAgain && !this.finishing && this.binary !== 'binary') this.renderOffThread();
          },
          () => undefined, // the job was removed meanwhile
        );
      },
      () => {
        // the job was removed meanwhile
        this.screenRead = undefined;
      },
    );
  }

  private gridOf(packed: NativePackedScreen): { grid: AnsiOutput; blank: boolean } {
    return screenGrid(unpackScreen(packed), {
      maxLines: this.maxLines(),
      showColor: !!this.config.showColor,
      trim: !this.config.disableDynamicLineTrimming,
    });
  }

  /**
   * One render: the binary verdict, and for a PTY job the grid (`screen`, when the
   * caller has it already). The text to read — a pipes job's `data` events, the
   * background log — is read by `drain`, a slice per turn.
   */
  private async render(final: boolean, screen?: { grid: AnsiOutput; blank: boolean }): Promise<void> {
    await this.sniff(final);
    // A paced render that waited for the sniff gives way to the final one.
    if (!final && this.finishing) return;
    if (this.binary === 'binary') {
      if (this.seenBytes !== this.progressBytes) {
        this.progressBytes = this.seenBytes;
        this.emit({ type: 'binary_progress', bytesReceived: this.seenBytes });
      }
      return;
    }
    if (this.pty) {
      void this.drain().then(() => this.syncPending());
      const { grid, blank } = screen ?? (this.local ? this.grid(this.local) : { grid: this.lastGrid, blank: this.lastGrid.length === 0 });
      // Upstream waits for non-blank output before its first render, unless told not
      // to trim (then every render is sent).
      if (!this.started && !this.config.disableDynamicLineTrimming) {
        if (blank) return;
        this.started = true;
      }
      this.lastGrid = grid;
      this.emit({ type: 'data', chunk: grid });
    } else {
      void this.drain().then(() => this.syncPending());
    }
  }

  /**
   * Reads what is new for the log and (pipes) the `data` events, at most `TURN_BYTES`
   * of each per turn of the event loop, until a read finds nothing: a flood that left
   * many MiB since the last render costs the host many short turns, not one long one.
   * The slices of the events join to what one read of everything would have given.
   * One drain at a time; resolves when it has read up to the end it found.
   */
  private drain(): Promise<void> {
    if (this.draining) return this.draining;
    // The first slice at once, in the render's turn, then one per turn.
    this.draining = (async () => {
      try {
        while (await this.drainStep()) await nextTurn();
      } catch {
        // the job was removed meanwhile
      } finally {
        this.draining = undefined;
      }
    })();
    return this.draining;
  }

  /** One slice of each reader; whether any of them read something. */
  private async drainStep(): Promise<boolean> {
    if (this.binary === 'binary') return false;
    let more = false;
    const log = this.log;
    if (log) {
      const fresh = await readSlice(this.service, this.handle, this.logCursor);
      if (fresh) {
        more = true;
        if (fresh.text) {
          log.append(fresh.text);
          this.logEnd = keepEnd(this.logEnd + fresh.text);
        }
      }
    }
    if (!this.pty) {
      const fresh = await readSlice(this.service, this.handle, this.streamCursor);
      if (fresh) {
        more = true;
        if (fresh.omitted) this.streamGap = true;
        if (fresh.text) {
          this.streamed.append(fresh.text);
          this.emit({ type: 'data', chunk: fresh.text });
        }
      }
    }
    return more;
  }

  /** Lines upstream's terminal buffer holds: the scrollback plus the screen. */
  private bufferLines(): number {
    return (this.config.scrollback ?? SCROLLBACK_LIMIT) + (this.config.terminalHeight ?? 30);
  }

  private currentOutput(): string {
    if (this.pty) {
      // The text view so far, the lines not yet committed included; a daemon's job
      // (whose reads are answers to wait for) gives the lines of its last grid.
      if (!this.local) return gridLines(this.lastGrid);
      const text = this.local.getProcessOutput(this.handle, { view: 'text' });
      return ptyOutput(text, this.bufferLines());
    }
    return this.streamed.text();
  }

  // ---- background ------------------------------------------------------------------

  /** Copies the output so far, then every render's, to `log` (best effort, as upstream). */
  startLog(open: () => BackgroundLog): void {
    if (this.log) return;
    try {
      this.log = open();
      // The output so far goes to the log a slice per turn, then the screen's lines.
      void this.drain().then(() => this.syncPending());
    } catch {
      // logging is best effort, as upstream
    }
  }

  /**
   * The log ends with the text not committed yet (compat/pending.ts): a PTY job's lines
   * still on its screen, so a job that prints steadily shows in its log at once, not a
   * screenful later; a pipes job's unfinished line (a prompt, a progress bar's state).
   * Only between drains: the pending text starts where the log's committed text ends.
   */
  private async syncPending(): Promise<void> {
    const log = this.log;
    if (!log || this.finishing || this.draining || this.pendingRead || this.binary === 'binary') return;
    this.pendingRead = true;
    try {
      const pending = await readPending(this.service, this.handle, this.logCursor.offset, this.logEnd);
      // Only if the log's committed text is still where it was read against.
      if (pending !== undefined && !this.draining && this.log === log && !this.finishing) log.setPending(pending);
    } catch {
      // the job was removed meanwhile
    } finally {
      this.pendingRead = false;
    }
  }

  async closeLog(): Promise<void> {
    const log = this.log;
    this.log = undefined;
    if (log) await log.close();
  }

  // ---- exit ------------------------------------------------------------------------

  private finish(exit: ExitNews): void {
    if (this.finishing) return;
    this.finishing = true;
    this.pacer?.stop();
    this.unsubscribe?.();
    void this.report(exit);
  }

  private async report(exit: ExitNews): Promise<void> {
    let { exitCode, signal, error } = exit;
    this.running = false;
    if (this.abortHandler) this.abortSignal.removeEventListener('abort', this.abortHandler);
    this.cleanup?.();

    let output = '';
    let ansiOutput: AnsiOutput | undefined;
    try {
      const info = await this.service.getResult(this.handle, { maxOutputSize: 1 });
      this.seenBytes = info.totalBytes;
      // The job has ended: its screen is final, one read serves the render and the
      // result. Read off the JS thread, as the paced renders' (it may first emulate a
      // batch of output still queued for the screen: src/output/screen.rs).
      const screen = this.pty ? this.gridOf(await this.service.readScreenPacked(this.handle, { scrollback: this.maxLines() })) : undefined;
      await this.render(true, screen);
      // The events and the log get the rest of the text (the drain under way, if any,
      // reads on to the end: the text of an ended job is final).
      await this.drain();
      if (this.binary === 'binary') {
        output = this.pty ? gridLines(this.lastGrid) : this.streamed.trimmed();
      } else if (this.pty) {
        // Only the last lines, read from the end back a slice per turn; from the
        // start, as one read of everything would give them, if bytes were lost.
        const lines = this.bufferLines();
        let tail = exit.textLength === undefined ? undefined : await readLastLines(this.service, this.handle, exit.textLength, lines);
        if (!tail) {
          const whole = (tail = new LineTail(lines));
          await readPaced(this.service, this.handle, { offset: 0 }, (text) => whole.append(text));
        }
        output = tail.output();
      } else {
        let text = this.streamed;
        if (this.streamGap) {
          // The events' text had gaps: the result is the text as it stands now (where
          // the gaps are now), read again, as one read of everything would give it.
          text = new CharTail(MAX_PIPES_OUTPUT);
          const again = text;
          await readPaced(this.service, this.handle, { offset: 0 }, (slice) => again.append(slice));
        }
        output = text.trimmed();
        if (text.total > MAX_PIPES_OUTPUT) {
          output += `\n[GEMINI_CLI_WARNING: Output truncated. The buffer is limited to ${MAX_PIPES_OUTPUT / (1024 * 1024)}MB.]`;
        }
      }
      if (screen) ansiOutput = screen.grid;
    } catch (e) {
      error ??= asError(e);
    }

    // node-pty reports signal 0 for a normal exit and exit code 0 for a signalled one;
    // the PTY path keeps that convention so results compare equal to upstream's.
    if (this.pty) {
      exitCode = signal !== null ? 0 : exitCode;
      signal = signal ?? 0;
    }
    this.onOutputEvent({ type: 'exit', exitCode, signal });
    this.hooks.ended(this, exitCode, signal);
    await this.closeLog();

    const result: ShellExecutionResult = {
      rawOutput: Buffer.from(''),
      output,
      ...(this.pty ? { ansiOutput: ansiOutput ?? [] } : {}),
      exitCode,
      signal,
      error,
      aborted: this.abortSignal.aborted,
      pid: this.pid,
      executionMethod: this.pty ? PTY_METHOD : PIPES_METHOD,
    };
    this.hooks.forget(this);
    this.lifecycle.completeWithResult(this.pid, result);
    quietly(() => this.service.removeProcess(this.handle)); // already gone (service shut down)
  }
}
