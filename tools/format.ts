// What the model reads: the texts of run_shell_command (labelled text or JSON),
// send_input, jobs, kill and shell_cmd, as docs/tools.md shows them.
import { constants } from 'node:os';
import { join } from 'node:path';

import type { InteractionResult, JobMode, ProcessInfo, RunResult } from '../contract/addon.js';
import { refusalHint, type SandboxSettingNames, sandboxLines } from './sandbox-text.js';

const SIGNAL_NAMES = new Map<number, string>(
  Object.entries(constants.signals).map(([name, num]) => [num as number, name]),
);

export function signalText(signal: number | null): string {
  if (signal === null) return '(none)';
  const name = SIGNAL_NAMES.get(signal);
  return name ? `${signal} (${name})` : String(signal);
}

/** `SIGTERM`, or `signal N` for a number without a name, or `no signal`. */
export function signalName(signal: number | null): string {
  if (signal === null) return 'no signal';
  return SIGNAL_NAMES.get(signal) ?? `signal ${signal}`;
}

/** How a job ended, as the end of "it ..." (`exited with code 0`, `was killed (SIGTERM)`). */
export function endText(end: { status: string; exitCode: number | null; signal: number | null }): string {
  switch (end.status) {
    case 'exited':
      return end.signal === null ? `exited with code ${end.exitCode}` : `was ended by ${signalName(end.signal)}`;
    case 'killed':
      return `was killed (${signalName(end.signal)})`;
    case 'timed_out':
      return `timed out and was killed (${signalName(end.signal)})`;
    case 'failed':
      return 'failed to start';
    default:
      return `is ${end.status}`;
  }
}

