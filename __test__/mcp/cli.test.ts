// The `native-shell-service` command: demo, run, help, bad usage.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, ensureBuilt } from './setup';

let cwd: string;
beforeAll(() => {
  ensureBuilt();
  cwd = realpathSync(mkdtempSync(join(tmpdir(), 'nss-cli-')));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function cli(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // A scratch HOME: `run` keeps job output under ~/.gemini/io by default.
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, HOME: cwd },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('native-shell-service command', () => {
  it('mcp names on start what holds its jobs, as MCP logging, not on stderr (the server stops at the end of its input)', async () => {
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli-test', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ];
    const r = await cli(['mcp'], messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    const { ShellExecutionService } = createRequire(import.meta.url)('../../index.js') as typeof import('../../index.js');
    const mode = new ShellExecutionService({ persistOutput: false }).containment;
    const said = r.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { method?: string; params?: { level: string; data: string } })
      .filter((m) => m.method === 'notifications/message');
    expect(said.map((m) => m.params)).toContainEqual({
      level: 'info',
      logger: 'native-shell-service',
      data: expect.stringContaining(`tools for ${cwd} (containment: ${mode})`),
    });
    expect(r.stderr).toBe('');
  });

  it('demo runs the three seed workflows and exits 0', async () => {
    const r = await cli(['demo']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('━━ 1/3 Edit a file with ed ━━');
    expect(r.stdout).toContain(`▶ run_shell_command({"command":"ed -p 'ED> ' hello.txt","ai_callback_pattern":"ED> "})`);
    expect(r.stdout).toContain('✔ hello.txt was written by ed and reads "Hello, world!"');
    expect(r.stdout).toContain('  │ 55\n');
    expect(r.stdout).toContain('✔ python printed fib(10) = 55');
    expect(r.stdout).toMatch(/✔ the server answered on port \d+, was listed by jobs, and kill freed the port/);
    expect(r.stdout.trimEnd().endsWith('3/3 workflows worked.')).toBe(true);
  });

  it('run prints the result and exits with the command\'s exit code', async () => {
    const r = await cli(['run', 'echo hi from run; exit 3']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^Handle: 1\nCommand: echo hi from run; exit 3\nDirectory: \(root\)\nStatus: exited with code 3\nStdout: hi from run\n/);
    const json = await cli(['run', '--json', '--', 'echo', 'as', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ stdout: 'as json\n', exitCode: 0, status: 'exited' });
  });

  it('run waits for the exit unless given a pattern or delay', async () => {
    const slow = await cli(['run', 'sleep 0.5; echo late']);
    expect(slow.stdout).toContain('Stdout: late');
    const early = await cli(['run', '--pattern', 'ready', 'echo ready; sleep 30']);
    expect(early.code).toBe(0);
    expect(early.stdout).toContain('Status: running (ai_callback_pattern "ready" matched "ready")');
  });

  it('run refuses command substitution', async () => {
    const r = await cli(['run', 'echo $(id)']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Command blocked, nothing was run/);
  });

  it('a project root that does not exist is a one-line error', async () => {
    for (const args of [['run', '--project-root', '/nonexistent-root', 'true'], ['mcp', '--project-root', '/nonexistent-root']]) {
      const r = await cli(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^native-shell-service: project root \/nonexistent-root cannot be used: .* \((INVALID_DIRECTORY|INVALID_ARGUMENT)\)\n$/);
    }
  });

  it('help, version and bad usage', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/native-shell-service demo/);
    expect(help.stdout).toMatch(/native-shell-service mcp/);
    const version = await cli(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [[], ['bogus'], ['run'], ['mcp', '--format', 'xml'], ['demo', 'extra'], ['run', '--delay']]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
  });
});
