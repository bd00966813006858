// The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`) for
// run_shell_command: a call from a client that declares the extension returns a task at
// once, and the task's state is the job's: `working` while it runs, `input_required`
// while it waits for input at its terminal (with the prompt and the screen's last lines,
// asked as an elicitation whose answer is the text to type), `completed` with the
// tool's result once it ends, `cancelled` once `tasks/cancel` killed it.
//
// A task id names the job's handle (`shell-job-<handle>`), and every state is read from
// the service when asked, not kept here: with `--daemon` (or over HTTP) the daemon keeps
// the jobs, so a server started later, for a client that restarted, answers `tasks/get`
// for a task an earlier server created. A cancel is kept with the job too: `tasks/cancel`
// kills it with the reason `task-cancelled`, which the service (the daemon) keeps as the
// job's `killReason`, so a later server still says `cancelled`, not `completed` with a
// killed job's result. What is kept here only refines that: the time of the last change,
// input already answered (so the same prompt is not asked twice while the program has
// not read the answer yet) and the final result (a finished job is forgotten by the
// tools, and by a daemon, once its end is seen).
//
// The task id decides nothing beyond which job: it reaches only what `send_input` and
// `kill` reach with the same handle in this session's service (the project's jobs), and
// input goes through the send_input tool, so its policy applies to it as to the tool.
import type { AnyShellExecutionService as ShellExecutionService, ProcessInfo } from '../../../contract/addon.js';
import { findJob, liveBackgroundPids, sharedState } from '../../base.js';
import type { ShellTools } from '../../create.js';
import { DEFAULTS } from '../../declarations.js';
import { formatRunText } from '../../format.js';
import type { SandboxSettingNames } from '../../sandbox-text.js';
import type { ToolResult } from '../../types.js';
import { latestLines } from '../progress.js';
import { structuredResult } from '../structured.js';

/** How often a client is asked to poll (`pollIntervalMs`). */
export const TASK_POLL_MS = 1000;
/** The screen's lines an `input_required` task shows (as progress does). */
const PROMPT_LINES = 10;
const TASK_PREFIX = 'shell-job-';
/**
 * The kill reason (`KillOptions.reason`, kept with the job by the service) that marks a
 * job ended by `tasks/cancel`. Only a kill that ends a running job sets it, so a job
 * killed for another cause (the `kill` tool, a timeout) never reads as a cancelled task.
 */
export const TASK_CANCELLED = 'task-cancelled';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A tools/call result (the shape server.ts answers with). */
export interface CallResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** The task fields every answer carries (spec: `Task`). */
export interface TaskFields {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Null: the task lasts as long as its job is known (the service decides, not a timer). */
  ttlMs: null;
  pollIntervalMs: number;
}

export interface ElicitationRequest {
  method: 'elicitation/create';
  params: { mode: 'form'; message: string; requestedSchema: Record<string, unknown> };
}

export type DetailedTask = TaskFields & { inputRequests?: Record<string, ElicitationRequest>; result?: CallResult };

/** A request about a task that cannot be served: answered as a JSON-RPC error. */
export class TaskError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32602: the spec's code for a task id that names no task (or a bad parameter). */
const INVALID_PARAMS = -32602;

export function taskIdOf(handle: number): string {
  return `${TASK_PREFIX}${handle}`;
}

/** The handle a task id names, or null: anything but `shell-job-<positive integer>`. */
export function handleOf(taskId: unknown): number | null {
  if (typeof taskId !== 'string') return null;
  const m = /^shell-job-([1-9][0-9]{0,9})$/.exec(taskId);
  if (!m) return null;
  const handle = Number(m[1]);
  return Number.isSafeInteger(handle) && handle <= 0xffffffff ? handle : null;
}

interface Memory {
  lastStatus?: TaskStatus;
  lastUpdatedAt: string;
  /** The last answer: the job's output size then, when, and how many bytes its echo may add. */
  answered?: { bytes: number; at: number; echo: number };
  cancelled?: boolean;
  final?: DetailedTask;
}

