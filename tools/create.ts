// The five tools over one service. Apart from index.ts, so the modules that build
// on the tools (gemini-cli.ts, the MCP server, the CLI) import them without
// importing the package entry that re-exports those modules (no import cycle).
import type { AnyShellExecutionService as ShellExecutionService } from '../contract/addon.js';
import type { ShellToolsConfig } from './base.js';
import { JobsTool } from './jobs.js';
import { KillTool } from './kill.js';
import { RunShellCommandTool } from './run-shell-command.js';
import { SendInputTool } from './send-input.js';
import { ShellCmdTool } from './shell-cmd.js';

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
