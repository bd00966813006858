// A scratch HOME for the real Gemini CLI with an extension in it (linked from the
// checkout or installed from a folder), and offline sessions with scripted model turns
// through the extension's server, as __test__/e2e/gemini.ts does with settings.json.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ROOT } from './setup';

export const GEMINI = join(ROOT, 'node_modules', '.bin', 'gemini');

export type Turn = { call: string; args: Record<string, unknown>; builtin?: boolean } | { text: string };
export interface Call {
  name: string;
  status: string;
  output: string;
}

export interface GeminiHome {
  base: string;
  /** The project folder sessions run in. */
  root: string;
  env: Record<string, string>;
  /** `gemini extensions <args...> --consent` in the project. */
  extensions(...args: string[]): string;
  /** Runs the CLI with scripted model turns; returns each tool call with its result. */
  session(server: string, turns: Turn[], prompt: string): Promise<Call[]>;
  cleanup(): void;
}

export function geminiHome(): GeminiHome {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-ext-')));
  const root = join(base, 'project');
  const home = join(base, 'home');
  for (const dir of [join(home, '.gemini'), root, join(base, 'tmp')]) mkdirSync(dir, { recursive: true });
  // The extension's server runs its jobs in the daemon (mcp --daemon): one of this
  // scratch HOME's own, ended by `cleanup`.
  const run = join(base, 'run');
  mkdirSync(run, { mode: 0o700 });
  // Without these the CLI tries the network for usage statistics, telemetry and updates.
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    }),
  );
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOME: home,
    TMPDIR: join(base, 'tmp'),
    XDG_RUNTIME_DIR: run,
    GEMINI_API_KEY: 'dummy',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_COLOR: '1',
  };
  delete env.GOOGLE_API_KEY;
  delete env.GOOGLE_CLOUD_PROJECT;
  let runs = 0;
  return {
    base,
    root,
    env,
    extensions: (...args) =>
      execFileSync(GEMINI, ['extensions', ...args, '--consent'], { cwd: root, env, encoding: 'utf8', timeout: 120_000, stdio: 'pipe' }),
    cleanup: () => {
      stopScratchDaemons(run);
      rmSync(base, { recursive: true, force: true });
    },
    session(server, turns, prompt) {
      const file = join(base, `turns-${++runs}.jsonl`);
      const lines = turns.map((t) => {
        const part = 'call' in t ? { functionCall: { name: t.builtin ? t.call : `mcp_${server}_${t.call}`, args: t.args } } : { text: t.text };
        const candidates = [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }];
        return JSON.stringify({ method: 'generateContentStream', response: [{ candidates }] });
      });
      writeFileSync(file, `${lines.join('\n')}\n`);
      return new Promise((resolve, reject) => {
        const child = spawn(GEMINI, ['-m', 'gemini-2.5-flash', '--yolo', '-o', 'stream-json', '--fake-responses', file, '-p', prompt], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('close', () => {
          const events = stdout
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, any>);
          const results = new Map(events.filter((e) => e.type === 'tool_result').map((e) => [e.tool_id, e]));
          const calls = events
            .filter((e) => e.type === 'tool_use')
            .map((e) => {
              const r = results.get(e.tool_id);
              return { name: String(e.tool_name).replace(`mcp_${server}_`, ''), status: r?.status ?? 'missing', output: r?.output ?? r?.error?.message ?? '' };
            });
          if (calls.length === 0) reject(new Error(`no tool calls; stderr:\n${stderr}`));
          else resolve(calls);
        });
      });
    },
  };
}

/**
 * Ends (SIGTERM: it kills its jobs and removes its socket) every daemon serving a socket
 * under `dir`: found by its command line, which names the socket.
 */
function stopScratchDaemons(dir: string): void {
  if (process.platform !== 'linux') return;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const args = cmdline.split('\0');
    const socket = args[args.indexOf('--socket') + 1];
    if (args.indexOf('--socket') >= 0 && socket?.startsWith(`${dir}/`) && /native-shell-daemon/.test(args[0] ?? '')) {
      try {
        process.kill(Number(pid), 'SIGTERM');
      } catch {
        // gone already
      }
    }
  }
}
