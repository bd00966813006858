// The MCP server through the SDK's own client over stdio.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DECLARATIONS } from '../../tools/index';
import { alive, eventually } from '../helpers';
import { connect, exited, type McpSession } from './setup';

let m: McpSession;
beforeAll(async () => {
  m = await connect();
});
afterAll(() => m.cleanup());

const handle = (text: string) => Number(/^Handle: (\d+)$/m.exec(text)?.[1]);

describe('mcp server', () => {
  it('lists the five tools with the declarations\' schemas and descriptions', async () => {
    const { tools } = await m.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(DECLARATIONS.map((d) => d.name));
    for (const d of DECLARATIONS) {
      const t = tools.find((x) => x.name === d.name)!;
      expect(t.description).toBe(d.description);
      expect(t.inputSchema).toEqual(d.parametersJsonSchema);
    }
    expect(tools.find((t) => t.name === 'jobs')?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'kill')?.annotations?.destructiveHint).toBe(true);
    expect(m.client.getServerVersion()?.name).toBe('native-shell-service');
  });

  it('run_shell_command returns the tool text', async () => {
    const r = await m.call('run_shell_command', { command: 'echo hello from mcp' });
    expect(r.isError).toBe(false);
    expect(r.text).toMatch(/^Handle: \d+\nCommand: echo hello from mcp\nDirectory: \(root\)\nStatus: exited successfully \(exit code 0\)\nStdout: hello from mcp\n/);
  });

  it('an interactive session: run, send_input, jobs, kill', async () => {
    const start = await m.call('run_shell_command', { command: "ed -p 'ED> ' notes.txt", ai_callback_pattern: 'ED> ' });
    const h = handle(start.text);
    expect(start.text).toContain(`The process is still running as handle ${h}`);
    await m.call('send_input', { handle: h, input: 'a', ai_callback_delay: 0.2 });
    await m.call('send_input', { handle: h, input: 'written over mcp', ai_callback_delay: 0.2 });
    await m.call('send_input', { handle: h, input: '.', ai_callback_pattern: 'ED> ' });
    const w = await m.call('send_input', { handle: h, input: 'w', ai_callback_pattern: 'ED> ' });
    expect(w.text).toContain('Output: w\n17\nED> ');
    const jobs = await m.call('jobs');
    expect(jobs.text).toContain(`Handle: ${h}\n`);
    expect(jobs.text).toContain("Command: ed -p 'ED> ' notes.txt");
    const k = await m.call('kill', { handle: h });
    expect(k.isError).toBe(false);
    expect(k.text).toMatch(new RegExp(`^Process ${h} \\(ed -p 'ED> ' notes.txt\\) terminated successfully`));
    expect(readFileSync(join(m.root, 'notes.txt'), 'utf8')).toBe('written over mcp\n');
    expect((await m.call('jobs')).text).toBe('No running background processes.');
  });

  it("accepts and ignores the Gemini CLI's wait_for_previous hint", async () => {
    const r = await m.call('run_shell_command', { command: 'echo hinted', wait_for_previous: true });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('Stdout: hinted');
  });

  it('shell_cmd returns its documented text', async () => {
    const r = await m.call('shell_cmd', { command: 'printf', parameters: ['%s', '$(id)'] });
    expect(r.isError).toBe(false);
    expect(r.text).toMatch(/^Command: printf %s '\$\(id\)'\nExecuted at: .*Z\nDuration: \d+ms\nExit code: 0\n\nStandard Output:\n\$\(id\)$/);
  });

  it('tool errors are isError results and the server keeps serving', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['run_shell_command', {}, /^Error \(INVALID_PARAMS\): Missing required parameter 'command'/],
      ['run_shell_command', { command: 'echo $(id)' }, /^Command blocked, nothing was run: .*substitution/],
      ['run_shell_command', { command: 'true', directory: '../..' }, /^Error \(INVALID_DIRECTORY\)/],
      ['run_shell_command', { command: 'true', ai_callback_pattern: '(' }, /^Error \(INVALID_PATTERN\)/],
      ['send_input', { handle: 999, input: 'x' }, /^No process has handle 999/],
      ['kill', { handle: 999 }, /^No process has handle 999/],
      ['kill', { handle: 'x' }, /^Error \(INVALID_PARAMS\)/],
      ['shell_cmd', { command: 'no-such-program-xyz' }, /^Command: no-such-program-xyz\n[\s\S]*Error: .*no-such-program-xyz/],
      ['no_such_tool', {}, /^Unknown tool 'no_such_tool'/],
    ];
    for (const [name, args, text] of cases) {
      const r = await m.call(name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(r.text).toMatch(text);
    }
    expect((await m.call('run_shell_command', { command: 'echo still here' })).text).toContain('Stdout: still here');
  });

  it('a cancelled request kills its job', async () => {
    const ac = new AbortController();
    const pending = m.call('run_shell_command', { command: 'echo $$ > pid.txt; exec sleep 120', ai_callback_delay: 60 }, { signal: ac.signal });
    const pidFile = join(m.root, 'pid.txt');
    await eventually(() => {
      try {
        return readFileSync(pidFile, 'utf8').trim() !== '';
      } catch {
        return false;
      }
    }, 10_000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    ac.abort();
    await expect(pending).rejects.toThrow();
    expect(await eventually(() => !alive(pid), 10_000)).toBe(true);
  });
});

