// send_input: text (and named keys) to a running job, then wait for a pattern, a delay
// or its exit; returns only what the job printed after the input.
import type { InteractionResult, ProcessInfo } from '../contract/addon.js';
import {
  cancelledBeforeStart,
  errorResult,
  findJob,
  findJobNow,
  killForAbort,
  liveBackgroundPids,
  serviceErrorResult,
  settle,
  shellConfirmation,
  ShellTool,
  ShellToolInvocation,
  type SharedState,
} from './base.js';
import { DEFAULTS, SEND_INPUT } from './declarations.js';
import { endText, formatInteraction } from './format.js';
import { streamOutput, type UpdateOutput } from './live-output.js';
import { type ShellInputDecision, shellInputDecision } from './shell-input-policy.js';
import {
  type ConfirmationDetails,
  type FunctionDeclaration,
  type PolicyDecision,
  type ToolResult,
  ToolErrorType,
} from './types.js';

export interface SendInputParams {
  handle: number;
  input: string;
  /** Default true (false when `keys` are given). */
  append_newline?: boolean;
  /** Seconds (default 3). */
  ai_callback_delay?: number;
  ai_callback_pattern?: string;
  keys?: string[];
}

export class SendInputTool extends ShellTool<SendInputParams> {
  static readonly Name = 'send_input';
  readonly displayName = 'SendInput';
  readonly kind = 'execute' as const;
  readonly declaration: FunctionDeclaration = SEND_INPUT;
  override readonly canUpdateOutput = true;

  protected createInvocation(params: SendInputParams): SendInputInvocation {
    return new SendInputInvocation(this, params);
  }
}

/** The error for a handle that has no running job, saying what happened to it if known. */
export function notRunningResult(
  state: SharedState,
  handle: number,
  info?: Pick<ProcessInfo, 'status' | 'exitCode' | 'signal' | 'detachedPids'>,
): ToolResult {
  const known = info ?? state.finished.get(handle);
  const background = info ? liveBackgroundPids(info) : [];
  const how = known ? endText(known) : '';
  const message = !known
    ? `No process has handle ${handle}. Use jobs to list the running processes and their handles.`
    : background.length > 0
      ? `Process ${handle} is not running: its shell ${how}; its background processes (PIDs ${background.join(', ')}) still run but do not read input from here. Use kill(handle=${handle}) to stop them.`
      : `Process ${handle} is not running: it ${how}. Start it again with run_shell_command if you still need it.`;
  return errorResult(ToolErrorType.PROCESS_NOT_FOUND, message, message);
}

/** The refusal of input to a shell: nothing was written. */
export function inputBlockedResult(handle: number, decision: ShellInputDecision): ToolResult {
  return errorResult(
    ToolErrorType.COMMAND_BLOCKED,
    `Input blocked: ${decision.reason}.`,
    `Input blocked, nothing was written: handle ${handle} is at a ${decision.shell} prompt, so each line is checked like a run_shell_command command, and ${decision.reason}.\nLines: ${decision.lines.map((l) => JSON.stringify(l)).join(', ')}\nRewrite the input without the blocked part (for command substitution: run the inner command first, then use its output literally).`,
  );
}

export class SendInputInvocation extends ShellToolInvocation<SendInputParams> {
  getDescription(): string {
    const keys = this.params.keys?.length ? ` + ${this.params.keys.join(' ')}` : '';
    return `send ${JSON.stringify(this.params.input)}${keys} to handle ${this.params.handle}`;
  }

  /**
   * The program the input reaches, as last asked of a daemon (`shouldConfirmExecute` and
   * `execute` ask first); undefined until then.
   */
  private foreground: string | null | undefined = undefined;

  /** Asks a daemon client which program the input reaches now (in process it is read synchronously). */
  private async refreshForeground(): Promise<ProcessInfo | undefined> {
    const info = await findJob(this.service, this.params.handle);
    this.foreground = info?.foreground ?? null;
    return info;
  }

  /** Input to a shell is checked line by line (shell-input-policy.ts); other input is text. */
  inputDecision(): ShellInputDecision {
    const p = this.params;
    const keys = p.keys ?? [];
    const now = findJobNow(this.service, p.handle);
    // A daemon's job not asked about yet: checked as if a shell read it (fails closed:
    // the lines are judged as commands rather than waved through as text).
    const foreground = now === null ? (this.foreground === undefined ? 'bash' : this.foreground) : (now?.foreground ?? null);
    return shellInputDecision(this, p.handle, foreground, p.input, keys, p.append_newline ?? keys.length === 0);
  }

