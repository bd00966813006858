// kill: SIGTERM to the job's process group and background children, SIGKILL after the
// grace period. A job that already ended is reported, not an error.
import type { KillResult } from '../contract/addon.js';

import {
  errorResult,
  findJob,
  findJobNow,
  liveBackgroundPids,
  settle,
  ShellTool,
  ShellToolInvocation,
} from './base.js';
import { KILL } from './declarations.js';
import { endText, signalName } from './format.js';
import { notRunningResult } from './send-input.js';
import { type ConfirmationDetails, type FunctionDeclaration, type PolicyDecision, type ToolResult, ToolErrorType } from './types.js';

export interface KillParams {
  handle: number;
}

export class KillTool extends ShellTool<KillParams> {
  static readonly Name = 'kill';
  readonly displayName = 'Kill';
  readonly kind = 'execute' as const;
  readonly declaration: FunctionDeclaration = KILL;

  protected createInvocation(params: KillParams): KillInvocation {
    return new KillInvocation(this, params);
  }
}

export class KillInvocation extends ShellToolInvocation<KillParams> {
  getDescription(): string {
    const job = findJobNow(this.service, this.params.handle);
    return `terminate handle ${this.params.handle}${job ? ` (${job.command})` : ''}`;
  }

  /** Terminating a process is destructive: always ask (unless the host confirms itself). */
  override policy(): PolicyDecision {
    return { decision: 'ask', reason: 'terminating a process always needs confirmation', roots: [] };
  }

  protected override confirmationDetails(): ConfirmationDetails {
    return {
      type: 'info',
      title: 'Confirm Process Termination',
      prompt: `Terminate process ${this.params.handle}? ${this.getDescription()}`,
      onConfirm: async () => {},
    };
  }

  async execute(_signal: AbortSignal): Promise<ToolResult> {
    const { handle } = this.params;
    const job = await findJob(this.service, handle);
    if (!job) {
      const finished = this.state.finished.get(handle);
      if (!finished) return notRunningResult(this.state, handle);
      const how = endText(finished);
      return {
        llmContent: `Process ${handle} (${finished.command}) is not running (already terminated: it ${how}); nothing to kill.`,
        returnDisplay: 'Process already terminated',
        data: { handle, status: finished.status, alreadyFinished: true },
      };
    }
    const wasRunning = job.status === 'running';
    const background = liveBackgroundPids(job);
    let result: KillResult;
    try {
      result = await this.service.kill(handle, this.config.killGraceMs !== undefined ? { graceMs: this.config.killGraceMs } : undefined);
    } catch (e) {
      const err = e as Error & { code?: string };
      if (err.code === 'PROCESS_NOT_FOUND') return notRunningResult(this.state, handle);
      return errorResult(ToolErrorType.KILL_FAILED, `Failed to terminate process ${handle}: ${err.message}`);
    }
    // The service reports what outlived the kill; the job's own process counts as
    // "still running" (its status), the rest as background processes.
    const survivors = result.survivors.filter((pid) => pid !== job.pid);
    if (result.status === 'running' || survivors.length > 0) {
      const what = survivors.length > 0 ? `background PIDs ${survivors.join(', ')} are still alive` : 'it is still running';
      return errorResult(ToolErrorType.KILL_FAILED, `Failed to terminate process ${handle}: ${what}.`);
    }
    const after = await findJob(this.service, handle);
    const lastLine = after?.lastLine ?? job.lastLine;
    await settle(this, handle, true);

    const lines: string[] = [];
    if (wasRunning) {
      lines.push(
        result.escalated
          ? `Process ${handle} (${job.command}) did not stop on SIGTERM and was killed with SIGKILL.`
          : `Process ${handle} (${job.command}) terminated successfully (${signalName(result.signal)}).`,
      );
    } else {
      lines.push(`Process ${handle} (${job.command}) had already exited (exit code ${job.exitCode ?? '(none)'}).`);
    }
    if (background.length > 0) lines.push(`Its background processes were terminated: PIDs ${background.join(', ')}.`);
    if (lastLine) lines.push(`Last output: ${lastLine}`);
    return {
      llmContent: lines.join('\n'),
      returnDisplay: wasRunning || background.length > 0 ? 'Process terminated' : 'Process already terminated',
      data: { ...result, wasRunning, backgroundPids: background },
    };
  }
}