describe('mcp server options and lifecycle', () => {
  it('--allow makes an allowlist, --deny refuses, in the run_shell_command(...) syntax', async () => {
    const s = await connect(['--allow', 'run_shell_command(echo)', '--allow', 'run_shell_command(ls)', '--deny', 'run_shell_command(rm)']);
    try {
      expect((await s.call('run_shell_command', { command: 'echo allowed' })).text).toContain('Stdout: allowed');
      const notAllowed = await s.call('run_shell_command', { command: 'touch x' });
      expect(notAllowed.isError).toBe(true);
      expect(notAllowed.text).toMatch(/^Command blocked, nothing was run: .*only allowed commands may run here/);
      const denied = await s.call('shell_cmd', { command: 'rm', parameters: ['-f', 'x'] });
      expect(denied.isError).toBe(true);
      expect(denied.text).toMatch(/excludeTools/);
    } finally {
      await s.cleanup();
    }
  });

  it('--format json returns the documented JSON objects', async () => {
    const s = await connect(['--format', 'json']);
    try {
      const r = await s.call('run_shell_command', { command: 'echo json' });
      expect(JSON.parse(r.text)).toMatchObject({ stdout: 'json\n', stderr: '', exitCode: 0, status: 'exited' });
    } finally {
      await s.cleanup();
    }
  });

  it('bad options exit with a usage message', async () => {
    const { spawnSync } = await import('node:child_process');
    const { BIN } = await import('./setup');
    const r = spawnSync(process.execPath, [BIN, 'mcp', '--allow', 'git'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/not of the form run_shell_command/);
  });

  it('no process is left after the client closes', async () => {
    const s = await connect();
    const serverPid = s.transport.pid!;
    const fg = await s.call('run_shell_command', { command: 'echo "pid=$$ ok"; exec sleep 300', ai_callback_pattern: 'pid=\\d+ ok' });
    const bg = await s.call('run_shell_command', { command: 'sleep 301 &' });
    const pids = [Number(/pid=(\d+)/.exec(fg.text)![1]), Number(/^Background PIDs: (\d+)$/m.exec(bg.text)![1])];
    expect(pids.every(alive)).toBe(true);
    await s.close();
    expect(await exited(serverPid)).toBe(true);
    for (const pid of pids) expect(await eventually(() => !alive(pid), 10_000)).toBe(true);
    await s.cleanup();
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('%s to the server kills its jobs', async (signal) => {
    const s = await connect();
    const serverPid = s.transport.pid!;
    const fg = await s.call('run_shell_command', { command: 'echo "pid=$$ ok"; exec sleep 300', ai_callback_pattern: 'pid=\\d+ ok' });
    const pid = Number(/pid=(\d+)/.exec(fg.text)![1]);
    process.kill(serverPid, signal);
    expect(await exited(serverPid)).toBe(true);
    expect(await eventually(() => !alive(pid), 10_000)).toBe(true);
    await s.cleanup();
  });
});
