// The package root as a Gemini CLI extension (gemini-extension.json): the real CLI 0.61
// links it in a scratch HOME and runs scripted model turns offline through the
// extension's server (__test__/mcp/gemini-home.ts). The release archives:
// extension-archive.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { portOpen } from '../e2e/gemini';
import { GEMINI, geminiHome, type GeminiHome, type Turn } from './gemini-home';
import { ensureBuilt, ROOT } from './setup';

const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8'));
const server = Object.keys(manifest.mcpServers)[0] as string;

let g: GeminiHome;
let root: string;
let env: Record<string, string>;

beforeAll(() => {
  ensureBuilt();
  g = geminiHome();
  ({ root, env } = g);
  g.extensions('link', ROOT);
}, 180_000);
afterAll(() => g?.cleanup());

const session = (turns: Turn[], prompt: string) => g.session(server, turns, prompt);

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
