// The one shape every tool has: a declaration, `validate`, `build` → an invocation with
// a policy decision, a confirmation and `execute(signal)`; plus the state tools share.

import {
  type JobStatus,
  type ProcessInfo,
  type RunOptions,
  type RunResult,
  type SandboxOptions,
  type AnyShellExecutionService as ShellExecutionService,
  type ShellExecutionService as InProcessService,
  isDaemonClient,
  spawnFailure,
} from '../contract/addon.js';
import type { SandboxSettingNames } from './sandbox-text.js';
import { streamOutput, type UpdateOutput } from './live-output.js';
import type { CommandPolicy } from './policy.js';
import {
  type ConfirmationDetails,
  ConfirmationOutcome,
  type FunctionDeclaration,
  type PolicyDecision,
  type ToolName,
  type ToolResult,
  ToolErrorType,
} from './types.js';
import { validateParams, withoutHostParameters } from './validate.js';

export interface ShellToolsConfig {
  /** `run_shell_command`'s llmContent: the labelled text (default) or the JSON object (docs/tools.md). */
  format?: 'text' | 'json';
  /** Allow and deny lists in the Gemini CLI syntax, e.g. `run_shell_command(git)`. */
  policy?: CommandPolicy;
  /**
   * What a policy `ask` means: `confirm` (default) asks the user through
   * `shouldConfirmExecute`; `allow` runs (a host that confirms on its own, e.g. an MCP
   * client); `deny` refuses (a strict allowlist).
   */
  onAsk?: 'confirm' | 'allow' | 'deny';
  /** How long send_input waits for `ai_callback_pattern` (default 30000 ms). */
  patternTimeoutMs?: number;
  /** The project root absolute `cwd` values of shell_cmd are checked against (default: the service's). */
  projectRoot?: string;
  /** SIGTERM → SIGKILL grace period for kill and aborts (default: the service's). */
  killGraceMs?: number;
  /** The shortest time between two live output updates (default 1000 ms, see live-output.ts). */
  liveOutputIntervalMs?: number;
  /**
   * The sandbox of every job the tools start (docs/sandbox.md): `true` for the default
   * one, an object for its settings, `false` or absent for none (then the service's own
   * `ServiceOptions.sandbox`, if any, applies).
   */
  sandbox?: boolean | SandboxOptions;
  /** The setting names the refusal hints point at (default: `sandbox.write`, ...). */
  sandboxSettings?: SandboxSettingNames;
  /**
   * run_shell_command takes `unsandboxed: true`, run only after the user confirms
   * (`shouldConfirmExecute`), never by policy alone. On in createGeminiCliTools when
   * `sandbox` is set.
   */
  allowUnsandboxedRequests?: boolean;
}

/** What is remembered about a job after the tools stopped tracking it. */
export interface FinishedJob {
  handle: number;
  command: string;
  status: JobStatus;
  exitCode: number | null;
  signal: number | null;
}

/** State shared by all tools built on the same service (one agent session). */
export interface SharedState {
  /** Jobs that finished and were removed from the service, newest last (bounded). */
  finished: Map<number, FinishedJob>;
  /** Jobs that finished but that `jobs` has not reported yet. */
  unreported: Set<number>;
  /** `run_shell_command(<root>)` entries the user approved for the session. */
  sessionApprovals: Set<string>;
  /** What a shell job holds unfinished between send_input calls (see shell-input-policy.ts). */
  shellInput: Map<number, ShellInputState>;
  /**
   * Jobs an MCP task follows (tools/mcp/tasks/shell-tasks.ts) whose end it has not read
   * yet: `settle` leaves them in the service, so the task's result is the whole run's,
   * not what is remembered of a forgotten job (a send_input that sees the job end would
   * otherwise remove it before the task reads its end).
   */
  followed: Set<number>;
}

/** A shell's unfinished input: its partial line, and the lines of a command not yet complete. */
export interface ShellInputState {
  partial: { text: string; edited: boolean };
  /** Complete lines that do not parse yet on their own (`for i in 1 2; do`), joined by newlines. */
  open: string;
}

const states = new WeakMap<object, SharedState>();

export function sharedState(service: ShellExecutionService): SharedState {
  let state = states.get(service);
  if (!state) {
    state = { finished: new Map(), unreported: new Set(), sessionApprovals: new Set(), shellInput: new Map(), followed: new Set() };
    states.set(service, state);
  }
  return state;
}

