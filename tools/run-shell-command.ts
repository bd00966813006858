// run_shell_command: a bash command in a PTY, returning at exit, pattern or delay; a job
// still running stays alive behind its handle.
import type { RunResult } from './addon.js';
import {
  cancelledBeforeStart,
  errorResult,
  findJob,
  killForAbort,
  liveBackgroundPids,
  serviceErrorResult,
  settle,
  ShellTool,
  withTail,
  ShellToolInvocation,
} from './base.js';
import { DEFAULTS, LIMITS, RUN_SHELL_COMMAND } from './declarations.js';
import { formatRunJson, formatRunText, type RunFacts } from './format.js';
import { checkCommand, type CommandCheck } from './policy.js';
import {
  type ConfirmationDetails,
  ConfirmationOutcome,
  type FunctionDeclaration,
  type PolicyDecision,
  type ToolResult,
  ToolErrorType,
} from './types.js';

export interface RunShellCommandParams {
  command: string;
  description?: string;
  directory?: string;
  /** Seconds (default 5). */
  ai_callback_delay?: number;
  ai_callback_pattern?: string;
  /** Bytes (default 16384). */
  max_output_size?: number;
}

export class RunShellCommandTool extends ShellTool<RunShellCommandParams> {
  static readonly Name = 'run_shell_command';
  readonly displayName = 'Shell';
  readonly kind = 'execute' as const;
  readonly declaration: FunctionDeclaration = RUN_SHELL_COMMAND;

  protected override validateValues(p: RunShellCommandParams): string | null {
    return commandTooLong(p.command);
  }

  protected createInvocation(params: RunShellCommandParams): RunShellCommandInvocation {
    return new RunShellCommandInvocation(this, params);
  }
}

export function commandTooLong(command: string): string | null {
  const bytes = Buffer.byteLength(command);
  return bytes > LIMITS.commandBytes
    ? `Invalid parameter 'command': it is ${bytes} bytes; at most ${LIMITS.commandBytes} are accepted. Put long scripts in a file and run the file.`
    : null;
}

/** Applies the policy of `config` plus the session's approvals to a shell command. */
export function commandDecision(
  invocation: ShellToolInvocation<object>,
  command: string,
): PolicyDecision & { check: CommandCheck | null } {
  const policy = invocation.config.policy ?? {};
  let check: CommandCheck;
  try {
    check = checkCommand(command, {
      excludeTools: policy.excludeTools ?? [],
      coreTools: policy.coreTools ?? [],
      sessionApprovals: [...(policy.sessionApprovals ?? []), ...invocation.state.sessionApprovals],
    });
  } catch (e) {
    return { decision: 'deny', reason: (e as Error).message, roots: [], check: null };
  }
  let decision = check.decision;
  let reason = check.reason;
  if (decision === 'ask' && invocation.config.onAsk === 'deny') {
    decision = 'deny';
    reason = `${reason}; only allowed commands may run here`;
  } else if (decision === 'ask' && invocation.config.onAsk === 'allow') {
    decision = 'allow';
  }
  return { decision, reason, roots: check.roots, check };
}

export function blockedResult(command: string, decision: PolicyDecision): ToolResult {
  return errorResult(
    ToolErrorType.COMMAND_BLOCKED,
    `Command blocked: ${decision.reason}.`,
    `Command blocked, nothing was run: ${decision.reason}.\nCommand: ${command}\nRewrite the command without the blocked part (for command substitution: run the inner command first, then use its output literally).`,
  );
}

export class RunShellCommandInvocation extends ShellToolInvocation<RunShellCommandParams> {
  getDescription(): string {
    const p = this.params;
    let text = p.command;
    if (p.directory) text += ` [in ${p.directory}]`;
    if (p.description) text += ` (${p.description.replace(/\n/g, ' ')})`;
    return text;
  }

  override policy(): PolicyDecision {
    const { check: _check, ...decision } = commandDecision(this, this.params.command);
    return decision;
  }

  protected override confirmationDetails(decision: PolicyDecision): ConfirmationDetails {
    return {
      type: 'exec',
      title: 'Confirm Shell Command',
      prompt: this.params.description
        ? `${this.params.description}\n\n${this.params.command}`
        : `Run this command? ${this.params.command}`,
      command: this.params.command,
      rootCommand: decision.roots.join(', ') || 'shell command',
      rootCommands: decision.roots,
      onConfirm: async (outcome) => {
        if (outcome === ConfirmationOutcome.ProceedAlways) {
          for (const root of decision.roots) this.state.sessionApprovals.add(`run_shell_command(${root})`);
        }
      },
    };
  }

