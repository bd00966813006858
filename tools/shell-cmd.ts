// shell_cmd (docs/tools.md): one program with literal arguments, no shell; waits for it
// to finish or time out; the text documented there.
import { realpathSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';

import type { RunResult } from '../contract/addon.js';
import {
  cancelledBeforeStart,
  errorResult,
  serviceErrorResult,
  settle,
  ShellTool,
  ShellToolInvocation,
  startAndWait,
} from './base.js';
import { DEFAULTS, SHELL_CMD } from './declarations.js';
import { formatShellCmd, shellQuote } from './format.js';
import { blockedResult, commandDecision, commandTooLong } from './run-shell-command.js';
import { type ConfirmationDetails, ConfirmationOutcome, type FunctionDeclaration, type PolicyDecision, type ToolResult, ToolErrorType } from './types.js';

export interface ShellCmdParams {
  command: string;
  parameters?: string[];
  /** Milliseconds (default 30000). */
  timeout?: number;
  cwd?: string;
}

export class ShellCmdTool extends ShellTool<ShellCmdParams> {
  static readonly Name = 'shell_cmd';
  readonly displayName = 'ShellCmd';
  readonly kind = 'execute' as const;
  readonly declaration: FunctionDeclaration = SHELL_CMD;

  protected override validateValues(p: ShellCmdParams): string | null {
    return commandTooLong([p.command, ...(p.parameters ?? [])].join(' '));
  }

  protected createInvocation(params: ShellCmdParams): ShellCmdInvocation {
    return new ShellCmdInvocation(this, params);
  }
}

export class ShellCmdInvocation extends ShellToolInvocation<ShellCmdParams> {
  /** The call as one shell-quoted line: what the policy checks and the text shows. */
  get commandLine(): string {
    return [this.params.command, ...(this.params.parameters ?? [])].map(shellQuote).join(' ');
  }

  getDescription(): string {
    return this.commandLine + (this.params.cwd ? ` [in ${this.params.cwd}]` : '');
  }

  override policy(): PolicyDecision {
    const { check: _check, ...decision } = commandDecision(this, this.commandLine);
    return decision;
  }

  protected override confirmationDetails(decision: PolicyDecision): ConfirmationDetails {
    return {
      type: 'exec',
      title: 'Confirm Command',
      prompt: `Run this program? ${this.commandLine}`,
      command: this.commandLine,
      rootCommand: decision.roots.join(', '),
      rootCommands: decision.roots,
      onConfirm: async (outcome) => {
        if (outcome === ConfirmationOutcome.ProceedAlways) {
          for (const root of decision.roots) this.state.sessionApprovals.add(`run_shell_command(${root})`);
        }
      },
    };
  }

  /** `cwd` relative to the project root; an absolute path must lie inside it. */
  private async directory(): Promise<{ directory?: string; error?: string }> {
    const cwd = this.params.cwd;
    if (cwd === undefined || cwd === '') return {};
    if (!isAbsolute(cwd)) return { directory: cwd };
    const root = await this.projectRoot();
    const rel = relative(root, real(cwd));
    if (rel.startsWith('..') || isAbsolute(rel)) {
      return { error: `cwd ${JSON.stringify(cwd)} is outside the project root ${root}.` };
    }
    return { directory: rel === '' ? '.' : rel };
  }

  private async projectRoot(): Promise<string> {
    return real(this.config.projectRoot ?? (await this.service.projectRoot));
  }

  async execute(signal: AbortSignal): Promise<ToolResult> {
    const p = this.params;
    const decision = this.policy();
    if (decision.decision === 'deny') return blockedResult(this.commandLine, decision);
    const dir = await this.directory();
    if (dir.error) return errorResult(ToolErrorType.INVALID_DIRECTORY, dir.error);
    if (signal.aborted) return cancelledBeforeStart();

    const timeoutMs = p.timeout ?? DEFAULTS.shellCmdTimeoutMs;
    let outcome: { result: RunResult; cancelled: boolean };
    try {
      outcome = await startAndWait(
        this,
        signal,
        p.command,
        { args: p.parameters ?? [], mode: 'pipes', directory: dir.directory },
        { waitMs: timeoutMs, killOnTimeout: true, maxOutputSize: DEFAULTS.maxOutputSize },
      );
    } catch (e) {
      return serviceErrorResult(e);
    }
    const { result, cancelled } = outcome;
    const handle = result.handle;
    await settle(this, handle, true);
    const llmContent = formatShellCmd({
      command: p.command,
      parameters: p.parameters ?? [],
      result,
      timeoutMs,
      cancelled,
      sandboxSettings: this.config.sandboxSettings,
    });
    const data = { ...result, cancelled };
    if (result.status === 'failed') {
      return errorResult(ToolErrorType.SPAWN_FAILED, result.error ?? `could not start ${p.command}`, llmContent, data);
    }
    const returnDisplay = cancelled
      ? 'Cancelled; the program was killed.'
      : result.status === 'timed_out'
        ? `Timed out after ${timeoutMs}ms.`
        : result.stdout || `Exit code ${result.exitCode}.`;
    return { llmContent, returnDisplay, ...(cancelled ? { cancelled: true } : {}), data };
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