/** Thrown by `build` when the parameters are invalid. */
export class ToolParamsError extends Error {
  readonly type = ToolErrorType.INVALID_PARAMS;
  constructor(message: string) {
    super(message);
    this.name = 'ToolParamsError';
  }
}

export abstract class ShellTool<P extends object> {
  abstract readonly declaration: FunctionDeclaration;
  /** Whether the Gemini CLI should show the output as markdown. */
  readonly isOutputMarkdown = false;
  /** Whether `execute` streams output to its `updateOutput` argument while it runs. */
  readonly canUpdateOutput: boolean = false;

  constructor(
    readonly service: ShellExecutionService,
    readonly config: ShellToolsConfig = {},
  ) {}

  get name(): ToolName {
    return this.declaration.name;
  }

  /** The declaration under the name the Gemini CLI's tools use for it. */
  get schema(): FunctionDeclaration {
    return this.declaration;
  }

  /** A title for people (the Gemini CLI shows it next to each call). */
  abstract readonly displayName: string;

  /** The Gemini CLI's tool kind: `execute` runs things, `read` only looks. */
  abstract readonly kind: 'execute' | 'read';

  get description(): string {
    return this.declaration.description;
  }

  get state(): SharedState {
    return sharedState(this.service);
  }

  /** Null when the parameters are valid, otherwise a message the model can act on. */
  validate(params: unknown): string | null {
    return validateParams(this.declaration, params) ?? this.validateValues(withoutHostParameters((params ?? {}) as P));
  }

  /** Checks beyond the schema (cross-field, values). */
  protected validateValues(_params: P): string | null {
    return null;
  }

  /** Validates and binds the parameters; throws `ToolParamsError` when they are invalid. */
  build(params: unknown): ShellToolInvocation<P> {
    const problem = this.validate(params);
    if (problem) throw new ToolParamsError(problem);
    return this.createInvocation(stripNulls(withoutHostParameters((params ?? {}) as P)));
  }

  /**
   * For hosts without a confirmation step (or that confirmed already): validate, apply
   * the policy (`deny` refuses; `ask` follows `config.onAsk`, where `confirm` counts
   * as consent given), execute. Never rejects.
   */
  async buildAndExecute(
    params: unknown,
    signal: AbortSignal = new AbortController().signal,
    updateOutput?: UpdateOutput,
  ): Promise<ToolResult> {
    let invocation: ShellToolInvocation<P>;
    try {
      invocation = this.build(params);
    } catch (e) {
      return errorResult(ToolErrorType.INVALID_PARAMS, (e as Error).message);
    }
    return invocation.execute(signal, updateOutput);
  }

  protected abstract createInvocation(params: P): ShellToolInvocation<P>;
}

export abstract class ShellToolInvocation<P extends object> {
  constructor(
    readonly tool: ShellTool<P>,
    readonly params: P,
  ) {}

  get service(): ShellExecutionService {
    return this.tool.service;
  }

  get config(): ShellToolsConfig {
    return this.tool.config;
  }

  get state(): SharedState {
    return this.tool.state;
  }

  /** One line saying what the call will do. */
  abstract getDescription(): string;

  /** `allow` runs, `deny` is refused by `execute`, `ask` needs the user (see `shouldConfirmExecute`). */
  policy(): PolicyDecision {
    return { decision: 'allow', reason: 'this tool needs no confirmation', roots: [] };
  }

  /**
   * The confirmation a host must show before `execute`, or false when none is needed
   * (allowed, or refused: `execute` then reports the refusal).
   */
  async shouldConfirmExecute(_signal?: AbortSignal): Promise<ConfirmationDetails | false> {
    const decision = this.policy();
    if (decision.decision !== 'ask' || (this.config.onAsk ?? 'confirm') !== 'confirm') return false;
    return this.confirmationDetails(decision);
  }

  protected confirmationDetails(decision: PolicyDecision): ConfirmationDetails {
    return {
      type: 'info',
      title: `Confirm ${this.tool.name}`,
      prompt: `${this.getDescription()} (${decision.reason})`,
      onConfirm: async () => {},
    };
  }

