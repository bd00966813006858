// The public types of `@google/gemini-cli-core@0.61.0`'s ShellExecutionService, restated
// structurally so that this package does not depend on gemini-cli-core at run time.
// Values of the upstream types are assignable to these and back.

/** One run of cells sharing the same attributes (upstream `AnsiToken`). */
export interface AnsiToken {
  text: string;
  bold: boolean;
  italic: boolean;
  underline: boolean;
  dim: boolean;
  inverse: boolean;
  isUninitialized: boolean;
  fg: string;
  bg: string;
}
export type AnsiLine = AnsiToken[];
export type AnsiOutput = AnsiLine[];

export type ExecutionMethod = 'lydell-node-pty' | 'node-pty' | 'child_process' | 'remote_agent' | 'none';

export interface ExecutionResult {
  rawOutput?: Buffer;
  output: string;
  ansiOutput?: AnsiOutput;
  exitCode: number | null;
  signal: number | null;
  error: Error | null;
  aborted: boolean;
  pid: number | undefined;
  executionMethod: ExecutionMethod;
  backgrounded?: boolean;
}

export interface ExecutionHandle {
  pid: number | undefined;
  result: Promise<ExecutionResult>;
}

export type ExecutionOutputEvent =
  | { type: 'data'; chunk: string | AnsiOutput }
  | { type: 'binary_detected' }
  | { type: 'binary_progress'; bytesReceived: number }
  | { type: 'exit'; exitCode: number | null; signal: number | null };

export type ShellExecutionResult = ExecutionResult;
export type ShellExecutionHandle = ExecutionHandle;
export type ShellOutputEvent = ExecutionOutputEvent;

export interface EnvironmentSanitizationConfig {
  allowedEnvironmentVariables: string[];
  blockedEnvironmentVariables: string[];
  enableEnvironmentVariableRedaction: boolean;
}

export interface SandboxPermissions {
  fileSystem?: { read?: string[]; write?: string[] };
  network?: boolean;
}

/** What a sandbox manager is asked to prepare (upstream `SandboxRequest`). */
export interface SandboxRequest {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  policy?: {
    allowedPaths?: string[];
    networkAccess?: boolean;
    sanitizationConfig?: Partial<EnvironmentSanitizationConfig>;
    additionalPermissions?: SandboxPermissions;
  };
}

/** What it returns (upstream `SandboxedCommand`). */
export interface SandboxedCommand {
  program: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  cleanup?: () => void;
}

/** The one method of upstream's `SandboxManager` the adapter calls. */
export interface SandboxManagerLike {
  prepareCommand(req: SandboxRequest): Promise<SandboxedCommand>;
}

export interface ShellExecutionConfig {
  additionalPermissions?: SandboxPermissions;
  terminalWidth?: number;
  terminalHeight?: number;
  pager?: string;
  showColor?: boolean;
  defaultFg?: string;
  defaultBg?: string;
  sanitizationConfig: EnvironmentSanitizationConfig;
  /** Required upstream; optional here (without one the environment is passed as built). */
  sandboxManager?: SandboxManagerLike;
  disableDynamicLineTrimming?: boolean;
  scrollback?: number;
  maxSerializedLines?: number;
  /** Passed to the sandbox manager's policy (upstream `SandboxConfig`; only these fields are read here). */
  sandboxConfig?: { enabled?: boolean; command?: string; networkAccess?: boolean };
  backgroundCompletionBehavior?: 'inject' | 'notify' | 'silent';
  originalCommand?: string;
  sessionId?: string;
  env?: Record<string, string | undefined>;
  /**
   * Adapter extension. Pipes mode only: keep stdin open so `writeToPty` reaches the
   * program (upstream's pipes mode gives it /dev/null; so does the adapter by default).
   */
  keepStdinOpen?: boolean;
}

export type BackgroundProcess = {
  pid: number;
  command: string;
  status: 'running' | 'exited';
  exitCode?: number | null;
  signal?: number | null;
};

export type BackgroundProcessRecord = Omit<BackgroundProcess, 'pid'> & {
  startTime: number;
  endTime?: number;
};