function block(text: string): string {
  if (text === '') return '(empty)';
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms / 100) / 10}s` : `${Math.round(ms / 1000)}s`;
}

/** The how-to-continue line for a job that is still running. */
export function continueLine(handle: number): string {
  return `The process is still running as handle ${handle}: use send_input(handle=${handle}, input="...") to interact with it, jobs to check on it, or kill(handle=${handle}) to stop it.`;
}

/**
 * The line being written at the end of `text` (after its last newline): a program's
 * prompt when it waits for input. Empty when the output ends with a newline: the text
 * before it is output or the echo of what was typed (`ed`'s append mode), not a prompt.
 */
export function promptOf(text: string): string {
  return text.slice(text.lastIndexOf('\n') + 1).trim();
}

/** What a job waiting for input at its terminal needs from the model. */
export function waitingLine(handle: number, output: string): string {
  const prompt = promptOf(output);
  return `The process is waiting for input${prompt ? ` at the prompt ${JSON.stringify(prompt)}` : ''}: answer with send_input(handle=${handle}, input="..."), or kill(handle=${handle}) to stop it. Waiting longer will not help.`;
}

export interface RunFacts {
  result: RunResult;
  /** Background PIDs still alive when the call returned. */
  liveBackground: number[];
  delaySeconds: number;
  pattern: string | undefined;
  cancelled: boolean;
  /** How the command ran (run_shell_command uses a terminal). */
  mode: JobMode;
  /** The setting names a sandbox refusal hint points at (sandbox-text.ts). */
  sandboxSettings?: SandboxSettingNames;
}

export function runStatusLine(f: RunFacts): string {
  const r = f.result;
  if (f.cancelled) return 'cancelled by the user; the process was killed. The output below is what it printed before that.';
  switch (r.status) {
    case 'running':
      return r.matched !== null
        ? `running (ai_callback_pattern ${JSON.stringify(f.pattern ?? '')} matched ${JSON.stringify(r.matched)})`
        : `running (still running after ai_callback_delay of ${f.delaySeconds}s)`;
    case 'awaiting_input': {
      const prompt = promptOf(r.output);
      return `running, waiting for input${prompt ? ` (prompt: ${JSON.stringify(prompt)})` : ''}`;
    }
    case 'exited': {
      const base = r.signal !== null
        ? `ended by signal ${signalText(r.signal)}`
        : r.exitCode === 0 ? 'exited successfully (exit code 0)' : `exited with code ${r.exitCode}`;
      return f.liveBackground.length > 0
        ? `${base}; its background processes are still running (PIDs ${f.liveBackground.join(', ')})`
        : base;
    }
    case 'killed':
      return `killed by signal ${signalText(r.signal)}`;
    case 'timed_out':
      return 'timed out and was killed';
    case 'failed':
      return 'failed to start';
  }
}

/** What a result says of its files: where the whole output is, only while they hold it all. */
interface FileFacts {
  outputDir: string | null;
  persistError: string | null;
  /** Pipes mode: the job wrote to stderr, which has a file of its own. */
  stderr?: string;
  /** The job was sandboxed: no sandboxed command can read the output files. */
  sandbox?: object | null;
}

/** The files that hold the whole output, or null when none does (off, incomplete, removed). */
function wholeOutputIn(r: FileFacts): string | null {
  if (r.outputDir === null || r.persistError !== null) return null;
  const stdout = join(r.outputDir, 'stdout.txt');
  return r.stderr ? `${stdout} and ${join(r.outputDir, 'stderr.txt')}` : stdout;
}

/** The line saying the output files are incomplete, and why (`persistError`). */
export function persistLine(r: { persistError: string | null }): string | null {
  return r.persistError === null ? null : `Output files incomplete: ${r.persistError}`;
}

export function truncationLine(r: FileFacts & { truncated: boolean; totalBytes: number }): string | null {
  if (!r.truncated) return null;
  const where = wholeOutputIn(r);
  // The output folders are hidden from every sandboxed job (docs/sandbox.md, "Secrets
  // and other jobs' output"): a `grep` of them in a later command would be refused.
  const unreadable = r.sandbox ? ' (sandboxed commands cannot read it: open it with a file tool, not the shell, or run the command again with less output)' : '';
  const whole = where
    ? `The whole output is in ${where}${unreadable}`
    : r.persistError !== null
      ? 'The output files do not hold all of it (see above).'
      : 'The whole output is not on disk (output persistence is off, or its folder was removed).';
  return `Output truncated: ${r.totalBytes} bytes in total; the middle was left out above. ${whole}`;
}

/** The labelled fields (docs/tools.md) plus a status line, the how-to-continue line and the truncation note. */
export function formatRunText(f: RunFacts): string {
  const r = f.result;
  const lines = [
    `Handle: ${r.handle}`,
    `Command: ${r.command}`,
    `Directory: ${r.directory === '.' || r.directory === '' ? '(root)' : r.directory}`,
    `Status: ${runStatusLine(f)}`,
    `Stdout: ${block(r.stdout)}`,
    // A terminal has one output stream: say so rather than claim stderr was empty.
    `Stderr: ${r.stderr === '' && f.mode === 'pty' && r.stdout !== '' ? '(in a terminal, stderr is part of Stdout)' : block(r.stderr)}`,
    `Error: ${r.error ?? '(none)'}`,
    `Exit Code: ${r.exitCode ?? '(none)'}`,
    `Signal: ${signalText(r.signal)}`,
    `Background PIDs: ${r.backgroundPids.length > 0 ? r.backgroundPids.join(', ') : '(none)'}`,
    ...sandboxLines(r, f.sandboxSettings),
  ];
  if (r.status === 'running') lines.push(continueLine(r.handle));
  else if (r.status === 'awaiting_input') lines.push(waitingLine(r.handle, r.output));
  else if (f.liveBackground.length > 0) {
    lines.push(`Its background processes keep running: use kill(handle=${r.handle}) to stop them, jobs to check on them.`);
  }
  const p = persistLine(r);
  if (p) lines.push(p);
  const t = truncationLine(r);
  if (t) lines.push(t);
  return lines.join('\n');
}

/**
 * The JSON object of docs/tools.md (`stdout, stderr, exitCode, signal, error, pid, backgroundPids`;
 * signal and error omitted when empty, exitCode null after a signal), plus `handle` and
 * `status` so a running job can be continued, and `outputFile` when truncated.
 */
export function formatRunJson(f: RunFacts): string {
  const r = f.result;
  const out: Record<string, unknown> = {
    stdout: r.stdout,
    stderr: r.stderr,
    exitCode: r.exitCode,
  };
  if (r.signal !== null) out.signal = r.signal;
  if (r.error !== null) out.error = r.error;
  else if (f.cancelled) out.error = 'cancelled by the user; the process was killed';
  if (r.pid !== null) out.pid = r.pid;
  if (r.backgroundPids.length > 0) out.backgroundPids = r.backgroundPids;
  out.handle = r.handle;
  out.status = f.cancelled ? 'cancelled' : r.status;
  if (r.persistError !== null) out.persistError = r.persistError;
  const where = wholeOutputIn({ ...r, stderr: undefined });
  if (r.truncated && where) out.outputFile = where;
  if (r.sandbox) {
    out.sandbox = { write: r.sandbox.write, network: r.sandbox.network, tcpPorts: r.sandbox.tcpPorts };
    const hint = refusalHint(r, f.sandboxSettings);
    if (hint) out.sandboxHint = hint;
  }
  return JSON.stringify(out);
}

export interface InteractionFacts {
  result: InteractionResult;
  input: string;
  keys: string[];
  appendNewline: boolean;
  pattern: string | undefined;
  delaySeconds: number;
  patternTimeoutMs: number;
  cancelled: boolean;
  /** The job's folder and what its files lack (`getResult`), for a truncated reply. */
  outputDir: string | null;
  persistError: string | null;
}

export function interactionStatusLine(f: InteractionFacts): string {
  const r = f.result;
  if (f.cancelled) return 'cancelled by the user; the process was killed';
  switch (r.status) {
    case 'matched':
      return `ai_callback_pattern ${JSON.stringify(f.pattern ?? '')} matched ${JSON.stringify(r.matched)}`;
    case 'delay_elapsed':
      return `waited ${f.delaySeconds}s (ai_callback_delay)`;
    case 'timed_out':
      return `ai_callback_pattern ${JSON.stringify(f.pattern ?? '')} did not appear within ${seconds(f.patternTimeoutMs)}`;
    case 'exited':
      return r.signal !== null
        ? `the process was ended by signal ${signalText(r.signal)}`
        : `the process exited with code ${r.exitCode}`;
    case 'awaiting_input': {
      const prompt = promptOf(r.output);
      return `the process is waiting for input${prompt ? ` (prompt: ${JSON.stringify(prompt)})` : ''}`;
    }
  }
}

export function formatInteraction(f: InteractionFacts): string {
  const r = f.result;
  const sent = JSON.stringify(f.input + (f.appendNewline ? '\n' : ''));
  const lines = [
    `Handle: ${r.handle}`,
    `Input: ${sent}${f.keys.length > 0 ? ` then keys ${f.keys.join(' ')}` : ''}`,
    `Status: ${interactionStatusLine(f)}`,
    `Output: ${block(r.output)}`,
  ];
  if (r.status === 'awaiting_input') lines.push(waitingLine(r.handle, r.output));
  else if (r.running) lines.push(continueLine(r.handle));
  else lines.push(`The process is no longer running: it ${endText({ status: 'exited', exitCode: r.exitCode, signal: r.signal })}.`);
  if (r.truncated) {
    const where = wholeOutputIn(f);
    lines.push(`Output truncated: the middle was left out above.${where ? ` The whole output is in ${where}` : ''}`);
    const p = persistLine(f);
    if (p) lines.push(p);
  }
  return lines.join('\n');
}

export function formatJob(p: ProcessInfo, liveBackground: number[], now: number): string {
  const lines = [
    `Handle: ${p.handle}`,
    `PID: ${p.pid}`,
    `Command: ${p.command}`,
  ];
  if (p.description) lines.push(`Description: ${p.description}`);
  lines.push(`Directory: ${p.directory === '.' ? '(root)' : p.directory}`);
  lines.push(`Duration: ${Math.max(0, Math.floor((now - p.startedAt) / 1000))}s`);
  if (p.status === 'running') lines.push(p.awaitingInput ? 'Status: running, waiting for input' : 'Status: running');
  else {
    lines.push(
      `Status: its shell ${endText(p)}; background processes still running`,
    );
  }
  // A daemon's job another session started (docs/daemon.md): it is this session's to use too.
  if (p.attached === 'none') lines.push('Started by: an earlier session (it ran on in the daemon; input, output and kill work from here)');
  else if (p.attached === 'other') lines.push('Started by: another session that is still connected');
  if (liveBackground.length > 0) lines.push(`Background PIDs: ${liveBackground.join(', ')}`);
  // A running job's processes that left it (setsid, a double fork, nohup); an ended
  // job's are its background PIDs, listed above.
  if (p.status === 'running' && p.detachedPids.length > 0) {
    lines.push(`Detached PIDs: ${p.detachedPids.join(', ')} (left the job's session or shell; kill(handle=${p.handle}) ends them too)`);
  }
  lines.push(containmentLine(p.containment));
  if (p.lastLine) lines.push(`Last output: ${p.lastLine}`);
  const files = persistLine(p);
  if (files) lines.push(files);
  return lines.join('\n');
}

