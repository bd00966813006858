// native-shell-service/tools: the Gemini-style tool classes over the native service.
import type { ShellExecutionService } from './addon.js';
import type { ShellToolsConfig } from './base.js';
import { JobsTool } from './jobs.js';
import { KillTool } from './kill.js';
import { RunShellCommandTool } from './run-shell-command.js';
import { SendInputTool } from './send-input.js';
import { ShellCmdTool } from './shell-cmd.js';

export * from './types.js';
export { DECLARATIONS, DEFAULTS, LIMITS, JOBS, KEY_NAMES, KILL, RUN_SHELL_COMMAND, SEND_INPUT, SHELL_CMD } from './declarations.js';
export {
  errorResult,
  sharedState,
  ShellTool,
  ShellToolInvocation,
  ToolParamsError,
  type FinishedJob,
  type SharedState,
  type ShellToolsConfig,
} from './base.js';
export { LIVE_OUTPUT_INTERVAL_MS, LIVE_OUTPUT_MAX_BYTES, type UpdateOutput } from './live-output.js';
export { checkCommand, type CommandCheck, type CommandPolicy } from './policy.js';
export { HOST_PARAMETERS, validateParams, withoutHostParameters } from './validate.js';
export { JobsTool, JobsInvocation, type JobsParams } from './jobs.js';
export { KillTool, KillInvocation, type KillParams } from './kill.js';
export { RunShellCommandTool, RunShellCommandInvocation, type RunShellCommandParams } from './run-shell-command.js';
export { SendInputTool, SendInputInvocation, type SendInputParams } from './send-input.js';
export { ShellCmdTool, ShellCmdInvocation, type ShellCmdParams } from './shell-cmd.js';

export interface ShellTools {
  run_shell_command: RunShellCommandTool;
  send_input: SendInputTool;
  jobs: JobsTool;
  kill: KillTool;
  shell_cmd: ShellCmdTool;
}

/** The five tools over one service, sharing its session state (approvals, finished jobs). */
export function createShellTools(service: ShellExecutionService, config: ShellToolsConfig = {}): ShellTools {
  return {
    run_shell_command: new RunShellCommandTool(service, config),
    send_input: new SendInputTool(service, config),
    jobs: new JobsTool(service, config),
    kill: new KillTool(service, config),
    shell_cmd: new ShellCmdTool(service, config),
  };
}
export { createGeminiCliTools, type GeminiCliCore } from './gemini-cli.js';
