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
  /** Run outside the tools' sandbox; only after the user confirms (`allowUnsandboxedRequests`). */
  unsandboxed?: boolean;
}

/** run_shell_command's declaration with the `unsandboxed` parameter (sandboxed hosts that confirm). */
const WITH_UNSANDBOXED: FunctionDeclaration = {
  ...RUN_SHELL_COMMAND,
  description: `${RUN_SHELL_COMMAND.description} Commands run in a sandbox: writes only in the project, $TMPDIR and /tmp, no network unless allowed. If a command fails because the sandbox refused it and it really needs more, pass unsandboxed=true: the user is asked to confirm.`,
  parametersJsonSchema: {
    ...RUN_SHELL_COMMAND.parametersJsonSchema,
    properties: {
      ...(RUN_SHELL_COMMAND.parametersJsonSchema.properties as Record<string, unknown>),
      unsandboxed: {
        type: 'boolean',
        description:
          'Run outside the sandbox (full access to files and network). Only when a sandboxed run was refused and the command needs it; the user must confirm every such call.',
      },
    },
  },
};

export class RunShellCommandTool extends ShellTool<RunShellCommandParams> {
  static readonly Name = 'run_shell_command';
  readonly displayName = 'Shell';
  readonly kind = 'execute' as const;
  override readonly canUpdateOutput = true;

  get declaration(): FunctionDeclaration {
    return this.config.allowUnsandboxedRequests && this.config.sandbox ? WITH_UNSANDBOXED : RUN_SHELL_COMMAND;
  }

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
  /** The user confirmed this very call (an `unsandboxed` one runs only then). */
  private confirmed = false;

  getDescription(): string {
    const p = this.params;
    let text = p.command;
    if (p.directory) text += ` [in ${p.directory}]`;
    if (p.description) text += ` (${p.description.replace(/\n/g, ' ')})`;
    return text;
  }

  override policy(): PolicyDecision {
    const { check: _check, ...decision } = commandDecision(this, this.params.command);
    if (!this.params.unsandboxed || decision.decision === 'deny') return decision;
    // Outside the sandbox: always the user's call, whatever the policy allows.
    if (!this.config.allowUnsandboxedRequests || !this.config.sandbox) {
      return { ...decision, decision: 'deny', reason: 'running outside the sandbox is not offered here' };
    }
    if ((this.config.onAsk ?? 'confirm') !== 'confirm') {
      return { ...decision, decision: 'deny', reason: "running outside the sandbox needs the user's confirmation, which this host cannot ask for" };
    }
    return { ...decision, decision: 'ask', reason: 'it asks to run outside the sandbox' };
  }

  protected override confirmationDetails(decision: PolicyDecision): ConfirmationDetails {
    const { command, description } = this.params;
    const outside = this.params.unsandboxed ? 'OUTSIDE THE SANDBOX (full access to your files and the network): ' : '';
    const prompt = description ? `${outside}${description}\n\n${command}` : `${outside}Run this command? ${command}`;
    const details = shellConfirmation(
      this.state,
      { title: this.params.unsandboxed ? 'Confirm Unsandboxed Shell Command' : 'Confirm Shell Command', prompt, command, fallbackRoot: 'shell command' },
      // "Proceed always" must not approve later unsandboxed calls: none are remembered.
      this.params.unsandboxed ? [] : decision.roots,
    );
    return {
      ...details,
      onConfirm: async (outcome) => {
        this.confirmed = outcome !== ConfirmationOutcome.Cancel;
        await details.onConfirm(outcome);
      },
    };
  }


  async execute(signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult> {
    const p = this.params;
    const decision = this.policy();
    if (decision.decision === 'deny') return blockedResult(p.command, decision);
    if (p.unsandboxed && !this.confirmed) {
      return blockedResult(p.command, { ...decision, reason: "running outside the sandbox needs the user's confirmation, and it was not given" });
    }
    if (signal.aborted) return cancelledBeforeStart();

    const delaySeconds = p.ai_callback_delay ?? DEFAULTS.runCallbackDelaySeconds;
    const maxOutputSize = p.max_output_size ?? DEFAULTS.maxOutputSize;
    let outcome: { result: RunResult; cancelled: boolean };
    try {
      outcome = await startAndWait(
        this,
        signal,
        p.command,
        { description: p.description, directory: p.directory, ...(p.unsandboxed ? { sandbox: false } : {}) },
        { pattern: p.ai_callback_pattern, waitMs: Math.round(delaySeconds * 1000), maxOutputSize },
        updateOutput,
      );
    } catch (e) {
      return serviceErrorResult(e);
    }
    return await this.report(outcome.result, delaySeconds, outcome.cancelled);
  }

  private async report(result: RunResult, delaySeconds: number, cancelled: boolean): Promise<ToolResult> {
    const info = await findJob(this.service, result.handle);
    const liveBackground = info ? liveBackgroundPids(info) : [];
    // Forget the job only when this result shows its end: one that ended after the result
    // was taken has not been seen ended, so `jobs` (or a task following it) still reports it.
    if (result.status !== 'running' && result.status !== 'awaiting_input') await settle(this, result.handle, true);
    const facts: RunFacts = {
      result,
      liveBackground,
      delaySeconds,
      pattern: this.params.ai_callback_pattern,
      cancelled,
      mode: 'pty',
      sandboxSettings: this.config.sandboxSettings,
    };
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
