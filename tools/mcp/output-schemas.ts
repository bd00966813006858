// What each tool returns as MCP `structuredContent` (the JSON Schemas announced as
// `outputSchema` in tools/list), and the hints announced as `annotations`. The shapes
// are built for the model (tools/mcp/structured.ts): the service's result types
// (index.d.ts) with the output once, plus `next`, `files` and `readOn`.
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

/** What to do next: the hint lines of the text (how to continue, what was cut, a sandbox refusal). */
const NEXT = { type: 'array', items: str, description: 'What to do next, in words: how to talk to or stop a running job, where the rest of a cut output is.' };

/** A job's files as resources (read them with resources/read; pages of 8 KiB). */
const FILES = object(
  {
    stdout: { ...str, description: 'The whole output: shell-job://<handle>/stdout.txt.' },
    stderr: { ...str, description: "shell_cmd: the program's stderr, when it wrote any." },
    info: { ...str, description: 'The job as JSON: command, status, times, exit code.' },
  },
  ['stdout', 'info'],
);

/** Where the part left out of a cut output begins. */
const READ_ON = object({
  uri: { ...str, description: 'Read here (a resource URI) for the bytes left out; each read says where the next page is.' },
  offset: { ...int, description: "The byte offset in the job's file where the left-out part begins." },
  omittedBytes: int,
});

/** `RunResult` (index.d.ts) as the model needs it, the output once and last. */
const RUN_RESULT = {
  handle: { ...int, description: 'The job handle (for a program that could not be started: the handle of its history entry; no job has it).' },
  status: { type: 'string', enum: ['exited', 'running', 'awaiting_input', 'killed', 'timed_out', 'failed'] },
  error: { ...str, description: 'Why the program could not be started.' },
  exitCode: intOrNull,
  signal: intOrNull,
  next: NEXT,
  files: FILES,
  readOn: READ_ON,
  command: str,
  directory: str,
  matched: { ...strOrNull, description: 'The text ai_callback_pattern matched.' },
  backgroundPids: pids,
  truncated: { ...bool, description: 'Only the head and tail of the output are here; readOn says where the rest is.' },
  totalBytes: int,
  outputDir: {
    ...strOrNull,
    description: "The job's folder on the server's machine (stdout.txt, stderr.txt, info.json); null when output is not persisted or the folder was removed.",
  },
  persistError: {
    ...strOrNull,
    description: "What the job's files lack and why (a full disk: ENOSPC, the folder removed, the per-job disk cap); null while they hold everything.",
  },
  sandbox: { type: 'object', description: 'What confined the job (writable paths, network).' },
  durationMs: num,
  cancelled: { ...bool, description: 'The call was cancelled and the job killed.' },
};
/** Always there; the rest only when it says something (a match, a cut output, a sandbox...). */
const RUN_REQUIRED = ['handle', 'status', 'exitCode', 'signal', 'next', 'command', 'durationMs'];

const RUN_SHELL_COMMAND = object(
  {
    ...RUN_RESULT,
    liveBackgroundPids: { ...pids, description: 'Background processes (`cmd &`) still alive.' },
    output: { ...str, description: "What the command printed (a terminal: stdout and stderr together). Cut in the middle when truncated." },
  },
  [...RUN_REQUIRED, 'output'],
);

const SHELL_CMD = object(
  {
    ...RUN_RESULT,
    stdout: str,
    stderr: { ...str, description: 'Only when the program wrote to stderr.' },
  },
  [...RUN_REQUIRED, 'stdout'],
);

/** `InteractionResult` (index.d.ts): what the job printed after the input. */
const SEND_INPUT = object(
  {
    handle: int,
    status: { type: 'string', enum: ['matched', 'exited', 'delay_elapsed', 'timed_out', 'awaiting_input'] },
    next: NEXT,
    files: FILES,
    matched: strOrNull,
    exitCode: intOrNull,
    signal: intOrNull,
    running: bool,
    truncated: bool,
    cancelled: bool,
    output: { ...str, description: 'What the job printed after the input.' },
  },
  ['handle', 'status', 'running', 'next', 'files', 'output'],
);

const RUNNING_JOB = object(
  {
    handle: int,
    command: str,
    status: jobStatus,
    attached: {
      type: 'string',
      enum: ['this', 'other', 'none'],
      description: 'Who started it: this session, another session still connected, or a session that has ended.',
    },
    files: FILES,
    mode: { type: 'string', enum: ['pty', 'pipes'] },
    description: str,
    directory: str,
    durationMs: num,
    awaitingInput: { ...bool, description: 'The job waits for input at its terminal now.' },
    exitCode: intOrNull,
    signal: intOrNull,
    liveBackgroundPids: { ...pids, description: "An ended job's background processes still alive." },
    detachedPids: { ...pids, description: 'The processes the running job started that detached from it (setsid, double fork, nohup).' },
    persistError: { ...str, description: "What the job's files lack and why." },
    lastLine: str,
  },
  ['handle', 'command', 'status', 'attached', 'files', 'mode', 'durationMs', 'lastLine'],
);

const FINISHED_JOB = object({ handle: int, command: str, status: jobStatus, exitCode: intOrNull, signal: intOrNull, files: FILES });

const JOBS = object({
  next: NEXT,
  running: { type: 'array', items: RUNNING_JOB, description: 'Jobs still running, or whose background processes are.' },
  finished: { type: 'array', items: FINISHED_JOB, description: 'Jobs that finished since jobs was last called.' },
});

/** `KillResult` (index.d.ts), or what is known of a job that had already ended. */
const KILL = object(
  {
    handle: int,
    status: jobStatus,
    next: NEXT,
    files: FILES,
    exitCode: intOrNull,
    signal: intOrNull,
    escalated: { ...bool, description: 'SIGKILL was needed after the grace period.' },
    survivors: { ...pids, description: 'Processes of the job still alive after the kill (then the call failed).' },
    wasRunning: bool,
    backgroundPids: { ...pids, description: 'Background processes that were terminated too.' },
    alreadyFinished: { ...bool, description: 'The job had ended before; nothing was killed.' },
  },
  ['handle', 'status', 'next', 'files'],
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