  /**
   * Runs the call. Never rejects: failures come back as `error`. Tools that declare
   * `canUpdateOutput` send the job's output so far to `updateOutput` while they wait
   * (see live-output.ts), never after the returned promise resolved.
   */
  abstract execute(signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult>;
}

// ---------------------------------------------------------------------------------
// Helpers shared by the tools.

/**
 * The confirmation of shell command lines (run_shell_command's command, send_input's
 * lines typed into a shell): "Proceed always" approves their root commands for the
 * session, for both tools.
 */
export function shellConfirmation(
  state: SharedState,
  details: { title: string; prompt: string; command: string; fallbackRoot: string },
  roots: string[],
): ConfirmationDetails {
  return {
    type: 'exec',
    title: details.title,
    prompt: details.prompt,
    command: details.command,
    rootCommand: roots.join(', ') || details.fallbackRoot,
    rootCommands: roots,
    onConfirm: async (outcome) => {
      if (outcome === ConfirmationOutcome.ProceedAlways) {
        for (const root of roots) state.sessionApprovals.add(`run_shell_command(${root})`);
      }
    },
  };
}

export function errorResult(
  type: ToolErrorType,
  message: string,
  llmContent = `Error (${type}): ${message}`,
  data?: Record<string, unknown>,
): ToolResult {
  return { llmContent, returnDisplay: `Error: ${message}`, error: { message, type }, ...(data ? { data } : {}) };
}

const SERVICE_CODES: Record<string, ToolErrorType> = {
  PROCESS_NOT_FOUND: ToolErrorType.PROCESS_NOT_FOUND,
  INVALID_PATTERN: ToolErrorType.INVALID_PATTERN,
  INVALID_DIRECTORY: ToolErrorType.INVALID_DIRECTORY,
  SPAWN_FAILED: ToolErrorType.SPAWN_FAILED,
  LIMIT_REACHED: ToolErrorType.LIMIT_REACHED,
  INVALID_ARGUMENT: ToolErrorType.INVALID_PARAMS,
  SANDBOX_UNAVAILABLE: ToolErrorType.EXECUTION_FAILED,
};

/** Turns an error thrown by the service (with its stable `code`) into a tool error result. */
export function serviceErrorResult(e: unknown, fallback = ToolErrorType.EXECUTION_FAILED): ToolResult {
  const err = e as Error & { code?: string };
  const type = (err.code && SERVICE_CODES[err.code]) || fallback;
  return errorResult(type, err.message ?? String(e));
}

export function cancelledBeforeStart(): ToolResult {
  return {
    llmContent: 'The call was cancelled before it started; nothing ran.',
    returnDisplay: 'Cancelled.',
    cancelled: true,
  };
}

export async function findJob(service: ShellExecutionService, handle: number): Promise<ProcessInfo | undefined> {
  return (await service.getActiveProcesses()).find((p) => p.handle === handle);
}

/**
 * The job now, for what must answer synchronously (a description, a policy): in process
 * as `findJob`; a daemon client's answers are promises, so `null` (not known here).
 */
export function findJobNow(service: ShellExecutionService, handle: number): ProcessInfo | undefined | null {
  if (isDaemonClient(service)) return null;
  return (service as InProcessService).getActiveProcesses().find((p) => p.handle === handle);
}

/** What an ended job left running, now (the core checks which are alive); [] while it runs. */
export function liveBackgroundPids(info: Pick<ProcessInfo, 'status' | 'detachedPids'>): number[] {
  return info.status === 'running' ? [] : info.detachedPids;
}

const FINISHED_LIMIT = 200;

/**
 * Once a job has exited and left nothing running behind, stop tracking it in the service
 * (so `jobs` stays short) and remember its outcome for later questions about its handle.
 * `reported`: the model has already seen that it finished.
 */
export async function settle(tool: { service: ShellExecutionService; state: SharedState }, handle: number, reported: boolean): Promise<void> {
  if (tool.state.followed.has(handle)) return;
  const info = await findJob(tool.service, handle);
  if (!info || info.status === 'running' || liveBackgroundPids(info).length > 0) return;
  const { finished, unreported } = tool.state;
  finished.set(handle, {
    handle,
    command: info.command,
    status: info.status,
    exitCode: info.exitCode,
    signal: info.signal,
  });
  if (!reported) unreported.add(handle);
  while (finished.size > FINISHED_LIMIT) {
    const oldest = finished.keys().next().value as number;
    finished.delete(oldest);
    unreported.delete(oldest);
  }
  try {
    await tool.service.removeProcess(handle);
  } catch {
    // already removed
  }
}

/** Kills a job because the call was aborted; resolves when the kill is done. */
export async function killForAbort(tool: { service: ShellExecutionService; config: ShellToolsConfig }, handle: number): Promise<void> {
  try {
    await tool.service.kill(handle, tool.config.killGraceMs !== undefined ? { graceMs: tool.config.killGraceMs } : undefined);
  } catch {
    // gone already
  }
}

function stripNulls<P extends object>(params: P): P {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) out[k] = v;
  return out as P;
}

