// native-shell-service/tools: the Gemini-style tool classes over the native service.

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
export { createShellTools, type ShellTools } from './create.js';
export { createGeminiCliTools, type GeminiCliCore } from './gemini-cli.js';
export { CONFIG_SETTINGS, MCP_SETTINGS, refusalHint, type SandboxSettingNames, sandboxLine } from './sandbox-text.js';
