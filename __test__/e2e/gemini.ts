// Runs the real Gemini CLI offline against a scratch project whose .gemini/settings.json
// registers `native-shell-service mcp` as the server "shell", with scripted model turns.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, ensureBuilt, ROOT } from '../mcp/setup';

export const GEMINI = join(ROOT, 'node_modules', '.bin', 'gemini');
/** MCP tools appear to the model as mcp_<server>_<tool>; the server name has no `_`. */
export const SERVER = 'shell';

/** A scripted model turn: a call of one of this server's tools (or, with `builtin`, of a Gemini CLI tool), or the final text. */
export type Turn = { call: string; args: Record<string, unknown>; builtin?: boolean } | { text: string };

export interface StreamEvent {
  type: string;
  tool_name?: string;
  tool_id?: string;
  parameters?: Record<string, unknown>;
  status?: string;
  output?: string;
  error?: { type?: string; message?: string };
  content?: string;
  [key: string]: unknown;
}

export interface GeminiRun {
  root: string;
  events: StreamEvent[];
  /** tool_use events joined with their tool_result, in order. */
  calls: Array<{ name: string; args: Record<string, unknown>; status: string; output: string }>;
  code: number | null;
  stderr: string;
  durationMs: number;
}

export interface GeminiProject {
  base: string;
  root: string;
  /**
   * `cli`: another build of the CLI's `bundle/gemini.js` (e2e/gemini-dropin.ts); `env`:
   * more of its environment (a variable given as `undefined` is removed from it).
   */
  run(turns: Turn[], prompt: string, options?: { cli?: string; env?: Record<string, string | undefined> }): Promise<GeminiRun>;
  /**
   * The command line of the CLI run interactively (no `-p`: its TUI, `prompt` its first
   * message) with the scripted turns, for a terminal the caller provides; the same
   * options as `run`.
   */
  interactive(turns: Turn[], prompt: string, options?: { cli?: string; env?: Record<string, string | undefined> }): { program: string; args: string[]; env: Record<string, string>; cwd: string };
  /** The raw text of every session transcript the CLI wrote (what the model was sent). */
  transcript(): string;
  cleanup(): void;
}

function responseLine(turn: Turn): string {
  const part =
    'call' in turn
      ? { functionCall: { name: turn.builtin ? turn.call : `mcp_${SERVER}_${turn.call}`, args: turn.args } }
      : { text: turn.text };
  return JSON.stringify({
    method: 'generateContentStream',
    response: [{ candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }] }],
  });
}

/**
 * A scratch HOME and project whose settings register this server as `shell`: the stdio
 * command with `serverArgs`, or `server` as given (a remote one: `{ url, type, headers }`).
 */
export function geminiProject(
  serverArgs: string[] = [],
  projectSettings: Record<string, unknown> = {},
  server?: Record<string, unknown>,
): GeminiProject {
  ensureBuilt();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-e2e-')));
  const home = join(base, 'home');
  const root = join(base, 'project');
  const tmp = join(base, 'tmp');
  for (const dir of [join(home, '.gemini'), join(root, '.gemini'), tmp]) mkdirSync(dir, { recursive: true });
  // Without these the CLI tries the network for usage statistics and telemetry.
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify(
      {
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(root, '.gemini', 'settings.json'),
    JSON.stringify(
      {
        ...projectSettings,
        mcpServers: {
          [SERVER]: server ?? {
            command: process.execPath,
            args: [BIN, 'mcp', '--project-root', root, '--io-dir', join(base, 'io'), ...serverArgs],
            trust: true,
          },
        },
      },
      null,
      2,
    ),
  );
  let runs = 0;
  /** The CLI's environment: offline, this project's HOME and temp, then `more` (`undefined` removes). */
  const cliEnv = (more: Record<string, string | undefined> = {}): Record<string, string> => {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HOME: home,
      TMPDIR: tmp,
      GEMINI_API_KEY: 'dummy',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      NO_COLOR: '1',
    };
    for (const [name, value] of Object.entries(more)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    delete env.GOOGLE_API_KEY;
    delete env.GOOGLE_CLOUD_PROJECT;
    return env;
  };
  return {
    base,
    root,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
    transcript() {
      const files: string[] = [];
      const walk = (dir: string) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) walk(path);
          else if (/^session-.*\.jsonl?$/.test(entry.name)) files.push(path);
        }
      };
      walk(join(home, '.gemini'));
      return files.map((f) => readFileSync(f, 'utf8')).join('\n');
    },
    interactive(turns, prompt, options = {}) {
      const file = join(base, `turns-${++runs}.jsonl`);
      writeFileSync(file, `${turns.map(responseLine).join('\n')}\n`);
      const env = cliEnv(options.env);
      // The TERM of a terminal the CLI's TUI can draw on (it is a PTY here).
      env.TERM = 'xterm-256color';
      // `-i`: the TUI submits the prompt itself once its configuration is ready (one typed
      // before that is queued, and its shell tool's PTY was then not focusable, with the
      // CLI's own service as with the drop-in: docs/gemini-compat.md).
      const args = ['-m', 'gemini-2.5-flash', '--yolo', '--fake-responses', file, '-i', prompt];
      return options.cli ? { program: process.execPath, args: [options.cli, ...args], env, cwd: root } : { program: GEMINI, args, env, cwd: root };
    },
    run(turns, prompt, options = {}) {
      const file = join(base, `turns-${++runs}.jsonl`);
      writeFileSync(file, `${turns.map(responseLine).join('\n')}\n`);
      const env = cliEnv(options.env);
      const started = Date.now();
      return new Promise((resolve, reject) => {
        const args = ['-m', 'gemini-2.5-flash', '--yolo', '-o', 'stream-json', '--fake-responses', file, '-p', prompt];
        const child = options.cli
          ? spawn(process.execPath, [options.cli, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
          : spawn(GEMINI, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => {
          const events: StreamEvent[] = [];
          for (const line of stdout.split('\n')) {
            if (!line.trim().startsWith('{')) continue;
            try {
              events.push(JSON.parse(line) as StreamEvent);
            } catch {
              // not an event line
            }
          }
          const results = new Map(events.filter((e) => e.type === 'tool_result').map((e) => [e.tool_id, e]));
          const calls = events
            .filter((e) => e.type === 'tool_use')
            .map((e) => {
              const r = results.get(e.tool_id);
              return {
                name: (e.tool_name ?? '').replace(`mcp_${SERVER}_`, ''),
                args: e.parameters ?? {},
                status: r?.status ?? 'missing',
                output: r?.output ?? r?.error?.message ?? '',
              };
            });
          resolve({ root, events, calls, code, stderr, durationMs: Date.now() - started });
        });
      });
    },
  };
}

/** Whether something listens on the loopback port (the scripted servers' check). */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