  async execute(signal: AbortSignal): Promise<ToolResult> {
    const p = this.params;
    const decision = this.policy();
    if (decision.decision === 'deny') return blockedResult(p.command, decision);
    if (signal.aborted) return cancelledBeforeStart();

    const delaySeconds = p.ai_callback_delay ?? DEFAULTS.runCallbackDelaySeconds;
    const cancel = watchAbort(this, signal, p.command);
    let result: RunResult;
    try {
      result = await this.service.run(p.command, {
        description: p.description,
        directory: p.directory,
        callbackDelayMs: Math.round(delaySeconds * 1000),
        callbackPattern: p.ai_callback_pattern,
        maxOutputSize: p.max_output_size ?? DEFAULTS.maxOutputSize,
      });
    } catch (e) {
      cancel.stop();
      return serviceErrorResult(e);
    }
    this.state.claimed.add(result.handle);
    result = recoverMissedMatch(result, p.ai_callback_pattern);
    const cancelled = await cancel.stop(result);
    if (cancelled) result = cancelled;
    const max = p.max_output_size ?? DEFAULTS.maxOutputSize;
    const stdout = withTail(result.stdout, result.truncated, result.outputDir, 'stdout.txt', max);
    result = { ...result, stdout, output: result.output === result.stdout ? stdout : result.output };
    return this.report(result, delaySeconds, cancelled !== null);
  }

  private report(result: RunResult, delaySeconds: number, cancelled: boolean): ToolResult {
    const info = findJob(this.service, result.handle);
    const liveBackground = liveBackgroundPids(info ?? result);
    settle(this, result.handle, true);
    const facts: RunFacts = { result, liveBackground, delaySeconds, pattern: this.params.ai_callback_pattern, cancelled, mode: 'pty' };
    const llmContent = this.config.format === 'json' ? formatRunJson(facts) : formatRunText(facts);
    const data = { ...result, liveBackgroundPids: liveBackground, cancelled };
    if (result.status === 'failed' && !cancelled) {
      return errorResult(ToolErrorType.SPAWN_FAILED, result.error ?? 'the command could not be started', llmContent, data);
    }
    let returnDisplay: string;
    if (cancelled) returnDisplay = `Cancelled; handle ${result.handle} was killed.`;
    else if (result.status === 'running') returnDisplay = `Running in the background as handle ${result.handle}.`;
    else if (result.status === 'exited') returnDisplay = result.stdout.trim() === '' ? `Exit code ${result.exitCode}.` : result.stdout;
    else returnDisplay = `${result.status} (handle ${result.handle}).`;
    return { llmContent, returnDisplay, ...(cancelled ? { cancelled: true } : {}), data };
  }
}

/**
 * Workaround for a service race: `run` sometimes misses a `callbackPattern` that its
 * output already holds (output that arrives right after the spawn) and resolves at the
 * delay instead. If the pattern is in the output, report the match it should have been.
 */
export function recoverMissedMatch(result: RunResult, pattern: string | undefined): RunResult {
  if (pattern === undefined || result.status !== 'running' || result.matched !== null) return result;
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch {
    return result; // valid for the service's regex engine only; leave it be
  }
  const m = regex.exec(result.output);
  return m ? { ...result, matched: m[0] } : result;
}

/**
 * The service's `run` gives the handle only when it resolves, so an abort during the
 * call finds the new job among the listed ones (not listed before, same command, not
 * claimed by another call), kills it, and lets `run` resolve with the output so far.
 */
function watchAbort(
  invocation: ShellToolInvocation<object>,
  signal: AbortSignal,
  command: string,
): { stop(result?: RunResult): Promise<RunResult | null> } {
  const before = new Set(invocation.service.getActiveProcesses().map((p) => p.handle));
  let killing: Promise<void> | null = null;
  let killedHandle: number | null = null;
  const onAbort = () => {
    killing = (async () => {
      for (let attempt = 0; attempt < 200 && killedHandle === null; attempt++) {
        const job = invocation.service
          .getActiveProcesses()
          .filter((j) => !before.has(j.handle) && j.command === command && !invocation.state.claimed.has(j.handle))
          .sort((a, b) => a.handle - b.handle)[0];
        if (job) {
          killedHandle = job.handle;
          invocation.state.claimed.add(job.handle);
          await killForAbort(invocation, job.handle);
          return;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    async stop(result?: RunResult): Promise<RunResult | null> {
      signal.removeEventListener('abort', onAbort);
      if (!result || !signal.aborted) return null;
      if (killing) await killing;
      // Aborted after run resolved with the job still running: kill it now.
      if (killedHandle === null && result.status === 'running') {
        await killForAbort(invocation, result.handle);
      } else if (killedHandle === null || result.status === 'exited' || result.status === 'failed') {
        return null; // finished on its own before the abort took effect
      }
      const info = findJob(invocation.service, result.handle);
      return {
        ...result,
        status: info?.status ?? 'killed',
        exitCode: info?.exitCode ?? null,
        signal: info?.signal ?? result.signal,
      };
    },
  };
}
