// The shapes every tool shares: results, error types, declarations, confirmations.
import type { CommandDecision } from '../contract/addon.js';

/** Why a tool call failed. Stable strings: hosts and tests may switch on them. */
export enum ToolErrorType {
  /** The parameters do not match the declaration (type, range, unknown name). */
  INVALID_PARAMS = 'INVALID_PARAMS',
  /** `directory` / `cwd` is absolute outside the project, escapes it, or does not exist. */
  INVALID_DIRECTORY = 'INVALID_DIRECTORY',
  /** `ai_callback_pattern` is not a valid regular expression. */
  INVALID_PATTERN = 'INVALID_PATTERN',
  /** The command policy refused the command (denylist, allowlist, command substitution). */
  COMMAND_BLOCKED = 'COMMAND_BLOCKED',
  /** No running process has this handle. */
  PROCESS_NOT_FOUND = 'PROCESS_NOT_FOUND',
  /** The program could not be started. */
  SPAWN_FAILED = 'SPAWN_FAILED',
  /** The process could not be stopped. */
  KILL_FAILED = 'KILL_FAILED',
  /** Too many jobs are running at once. */
  LIMIT_REACHED = 'LIMIT_REACHED',
  /** Anything else the service reported. */
  EXECUTION_FAILED = 'EXECUTION_FAILED',
}

export interface ToolError {
  message: string;
  type: ToolErrorType;
}

/** What `execute` resolves to. It never rejects. */
export interface ToolResult {
  /** The text the model reads. */
  llmContent: string;
  /** A short line for a person. */
  returnDisplay: string;
  /** Set when the call failed; `llmContent` then explains the failure to the model. */
  error?: ToolError;
  /** The call was aborted; the job was killed and `llmContent` holds what it had printed. */
  cancelled?: boolean;
  /** The structured facts behind `llmContent`, for hosts that want them. */
  data?: Record<string, unknown>;
}

/** A JSON Schema object, as much of it as the declarations use. */
export interface JsonSchema {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
}

/**
 * A Gemini `FunctionDeclaration` (`@google/genai`): `parametersJsonSchema` is plain
 * JSON Schema, which is also what MCP's `inputSchema` is.
 */
export interface FunctionDeclaration {
  name: ToolName;
  description: string;
  parametersJsonSchema: JsonSchema;
}

export type ToolName = 'run_shell_command' | 'send_input' | 'jobs' | 'kill' | 'shell_cmd';

/** The answer to "may this call run?" before it runs. */
export interface PolicyDecision {
  decision: CommandDecision;
  /** A sentence a person can read. */
  reason: string;
  /** Command names found in the command (for session approvals). */
  roots: string[];
}

export enum ConfirmationOutcome {
  /** Run this call. */
  ProceedOnce = 'proceed_once',
  /** Run this call and allow its command roots for the rest of the session. */
  ProceedAlways = 'proceed_always',
  /** Do not run it. */
  Cancel = 'cancel',
}

/** What a host shows when a call needs the user's consent (same shape as the Gemini CLI's). */
export interface ConfirmationDetails {
  type: 'exec' | 'info';
  title: string;
  /** The question, in words. */
  prompt: string;
  /** For `exec`: the command and its roots. */
  command?: string;
  rootCommand?: string;
  rootCommands?: string[];
  /** Called with the user's answer before `execute`. */
  onConfirm(outcome: ConfirmationOutcome): Promise<void>;
}