  override async shouldConfirmExecute(signal?: AbortSignal): Promise<ConfirmationDetails | false> {
    await this.refreshForeground().catch(() => undefined);
    return super.shouldConfirmExecute(signal);
  }

  override policy(): PolicyDecision {
    const { decision, reason, roots } = this.inputDecision();
    return { decision, reason, roots };
  }

  protected override confirmationDetails(decision: PolicyDecision): ConfirmationDetails {
    const command = this.inputDecision().lines.join('\n');
    const prompt = `Send to the shell at handle ${this.params.handle}? ${command}`;
    return shellConfirmation(this.state, { title: 'Confirm Shell Input', prompt, command, fallbackRoot: 'shell input' }, decision.roots);
  }


  async execute(signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult> {
    const p = this.params;
    const info = await this.refreshForeground();
    if (!info || info.status !== 'running') {
      if (info) await settle(this, p.handle, true);
      return notRunningResult(this.state, p.handle, info);
    }
    const decision = this.inputDecision();
    if (decision.decision === 'deny') return inputBlockedResult(p.handle, decision);
    if (signal.aborted) return cancelledBeforeStart();

    const keys = p.keys ?? [];
    const appendNewline = p.append_newline ?? keys.length === 0;
    const delaySeconds = p.ai_callback_delay ?? DEFAULTS.sendInputCallbackDelaySeconds;
    // With a pattern, an explicit ai_callback_delay bounds the wait (as in
    // run_shell_command: whichever comes first); without one the seed's 30 s apply.
    const patternTimeoutMs =
      p.ai_callback_pattern !== undefined && p.ai_callback_delay !== undefined
        ? Math.round(p.ai_callback_delay * 1000)
        : (this.config.patternTimeoutMs ?? DEFAULTS.patternTimeoutMs);
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      void killForAbort(this, p.handle);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Subscribed before the input is written, so no reply can come before it.
    const live = await streamOutput(this.service, p.handle, updateOutput, { intervalMs: this.config.liveOutputIntervalMs });
    // What the shell holds after this input, kept before the wait so that a call made
    // while this one waits sees it; restored if nothing was written.
    const shellBefore = this.state.shellInput.get(p.handle);
    if (decision.next) this.state.shellInput.set(p.handle, decision.next);
    else this.state.shellInput.delete(p.handle);
    let result: InteractionResult;
    try {
      result = await this.service.sendInput(p.handle, p.input, {
        appendNewline,
        delayMs: Math.round(delaySeconds * 1000),
        pattern: p.ai_callback_pattern,
        timeoutMs: patternTimeoutMs,
        keys,
      });
    } catch (e) {
      if (shellBefore) this.state.shellInput.set(p.handle, shellBefore);
      else this.state.shellInput.delete(p.handle);
      const err = e as { code?: string };
      if (err.code === 'PROCESS_NOT_FOUND') return notRunningResult(this.state, p.handle);
      return serviceErrorResult(e);
    } finally {
      await live.finish();
      signal.removeEventListener('abort', onAbort);
    }
    const cancelled = aborted && !result.running && result.status === 'exited';
    // A truncated reply names the file holding everything, if its files hold it: asked
    // of the job (its folder may be `<handle>-2`, gone, or its files incomplete).
    let files: { outputDir: string | null; persistError: string | null } = { outputDir: null, persistError: null };
    if (result.truncated) {
      try {
        files = await this.service.getResult(p.handle, { maxOutputSize: 1 });
      } catch {
        // Removed meanwhile: no file is named.
      }
    }
    const llmContent = formatInteraction({
      result,
      input: p.input,
      keys,
      appendNewline,
      pattern: p.ai_callback_pattern,
      delaySeconds,
      patternTimeoutMs,
      cancelled,
      outputDir: files.outputDir,
      persistError: files.persistError,
    });
    if (!result.running) await settle(this, p.handle, true);
    const returnDisplay = cancelled
      ? `Cancelled; handle ${p.handle} was killed.`
      : result.output.trim() === ''
        ? `Sent to handle ${p.handle} (${result.status.replace('_', ' ')}).`
        : result.output;
    return { llmContent, returnDisplay, ...(cancelled ? { cancelled: true } : {}), data: { ...result, cancelled } };
  }
}