/** How long an answered prompt is not asked again while only the answer's echo came since. */
const ANSWER_SETTLE_MS = 2000;

/**
 * Whether the program may not have read the last answer yet, so its wait is still the
 * answered prompt's: nothing came since, or no more than the answer's echo (a terminal
 * echoes the typed line before the program reads it) and only for a moment. Asking then
 * would show the same prompt again as a new question.
 */
function answerUnread(memory: Memory, outputBytes: number): boolean {
  const a = memory.answered;
  if (!a) return false;
  if (outputBytes === a.bytes) return true;
  return outputBytes <= a.bytes + a.echo && Date.now() - a.at < ANSWER_SETTLE_MS;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class ShellTasks {
  private readonly memory = new Map<number, Memory>();

  constructor(
    private readonly service: ShellExecutionService,
    private readonly tools: ShellTools,
    private readonly settings?: SandboxSettingNames,
  ) {}

  /**
   * Starts `arguments` as run_shell_command, returning at once: a task for a job that
   * started, the tool's own result for a call that started nothing (bad parameters, a
   * blocked command), which has no job to follow.
   */
  async create(args: Record<string, unknown>, signal: AbortSignal): Promise<{ task: TaskFields } | { result: CallResult }> {
    // ai_callback_delay 0: the call returns as soon as the job is started; the task follows it.
    const result = await this.tools.run_shell_command.buildAndExecute({ ...args, ai_callback_delay: 0 }, signal);
    const handle = result.data?.handle;
    if (typeof handle !== 'number') return { result: await this.callResult(result) };
    const now = iso(Date.now());
    const memory: Memory = { lastUpdatedAt: now };
    this.memory.set(handle, memory);
    const status = result.data?.status;
    if (status === 'running' || status === 'awaiting_input') sharedState(this.service).followed.add(handle);
    else {
      // Ended already: the tools have reported it (and forgotten it), so its end is the tool's result.
      memory.lastStatus = 'completed';
      memory.final = { taskId: taskIdOf(handle), status: 'completed', createdAt: now, lastUpdatedAt: now, ttlMs: null, pollIntervalMs: TASK_POLL_MS, result: await this.callResult(result) };
    }
    const task = await this.get(taskIdOf(handle));
    const { inputRequests: _i, result: _r, ...fields } = task;
    return { task: fields };
  }

  /** The task as it is now (spec: `tasks/get`). */
  async get(taskId: unknown): Promise<DetailedTask> {
    const handle = this.handle(taskId);
    const memory = this.memory.get(handle);
    if (memory?.final) return memory.final;
    const info = await findJob(this.service, handle);
    if (!info) return this.forgotten(handle, memory);
    if (info.status !== 'running') return this.ended(handle, info, memory);
    // A server that meets the task after it was made (a new --daemon server, another
    // stateless request) follows its job from here, so an answer that ends the program
    // does not let send_input forget the job before this task has read its end.
    sharedState(this.service).followed.add(handle);
    const waiting = info.awaitingInput && !(memory && answerUnread(memory, info.outputBytes));
    if (!waiting) return this.note(handle, info, { status: 'working', statusMessage: info.lastLine || `running: ${info.command}` });
    return this.note(handle, info, {
      status: 'input_required',
      statusMessage: `waiting for input: ${info.lastLine}`,
      // A new key for each prompt: a client answers a key once.
      inputRequests: { [`input-${info.outputBytes}`]: await this.question(handle, info) },
    });
  }

  /**
   * Answers (spec: `tasks/update`): each response to a key this task asks now is typed
   * into the job with send_input (its policy: a line to a shell is checked like a
   * command); `decline` or `cancel` ends the job as `tasks/cancel` does. A key the task
   * does not ask (any more) is refused, so an answer meant for an earlier prompt is
   * never typed into a later one.
   */
  async update(taskId: unknown, responses: unknown): Promise<void> {
    const handle = this.handle(taskId);
    if (responses === null || typeof responses !== 'object' || Array.isArray(responses)) {
      throw new TaskError(INVALID_PARAMS, 'inputResponses must be an object of input keys to answers');
    }
    const task = await this.get(taskId);
    for (const [key, response] of Object.entries(responses as Record<string, unknown>)) {
      if (task.status !== 'input_required' || !task.inputRequests?.[key]) {
        throw new TaskError(INVALID_PARAMS, `task ${task.taskId} does not ask for input '${key}' now (status: ${task.status})`);
      }
      const answer = response as { action?: unknown; content?: { input?: unknown } } | null;
      if (answer?.action === 'decline' || answer?.action === 'cancel') {
        await this.cancel(taskId);
        return;
      }
      const input = answer?.action === 'accept' ? answer.content?.input : undefined;
      if (typeof input !== 'string') {
        throw new TaskError(INVALID_PARAMS, `the answer to '${key}' must be { action: "accept", content: { input: "<text>" } }`);
      }
      const info = await findJob(this.service, handle);
      const sent = await this.tools.send_input.buildAndExecute({ handle, input, ai_callback_delay: 0 }, new AbortController().signal);
      if (sent.error) throw new TaskError(INVALID_PARAMS, sent.llmContent, { code: sent.error.type });
      const memory = this.remember(handle);
      // The echo: the line, and the newline as the terminal shows it (\r\n).
      if (info) memory.answered = { bytes: info.outputBytes, at: Date.now(), echo: Buffer.byteLength(input) + 2 };
      memory.lastUpdatedAt = iso(Date.now());
    }
  }

  /**
   * Kills the job and everything it started (spec: `tasks/cancel`); a finished task stays
   * as it ended. The kill names its reason (`task-cancelled`), which the service keeps
   * with the job: the job stays listed, ended, so a server started later (with
   * `--daemon`) reads the task as cancelled from the job itself.
   */
  async cancel(taskId: unknown): Promise<void> {
    const handle = this.handle(taskId);
    const task = await this.get(taskId);
    if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') return;
    const memory = this.remember(handle);
    memory.cancelled = true;
    try {
      const grace = this.tools.kill.config.killGraceMs;
      const killed = await this.service.kill(handle, { ...(grace !== undefined ? { graceMs: grace } : {}), reason: TASK_CANCELLED });
      if (killed.status === 'running') throw new Error(`job ${handle} is still running after the kill`);
    } catch (e) {
      const err = e as Error & { code?: string };
      if (err.code === 'PROCESS_NOT_FOUND') return;
      if ((await findJob(this.service, handle))?.status === 'running') {
        memory.cancelled = false;
        throw new TaskError(-32603, `Failed to cancel ${taskIdOf(handle)}: ${err.message}`);
      }
    }
  }

  private handle(taskId: unknown): number {
    const handle = handleOf(taskId);
    if (handle === null) throw new TaskError(INVALID_PARAMS, `unknown task ${JSON.stringify(taskId)}: task ids are shell-job-<handle>`);
    return handle;
  }

  private remember(handle: number): Memory {
    let memory = this.memory.get(handle);
    if (!memory) {
      memory = { lastUpdatedAt: iso(Date.now()) };
      this.memory.set(handle, memory);
    }
    return memory;
  }

  /** The task's fields, its `lastUpdatedAt` moved when its status changed. */
  private note(handle: number, info: Pick<ProcessInfo, 'startedAt'>, state: Omit<DetailedTask, keyof TaskFields> & { status: TaskStatus; statusMessage?: string }): DetailedTask {
    const memory = this.remember(handle);
    if (memory.lastStatus !== state.status) {
      if (memory.lastStatus !== undefined) memory.lastUpdatedAt = iso(Date.now());
      memory.lastStatus = state.status;
    }
    return {
      taskId: taskIdOf(handle),
      createdAt: iso(info.startedAt),
      lastUpdatedAt: memory.lastUpdatedAt,
      ttlMs: null,
      pollIntervalMs: TASK_POLL_MS,
      ...state,
    };
  }

  /** What an input-waiting job asks: its prompt and the screen's last lines; the answer is the text to type. */
  private async question(handle: number, info: ProcessInfo): Promise<ElicitationRequest> {
    let screen = info.lastLine;
    try {
      screen = latestLines(await this.service.getProcessOutput(handle, { view: 'screen' }), PROMPT_LINES);
    } catch {
      // a pipes job has no screen: its last line stands
    }
    const prompt = info.lastLine.trim();
    return {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `\`${info.command}\` (handle ${handle}) waits for input${prompt ? ` at ${JSON.stringify(prompt)}` : ''}. Its last lines:\n${screen}`,
        requestedSchema: {
          type: 'object',
          properties: {
            input: { type: 'string', title: 'Input', description: 'The text to type; a newline is added (send_input).' },
          },
          required: ['input'],
        },
      },
    };
  }

  /** An ended job: the run_shell_command result it ends with, kept (the tools forget ended jobs). */
  private async ended(handle: number, info: ProcessInfo, memory: Memory | undefined): Promise<DetailedTask> {
    const run = await this.service.getResult(handle, { maxOutputSize: DEFAULTS.maxOutputSize });
    // Cancelled here, or by an earlier server: the service kept the cancel's reason with the job.
    const cancelled = memory?.cancelled === true || (info.status === 'killed' && info.killReason === TASK_CANCELLED);
    const toolResult: ToolResult = {
      llmContent: formatRunText({ result: run, liveBackground: liveBackgroundPids(info), delaySeconds: 0, pattern: undefined, cancelled, mode: 'pty', sandboxSettings: this.settings }),
      returnDisplay: '',
      data: { ...run, liveBackgroundPids: liveBackgroundPids(info), cancelled },
    };
    const task = cancelled
      ? this.note(handle, info, { status: 'cancelled', statusMessage: 'cancelled: the job was killed' })
      : this.note(handle, info, { status: 'completed', result: await this.callResult(toolResult) });
    this.remember(handle).final = task;
    // Its end is read and kept: the tools may forget the job now.
    sharedState(this.service).followed.delete(handle);
    return task;
  }

  /** A job the service no longer knows: what the tools kept of its end, else no such task. */
  private forgotten(handle: number, memory: Memory | undefined): DetailedTask {
    const finished = sharedState(this.service).finished.get(handle);
    if (!finished) {
      throw new TaskError(INVALID_PARAMS, `unknown task ${taskIdOf(handle)}: no job has handle ${handle} (it never ran here, or the daemon has forgotten it)`);
    }
    const text = `Handle: ${handle}\nStatus: ${finished.status}${finished.exitCode !== null ? `\nExit code: ${finished.exitCode}` : ''}\n(the job ended earlier; its output: shell-job://${handle}/stdout.txt)`;
    const started = { startedAt: Date.parse(memory?.lastUpdatedAt ?? '') || Date.now() };
    return memory?.cancelled
      ? this.note(handle, started, { status: 'cancelled', statusMessage: 'cancelled: the job was killed' })
      : this.note(handle, started, { status: 'completed', result: { resultType: 'complete', content: [{ type: 'text', text }] } });
  }

  private async callResult(result: ToolResult): Promise<CallResult> {
    const structuredContent = await structuredResult('run_shell_command', result, this.service, null, this.settings);
    return {
      // A task's result is the request's own result, a 2026-07-28 CallToolResult, which says what it is.
      resultType: 'complete',
      content: [{ type: 'text', text: result.llmContent }],
      ...(structuredContent ? { structuredContent } : {}),
      ...(result.error ? { isError: true } : {}),
    };
  }
}
