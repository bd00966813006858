// Runs one command through upstream's ShellExecutionService (@google/gemini-cli-core
// 0.61.0, node-pty + @xterm/headless) and through the adapter, the same way, and
// records what a caller sees: the result and the event sequence.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ShellExecutionService as Upstream } from '@google/gemini-cli-core/dist/src/services/shellExecutionService.js';
import { NoopSandboxManager } from '@google/gemini-cli-core/dist/src/services/sandboxManager.js';

import {
  type AnsiOutput,
  ShellExecutionService as Compat,
  type ShellExecutionConfig,
  type ShellOutputEvent,
} from '../../compat/gemini-compat';

export { Compat, Upstream };

export type Impl = 'upstream' | 'compat';
export type EventKind = ShellOutputEvent['type'];

export interface Step {
  /** Write `text` once the output so far matches `after` (or after `delayMs`). */
  after?: RegExp;
  delayMs?: number;
  text: string;
}

export interface Case {
  name: string;
  cmd: string;
  /** Relative to the scratch project. */
  cwd?: string;
  abortAfterMs?: number;
  input?: Step[];
  config?: Partial<ShellExecutionConfig>;
}

export interface Observed {
  output: string;
  exitCode: number | null;
  signal: number | null;
  aborted: boolean;
  error: string | null;
  executionMethod: string;
  pid: number | undefined;
  /** Event kinds with repeats of the same kind collapsed into one. */
  kinds: EventKind[];
  events: ShellOutputEvent[];
  /** The text of the last data event (joined string chunks, or the last grid's lines). */
  streamed: string;
  /** PTY: the last grid sent, cell by cell with attributes (see `styledRows`). */
  styled: string[];
}

export function gridText(grid: AnsiOutput): string {
  return grid.map((line) => line.map((t) => t.text).join('').replace(/\s+$/u, '')).join('\n');
}

/**
 * A grid cell by cell: `char fg bg flags` per cell, so that two serialisations that
 * split tokens differently compare equal. Trailing plain blanks (upstream pads rows to
 * the terminal width) are dropped; the cursor cell is kept (it is drawn inverted).
 */
export function styledRows(grid: AnsiOutput): string[] {
  const rows = grid.map((line) => {
    const cells: string[] = [];
    for (const t of line) {
      const flags = `${t.bold ? 'b' : ''}${t.italic ? 'i' : ''}${t.underline ? 'u' : ''}${t.dim ? 'd' : ''}${t.inverse ? 'r' : ''}`;
      for (const ch of t.text) cells.push(`${ch} ${t.fg || '-'} ${t.bg || '-'} ${flags || '-'}`);
    }
    while (cells.length > 0 && cells[cells.length - 1] === '  - - -') cells.pop();
    return cells.join('|');
  });
  while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
  return rows;
}

export function collapse(kinds: EventKind[]): EventKind[] {
  return kinds.filter((k, i) => i === 0 || kinds[i - 1] !== k);
}

let base: string | undefined;
export function project(): string {
  if (!base) {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-compat-')));
    mkdirSync(join(base, 'sub', 'deeper'), { recursive: true });
  }
  return base;
}
export function removeProject(): void {
  if (base) rmSync(base, { recursive: true, force: true });
  base = undefined;
}

export function config(extra: Partial<ShellExecutionConfig> = {}): ShellExecutionConfig {
  return {
    sanitizationConfig: {
      allowedEnvironmentVariables: [],
      blockedEnvironmentVariables: [],
      enableEnvironmentVariableRedaction: false,
    },
    sandboxManager: new NoopSandboxManager(),
    sessionId: 'compat-test',
    terminalWidth: 80,
    terminalHeight: 30,
    showColor: true,
    ...extra,
  } as ShellExecutionConfig;
}

// A limit only against a hang: a 10 MB flood through upstream's node-pty and xterm on a
// machine busy many times over has taken longer than a minute.
const RUN_LIMIT_MS = 240_000;

export async function observe(impl: Impl, c: Case, pty: boolean): Promise<Observed> {
  const service = (impl === 'upstream' ? Upstream : Compat) as unknown as typeof Compat;
  const events: ShellOutputEvent[] = [];
  let seen = '';
  let styled: string[] = [];
  const controller = new AbortController();
  const onEvent = (e: ShellOutputEvent): void => {
    events.push(e);
    if (e.type === 'data') {
      if (typeof e.chunk === 'string') seen += e.chunk;
      else {
        seen = gridText(e.chunk);
        styled = styledRows(e.chunk);
      }
    }
  };
  const cwd = c.cwd ? join(project(), c.cwd) : project();
  const handle = await service.execute(c.cmd, cwd, onEvent, controller.signal, pty, config(c.config));
  const timers: NodeJS.Timeout[] = [];
  if (c.abortAfterMs !== undefined) timers.push(setTimeout(() => controller.abort(), c.abortAfterMs));
  const feeding = (async () => {
    for (const step of c.input ?? []) {
      const deadline = Date.now() + (step.delayMs ?? 10_000);
      while (Date.now() < deadline && !(step.after && step.after.test(seen))) {
        await new Promise((r) => setTimeout(r, 20));
      }
      if (handle.pid !== undefined) service.writeToPty(handle.pid, step.text);
    }
  })();
  let limit: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    handle.result,
    new Promise<never>((_, reject) => {
      limit = setTimeout(() => reject(new Error(`${impl} did not finish ${c.name}`)), RUN_LIMIT_MS);
    }),
  ]);
  clearTimeout(limit);
  timers.forEach(clearTimeout);
  await feeding;
  // Upstream may deliver its exit event a tick after the result (child_process path).
  await new Promise((r) => setTimeout(r, 20));
  return {
    output: result.output,
    exitCode: result.exitCode,
    signal: result.signal,
    aborted: result.aborted,
    error: result.error ? result.error.message : null,
    executionMethod: result.executionMethod,
    pid: result.pid,
    kinds: collapse(events.map((e) => e.type)),
    events,
    streamed: seen,
    styled,
  };
}
