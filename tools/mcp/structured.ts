// The `structuredContent` of a tool result: built for the model. Claude Code and Codex
// hand the model `structuredContent` as JSON and drop the text `content`, so everything
// the model needs is here once: the state, what to do next (`next`, the text's hint
// lines), the job's files as URIs (`files`), where to read on when the output was cut
// (`readOn`), and the output itself — one copy, last, so a client that cuts a long
// result (Codex keeps about 12 KB) cuts the output, not the hints. The shapes are in
// tools/mcp/output-schemas.ts; `ToolResult.data` (tools/types.ts) keeps the service's
// full records for other hosts.
import type { AnyShellExecutionService as ShellExecutionService, RunResult } from '../../contract/addon.js';
import { type FinishedJob, liveBackgroundPids, sharedState } from '../base.js';
import { continueLine, endText, persistLine, waitingLine } from '../format.js';
import { refusalHint, type SandboxSettingNames } from '../sandbox-text.js';
import type { ToolName, ToolResult } from '../types.js';
import { jobResourceUri } from './job-resources.js';

export type Structured = Record<string, unknown>;

/**
 * What `jobs` will report as finished, taken before it runs: it reports (and forgets)
 * the jobs that finished unseen, plus those it finds finished itself, which it adds to
 * the shared state (tools/base.ts `settle`) during the call.
 */
export interface JobsSnapshot {
  unreported: number[];
  known: Set<number>;
}

export function snapshotJobs(service: ShellExecutionService): JobsSnapshot {
  const state = sharedState(service);
  return { unreported: [...state.unreported], known: new Set(state.finished.keys()) };
}

/** A job's files as resource URIs (tools/mcp/job-resources.ts serves them). */
export function jobFiles(handle: number, stderr = false): Record<string, string> {
  const job = String(handle);
  return {
    stdout: jobResourceUri(job, 'stdout.txt'),
    ...(stderr ? { stderr: jobResourceUri(job, 'stderr.txt') } : {}),
    info: jobResourceUri(job, 'info.json'),
  };
}

/** The service's marker for the middle it left out of a result's output (src/output/bounded.rs). */
const OMITTED = /\[\.\.\. (\d+) bytes omitted[^\]\n]*\]/;

/**
 * Where the part left out of `text` begins in the job's file `file`: the marker's
 * position is the head's length in bytes, which is the file's offset (the file holds
 * the same text from its first byte on). Null when nothing was left out.
 */
function readOn(handle: number, file: string, text: string): Structured | null {
  const m = OMITTED.exec(text);
  if (!m) return null;
  const offset = Buffer.byteLength(text.slice(0, m.index));
  return { uri: jobResourceUri(String(handle), file, offset), offset, omittedBytes: Number(m[1]) };
}

/** The hint for a cut output: which field was cut, and where the rest is. */
function truncatedNext(where: Structured | null, field: string, total: string): string {
  return where
    ? `Output truncated: ${where.omittedBytes as number} bytes in the middle were left out of ${field} (${total}). Read them from ${where.uri as string} (readOn).`
    : `Output truncated (${total}): the middle was left out of ${field}.`;
}

type RunData = RunResult & { liveBackgroundPids?: number[]; cancelled?: boolean };

/** run_shell_command (one terminal stream: `output`) and shell_cmd (pipes: `stdout` and `stderr`). */
function runStructured(name: 'run_shell_command' | 'shell_cmd', r: RunData, settings?: SandboxSettingNames): Structured {
  const live = r.liveBackgroundPids ?? [];
  const cancelled = r.cancelled === true;
  const next: string[] = [];
  if (cancelled) next.push('The call was cancelled and the process killed; the output is what it printed before that.');
  else if (r.status === 'running') next.push(continueLine(r.handle));
  else if (r.status === 'awaiting_input') next.push(waitingLine(r.handle, r.output));
  else if (live.length > 0) next.push(`Its background processes keep running: use kill(handle=${r.handle}) to stop them, jobs to check on them.`);
  const hint = refusalHint(r, settings);
  if (hint) next.push(hint);
  const pipes = name === 'shell_cmd';
  const cut = pipes ? readOn(r.handle, 'stdout.txt', r.stdout) : readOn(r.handle, 'stdout.txt', r.output);
  if (r.truncated) next.push(truncatedNext(cut, pipes ? 'stdout' : 'output', `${r.totalBytes} bytes in total`));
  const p = persistLine(r);
  if (p) next.push(p);
  // Only what tells the model something: a field that says nothing (no match, no
  // background process, not cut, not cancelled) is left out, as the text leaves it out.
  return {
    handle: r.handle,
    status: r.status,
    ...(r.error !== null ? { error: r.error } : {}),
    exitCode: r.exitCode,
    signal: r.signal,
    next,
    ...(r.status !== 'failed' ? { files: jobFiles(r.handle, pipes && r.stderr !== '') } : {}),
    ...(cut ? { readOn: cut } : {}),
    command: r.command,
    ...(r.directory !== '.' && r.directory !== '' ? { directory: r.directory } : {}),
    ...(r.matched !== null ? { matched: r.matched } : {}),
    ...(r.backgroundPids.length > 0 ? { backgroundPids: r.backgroundPids } : {}),
    ...(live.length > 0 ? { liveBackgroundPids: live } : {}),
    ...(r.truncated ? { truncated: true, totalBytes: r.totalBytes, outputDir: r.outputDir } : {}),
    ...(r.persistError !== null ? { persistError: r.persistError } : {}),
    ...(r.sandbox ? { sandbox: r.sandbox } : {}),
    ...(cancelled ? { cancelled: true } : {}),
    durationMs: r.durationMs,
    // The output once, last. A terminal has one stream (stderr is part of it); pipes keep two.
    ...(pipes ? { stdout: r.stdout, ...(r.stderr !== '' ? { stderr: r.stderr } : {}) } : { output: r.output }),
  };
}

