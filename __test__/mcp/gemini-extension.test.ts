// The package root as a Gemini CLI extension (gemini-extension.json): the real CLI 0.61
// links it in a scratch HOME and runs scripted model turns offline through the
// extension's server, as __test__/e2e/gemini.ts does with settings.json.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { portOpen } from '../e2e/gemini';
import { ensureBuilt, ROOT } from './setup';

const GEMINI = join(ROOT, 'node_modules', '.bin', 'gemini');
const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8'));
const server = Object.keys(manifest.mcpServers)[0] as string;

let base: string;
let root: string;
let env: Record<string, string>;

beforeAll(() => {
  ensureBuilt();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-ext-')));
  root = join(base, 'project');
  const home = join(base, 'home');
  for (const dir of [join(home, '.gemini'), root, join(base, 'tmp')]) mkdirSync(dir, { recursive: true });
  // Without these the CLI tries the network for usage statistics, telemetry and updates.
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    }),
  );
  env = { ...(process.env as Record<string, string>), HOME: home, TMPDIR: join(base, 'tmp'), GEMINI_API_KEY: 'dummy', GEMINI_CLI_TRUST_WORKSPACE: 'true', NO_COLOR: '1' };
  delete env.GOOGLE_API_KEY;
  delete env.GOOGLE_CLOUD_PROJECT;
  execFileSync(GEMINI, ['extensions', 'link', ROOT, '--consent'], { cwd: root, env, encoding: 'utf8', timeout: 120_000, stdio: 'pipe' });
}, 180_000);
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

type Turn = { call: string; args: Record<string, unknown>; builtin?: boolean } | { text: string };
interface Call {
  name: string;
  status: string;
  output: string;
}

/** Runs the CLI with scripted model turns; returns each tool call with its result. */
function session(turns: Turn[], prompt: string): Promise<Call[]> {
  const file = join(base, `turns-${Date.now()}.jsonl`);
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
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('the Gemini CLI extension', () => {
  it('is linked with its context file, its server and the built-in shell excluded', () => {
    // The CLI prints the list on stderr.
    const run = spawnSync(GEMINI, ['extensions', 'list'], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
    const list = `${run.stdout}${run.stderr}`;
    expect(manifest.version).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    expect(list).toContain(`native-shell-service (${manifest.version})`);
    expect(list).toContain(join(ROOT, manifest.contextFileName));
    expect(existsSync(join(ROOT, manifest.contextFileName))).toBe(true);
    expect(list).toMatch(/MCP servers:\s+shell/);
    expect(list).toMatch(/Excluded tools:\s+ShellTool/);
  });

  it('runs a REPL and a server through the extension: send_input, jobs, kill; the built-in shell is gone', async () => {
    const port = await freePort();
    const calls = await session(
      [
        { call: 'run_shell_command', args: { command: 'echo builtin > builtin.txt' }, builtin: true },
        { call: 'run_shell_command', args: { command: 'python3 -q', ai_callback_pattern: '>>> ' } },
        { call: 'send_input', args: { handle: 1, input: "open('sum.txt', 'w').write(str(sum(range(10))))", ai_callback_pattern: '>>> ' } },
        { call: 'run_shell_command', args: { command: `python3 -m http.server ${port} --bind 127.0.0.1`, ai_callback_pattern: 'Serving HTTP' } },
        { call: 'jobs', args: {} },
        { call: 'kill', args: { handle: 2 } },
        { call: 'send_input', args: { handle: 1, input: 'exit()' } },
        { text: 'Done.' },
      ],
      'Sum 0..9 in Python into sum.txt, then start a web server, list the jobs and stop it.',
    );
    expect(calls.map((c) => c.name)).toEqual(['run_shell_command', 'run_shell_command', 'send_input', 'run_shell_command', 'jobs', 'kill', 'send_input']);
    expect(calls[0]!.status).toBe('error'); // the built-in shell is excluded
    expect(existsSync(join(root, 'builtin.txt'))).toBe(false);
    expect(calls.slice(1).map((c) => c.status)).toEqual(Array(6).fill('success'));
    expect(readFileSync(join(root, 'sum.txt'), 'utf8')).toBe('45');
    expect(calls[3]!.output).toMatch(/^Handle: 2\n/);
    expect(calls[4]!.output).toContain('Handle: 1\n');
    expect(calls[4]!.output).toContain(`Command: python3 -m http.server ${port} --bind 127.0.0.1`);
    expect(calls[5]!.output).toMatch(/^Process 2 \(python3 -m http.server .*\) terminated successfully/);
    expect(await portOpen(port)).toBe(false);
    expect(calls[6]!.output).toContain('Status: the process exited with code 0');
  }, 180_000);
});
