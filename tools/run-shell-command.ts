// run_shell_command: a bash command in a PTY, returning at exit, pattern or delay; a job
// still running stays alive behind its handle.
import type { RunResult } from '../contract/addon.js';
import {
  cancelledBeforeStart,
  errorResult,
  findJob,
  liveBackgroundPids,
  serviceErrorResult,
  settle,
  shellConfirmation,
  ShellTool,
  ShellToolInvocation,
  type ShellToolsConfig,
  startAndWait,
} from './base.js';
import { DEFAULTS, LIMITS, RUN_SHELL_COMMAND } from './declarations.js';
import { formatRunJson, formatRunText, type RunFacts } from './format.js';
import type { UpdateOutput } from './live-output.js';
import { checkCommand, type CommandCheck } from './policy.js';
import {
  type ConfirmationDetails,
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
  override readonly canUpdateOutput = true;

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

/** The policy of `config` plus the session's approvals applied to a shell command, before `onAsk`. */
export function checkedCommand(
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
  return { decision: check.decision, reason: check.reason, roots: check.roots, check };
}

/** What a policy `ask` becomes under `config.onAsk` (`confirm` leaves it to the host). */
export function applyOnAsk<D extends PolicyDecision>(config: ShellToolsConfig, decision: D): D {
  if (decision.decision === 'ask' && config.onAsk === 'deny') {
    return { ...decision, decision: 'deny', reason: `${decision.reason}; only allowed commands may run here` };
  }
  if (decision.decision === 'ask' && config.onAsk === 'allow') return { ...decision, decision: 'allow' };
  return decision;
}

/** Applies the policy of `config` plus the session's approvals to a shell command. */
export function commandDecision(
  invocation: ShellToolInvocation<object>,
  command: string,
): PolicyDecision & { check: CommandCheck | null } {
  return applyOnAsk(invocation.config, checkedCommand(invocation, command));
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
    const { command, description } = this.params;
    const prompt = description ? `${description}\n\n${command}` : `Run this command? ${command}`;
    return shellConfirmation(this.state, { title: 'Confirm Shell Command', prompt, command, fallbackRoot: 'shell command' }, decision.roots);
  }


  async execute(signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult> {
    const p = this.params;
    const decision = this.policy();
    if (decision.decision === 'deny') return blockedResult(p.command, decision);
    if (signal.aborted) return cancelledBeforeStart();

    const delaySeconds = p.ai_callback_delay ?? DEFAULTS.runCallbackDelaySeconds;
    const maxOutputSize = p.max_output_size ?? DEFAULTS.maxOutputSize;
    let outcome: { result: RunResult; cancelled: boolean };
    try {
      outcome = await startAndWait(
        this,
        signal,
        p.command,
        { description: p.description, directory: p.directory },
        { pattern: p.ai_callback_pattern, waitMs: Math.round(delaySeconds * 1000), maxOutputSize },
        updateOutput,
      );
    } catch (e) {
      return serviceErrorResult(e);
    }
    return this.report(outcome.result, delaySeconds, outcome.cancelled);
  }

  private report(result: RunResult, delaySeconds: number, cancelled: boolean): ToolResult {
    const info = findJob(this.service, result.handle);
    const liveBackground = info ? liveBackgroundPids(info) : [];
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
    else if (result.status === 'awaiting_input') returnDisplay = `Waiting for input as handle ${result.handle}.`;
    else if (result.status === 'exited') returnDisplay = result.stdout.trim() === '' ? `Exit code ${result.exitCode}.` : result.stdout;
    else returnDisplay = `${result.status} (handle ${result.handle}).`;
    return { llmContent, returnDisplay, ...(cancelled ? { cancelled: true } : {}), data };
  }
}