/** What holds a job's processes together, and what that leaves open (docs/reliability.md). */
export function containmentLine(mode: ProcessInfo['containment']): string {
  switch (mode) {
    case 'cgroup':
      return 'Containment: cgroup (everything it starts is ended with it)';
    case 'job-object':
      return 'Containment: job object (everything it starts is ended with it)';
    case 'process-tree':
      return "Containment: process tree (no cgroup here: a process that detaches after the job's shell ended can outlive kill)";
  }
}

export interface ShellCmdFacts {
  command: string;
  parameters: string[];
  result: RunResult;
  timeoutMs: number;
  cancelled: boolean;
  sandboxSettings?: SandboxSettingNames;
}

/** Quotes a word for display the way a shell would need it. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  // Control characters read best (and stay one line) in bash's $'...' form.
  if (/[\x00-\x1f\x7f]/.test(word)) {
    const escaped = word.replace(/[\\']/g, (c) => `\\${c}`).replace(/[\x00-\x1f\x7f]/g, (c) => {
      const named: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };
      return named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
    });
    return `$'${escaped}'`;
  }
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** shell_cmd's text (docs/tools.md). */
export function formatShellCmd(f: ShellCmdFacts): string {
  const r = f.result;
  const lines = [
    `Command: ${[f.command, ...f.parameters].map(shellQuote).join(' ')}`,
    `Executed at: ${new Date(r.startedAt).toISOString()}`,
    `Duration: ${r.durationMs}ms`,
  ];
  if (f.cancelled) lines.push('Error: Command was cancelled by the user and killed');
  else if (r.status === 'failed') lines.push(`Error: ${r.error ?? 'the command could not be started'}`);
  else if (r.status === 'timed_out') lines.push(`Error: Command timed out after ${f.timeoutMs}ms and was killed`);
  else if (r.signal !== null) lines.push(`Error: Command was terminated by signal ${signalText(r.signal)}`);
  else if (r.exitCode !== 0) lines.push(`Error: Command exited with code ${r.exitCode}`);
  else lines.push('Exit code: 0');
  if (r.stdout !== '') lines.push('', 'Standard Output:', block(r.stdout));
  if (r.stderr !== '') lines.push('', 'Standard Error:', block(r.stderr));
  if (r.stdout === '' && r.stderr === '' && r.status !== 'failed') lines.push('', '(no output)');
  const p = persistLine(r);
  if (p) lines.push('', p);
  const t = truncationLine(r);
  if (t) lines.push('', t);
  const sandbox = sandboxLines(r, f.sandboxSettings);
  if (sandbox.length > 0) lines.push('', ...sandbox);
  return lines.join('\n');
}