function sendInputStructured(d: Structured): Structured {
  const handle = d.handle as number;
  const output = d.output as string;
  const next: string[] = [];
  if (d.cancelled) next.push('The call was cancelled and the process killed.');
  else if (d.status === 'awaiting_input') next.push(waitingLine(handle, output));
  else if (d.running) next.push(continueLine(handle));
  else next.push(`The process is no longer running: it ${endText({ status: 'exited', exitCode: d.exitCode as number | null, signal: d.signal as number | null })}.`);
  // The reply starts somewhere in the job's output, at an offset the service does not
  // say: the whole output is named, not a place in it.
  if (d.truncated) next.push(`Output truncated: the middle of the reply was left out of output. The job's whole output: ${jobFiles(handle).stdout as string}`);
  return {
    handle,
    status: d.status,
    running: d.running,
    ...(d.running ? {} : { exitCode: d.exitCode, signal: d.signal }),
    next,
    files: jobFiles(handle),
    ...(d.matched !== null ? { matched: d.matched } : {}),
    ...(d.truncated ? { truncated: true } : {}),
    ...(d.cancelled ? { cancelled: true } : {}),
    output,
  };
}

async function jobsStructured(service: ShellExecutionService, result: ToolResult, before: JobsSnapshot): Promise<Structured> {
  const handles = new Set((result.data?.running as number[] | undefined) ?? []);
  const running = (await service.getActiveProcesses())
    .filter((job) => handles.has(job.handle))
    .map((job) => {
      const live = liveBackgroundPids(job);
      return {
        handle: job.handle,
        command: job.command,
        status: job.status,
        attached: job.attached,
        files: jobFiles(job.handle),
        mode: job.mode,
        ...(job.description ? { description: job.description } : {}),
        ...(job.directory !== '.' && job.directory !== '' ? { directory: job.directory } : {}),
        durationMs: job.durationMs,
        ...(job.awaitingInput ? { awaitingInput: true } : {}),
        ...(job.status !== 'running' ? { exitCode: job.exitCode, signal: job.signal } : {}),
        ...(live.length > 0 ? { liveBackgroundPids: live } : {}),
        ...(job.status === 'running' && job.detachedPids.length > 0 ? { detachedPids: job.detachedPids } : {}),
        ...(job.persistError !== null ? { persistError: job.persistError } : {}),
        lastLine: job.lastLine,
      };
    });
  const { finished } = sharedState(service);
  const settledNow = [...finished.keys()].filter((h) => !before.known.has(h));
  const reported = [...new Set([...before.unreported, ...settledNow])]
    .map((h) => finished.get(h))
    .filter((f): f is FinishedJob => f !== undefined)
    .map(({ handle, command, status, exitCode, signal }) => ({ handle, command, status, exitCode, signal, files: jobFiles(handle) }));
  const next: string[] = [];
  if (running.length === 0) next.push('No job is running.');
  else {
    next.push('A running job takes input with send_input(handle=H, input="..."), stops with kill(handle=H); its whole output is files.stdout.');
    const others = running.filter((j) => j.attached === 'other').map((j) => j.handle);
    const earlier = running.filter((j) => j.attached === 'none').map((j) => j.handle);
    if (earlier.length > 0) next.push(`Started by a session that has ended (it ran on in the daemon; input, output and kill work from here): ${earlier.join(', ')}.`);
    if (others.length > 0) next.push(`Started by another session that is still connected (take care: it may be using them): ${others.join(', ')}.`);
  }
  return { next, running, finished: reported };
}

function killStructured(d: Structured): Structured {
  const handle = d.handle as number;
  const next = d.alreadyFinished ? ['The job had ended before; nothing was killed.'] : [];
  return { ...d, next, files: jobFiles(handle) };
}

/**
 * The structured result, or undefined for a failure that carries no facts (invalid
 * parameters, a blocked command, an unknown handle): those are `isError` results, which
 * MCP clients accept without `structuredContent`, and their text is the whole story.
 */
export async function structuredResult(
  name: ToolName,
  result: ToolResult,
  service: ShellExecutionService,
  jobsBefore: JobsSnapshot | null,
  settings?: SandboxSettingNames,
): Promise<Structured | undefined> {
  if (name === 'jobs' && jobsBefore && !result.error) return jobsStructured(service, result, jobsBefore);
  const data = result.data;
  if (!data) return undefined;
  switch (name) {
    case 'run_shell_command':
    case 'shell_cmd':
      return runStructured(name, data as unknown as RunData, settings);
    case 'send_input':
      return sendInputStructured(data);
    case 'kill':
      return killStructured(data);
    default:
      return { ...data };
  }
}