/** How `startAndWait` waits: like `run`'s callbacks, plus what a timeout means. */
export interface StartAndWait {
  /** Resolve when this regex matches output (from the job's first byte on). */
  pattern?: string;
  /** Resolve after this long at the latest (the job keeps running unless `killOnTimeout`). */
  waitMs: number;
  /**
   * A timeout kills the job and reports it as `timed_out` (shell_cmd's `timeout`): the
   * service does both (`start`'s `timeoutMs`).
   */
  killOnTimeout?: boolean;
  maxOutputSize: number;
}

/**
 * How much longer than the job's timeout the wait for its end lasts: the service's kill
 * at the timeout takes its grace (200 ms), then at most 5 s for the exit to be seen
 * (src/job/kill.rs). A wait that outlasts this reports the job as it is then.
 */
const KILL_MARGIN_MS = 10_000;
/** The longest wait the service accepts (src/binding/types.rs, `millis`). */
const MAX_WAIT_MS = 86_400_000;

/**
 * `run`, with the handle known before any waiting: the job is started, an abort kills
 * exactly that job, and the wait sees output from its first byte. Errors (a program
 * that cannot start, a bad directory) are thrown with the service's codes.
 */
export async function startAndWait(
  tool: { service: ShellExecutionService; config: ShellToolsConfig },
  signal: AbortSignal,
  command: string,
  options: RunOptions,
  wait: StartAndWait,
  updateOutput?: UpdateOutput,
): Promise<{ result: RunResult; cancelled: boolean }> {
  let handle: number;
  // The tools' sandbox, unless the call chose (run_shell_command's confirmed `unsandboxed`).
  if (options.sandbox === undefined && tool.config.sandbox !== undefined) options = { ...options, sandbox: tool.config.sandbox };
  try {
    ({ handle } = await tool.service.start(command, wait.killOnTimeout ? { ...options, timeoutMs: wait.waitMs } : options));
  } catch (e) {
    // A program that cannot be started is a result with `error`, not a throw
    // (docs/tools.md): the one `run` would have returned, which the error carries.
    const failed = spawnFailure(e);
    if (!failed) throw e;
    return { result: failed, cancelled: false };
  }
  let killing: Promise<void> | null = null;
  const onAbort = () => {
    killing = killForAbort(tool, handle);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const live = await streamOutput(tool.service, handle, updateOutput, { intervalMs: tool.config.liveOutputIntervalMs });
  try {
    const waited = await tool.service.waitFor(handle, {
      pattern: wait.pattern,
      fromStart: true,
      // With killOnTimeout the service kills the job at waitMs; the wait sees it end.
      timeoutMs: wait.killOnTimeout ? Math.min(wait.waitMs + KILL_MARGIN_MS, MAX_WAIT_MS) : wait.waitMs,
      maxOutputSize: wait.maxOutputSize,
      // Runs to the end (shell_cmd) must not stop at a prompt; the others tell the model.
      detectInput: !wait.killOnTimeout,
    });
    if (killing) await killing;
    const result = await tool.service.getResult(handle, { maxOutputSize: wait.maxOutputSize });
    const cancelled = signal.aborted && result.status !== 'exited';
    return {
      result: {
        ...result,
        matched: waited.status === 'matched' ? waited.matched : null,
        status: waited.status === 'awaiting_input' && result.status === 'running' ? 'awaiting_input' : result.status,
        awaitingInput: waited.status === 'awaiting_input' && result.status === 'running',
      },
      cancelled,
    };
  } finally {
    await live.finish();
    signal.removeEventListener('abort', onAbort);
  }
}
