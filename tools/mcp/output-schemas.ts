// What each tool returns as MCP `structuredContent` (the JSON Schemas announced as
// `outputSchema` in tools/list), and the hints announced as `annotations`. The shapes
// are the service's own result types (index.d.ts) plus the fields the tools add.
import type { ToolName } from '../types.js';

type Schema = Record<string, unknown>;

const int = { type: 'integer' };
const intOrNull = { type: ['integer', 'null'] };
const str = { type: 'string' };
const strOrNull = { type: ['string', 'null'] };
const bool = { type: 'boolean' };
const num = { type: 'number' };
const pids = { type: 'array', items: int };
const jobStatus = { type: 'string', enum: ['exited', 'running', 'killed', 'timed_out', 'failed'] };

function object(properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema {
  return { type: 'object', properties, required };
}

/** `RunResult` (index.d.ts) and `cancelled`: what run_shell_command and shell_cmd ran. */
const RUN_RESULT = {
  handle: { ...int, description: 'The job handle (for a program that could not be started: the handle of its history entry; no job has it).' },
  pid: intOrNull,
  command: str,
  directory: str,
  status: { type: 'string', enum: ['exited', 'running', 'awaiting_input', 'killed', 'timed_out', 'failed'] },
  stdout: str,
  stderr: str,
  output: { ...str, description: 'stdout and stderr as they were interleaved.' },
  exitCode: intOrNull,
  signal: intOrNull,
  error: { ...strOrNull, description: 'Why the program could not be started.' },
  backgroundPids: pids,
  matched: { ...strOrNull, description: 'The text ai_callback_pattern matched.' },
  truncated: { ...bool, description: 'Only the head and tail of the output are here; the whole is in outputDir unless persistError says otherwise.' },
  totalBytes: int,
  outputDir: {
    ...strOrNull,
    description: 'The directory holding stdout.txt, stderr.txt and info.json; null when output is not persisted or the folder was removed.',
  },
  persistError: {
    ...strOrNull,
    description: "What the job's files lack and why (a full disk: ENOSPC, the folder removed, the per-job disk cap); null while they hold everything.",
  },
  startedAt: { ...num, description: 'Milliseconds since the epoch.' },
  durationMs: num,
  awaitingInput: { ...bool, description: 'The job runs and waits for input at its terminal (status awaiting_input).' },
  cancelled: { ...bool, description: 'The call was cancelled and the job killed.' },
};

const RUN_SHELL_COMMAND = object({
  ...RUN_RESULT,
  liveBackgroundPids: { ...pids, description: 'Background processes (`cmd &`) still alive.' },
});

const SHELL_CMD = object(RUN_RESULT);

/** `InteractionResult` (index.d.ts): what the job printed after the input. */
const SEND_INPUT = object({
  handle: int,
  status: { type: 'string', enum: ['matched', 'exited', 'delay_elapsed', 'timed_out', 'awaiting_input'] },
  output: str,
  matched: strOrNull,
  exitCode: intOrNull,
  signal: intOrNull,
  running: bool,
  truncated: bool,
  cancelled: bool,
});

const RUNNING_JOB = object({
  handle: int,
  pid: int,
  command: str,
  description: strOrNull,
  directory: str,
  mode: { type: 'string', enum: ['pty', 'pipes'] },
  status: jobStatus,
  startedAt: num,
  durationMs: num,
  exitCode: intOrNull,
  signal: intOrNull,
  outputBytes: int,
  lastLine: str,
  backgroundPids: pids,
  detachedPids: {
    ...pids,
    description: 'Running: the processes the job started that detached from it (setsid, double fork, nohup). Ended: as backgroundPids.',
  },
  liveBackgroundPids: pids,
  awaitingInput: { ...bool, description: 'The job waits for input at its terminal now.' },
  persistError: { ...strOrNull, description: "What the job's files lack and why; null while they hold everything." },
});

const FINISHED_JOB = object({ handle: int, command: str, status: jobStatus, exitCode: intOrNull, signal: intOrNull });

const JOBS = object({
  running: { type: 'array', items: RUNNING_JOB, description: 'Jobs still running, or whose background processes are.' },
  finished: { type: 'array', items: FINISHED_JOB, description: 'Jobs that finished since jobs was last called.' },
});

/** `KillResult` (index.d.ts), or what is known of a job that had already ended. */
const KILL = object(
  {
    handle: int,
    status: jobStatus,
    exitCode: intOrNull,
    signal: intOrNull,
    escalated: { ...bool, description: 'SIGKILL was needed after the grace period.' },
    survivors: { ...pids, description: 'Processes of the job still alive after the kill (then the call failed).' },
    wasRunning: bool,
    backgroundPids: { ...pids, description: 'Background processes that were terminated too.' },
    alreadyFinished: { ...bool, description: 'The job had ended before; nothing was killed.' },
  },
  ['handle', 'status'],
);

export const OUTPUT_SCHEMAS: Record<ToolName, Schema> = {
  run_shell_command: RUN_SHELL_COMMAND,
  send_input: SEND_INPUT,
  jobs: JOBS,
  kill: KILL,
  shell_cmd: SHELL_CMD,
};

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * Commands can do anything (destructive, open world: network, other programs); kill only
 * touches this server's own jobs and a second kill of the same handle changes nothing;
 * jobs only looks.
 */
export const ANNOTATIONS: Record<ToolName, ToolAnnotations> = {
  run_shell_command: { title: 'Run shell command', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  send_input: { title: 'Send input to a process', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  jobs: { title: 'List background processes', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  kill: { title: 'Kill a process', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  shell_cmd: { title: 'Run a program (no shell)', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};
