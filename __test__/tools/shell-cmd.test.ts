// shell_cmd (docs/tools.md): argv mode, no shell, timeout, cwd, its documented text.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ToolErrorType } from '../../tools/index';
import { alive, eventually } from '../helpers';
import { type ToolScratch, toolScratch } from './setup';

let s: ToolScratch;
beforeAll(() => {
  s = toolScratch({ onAsk: 'allow' });
  mkdirSync(join(s.root, 'src'));
  writeFileSync(join(s.root, 'src', 'a.ts'), 'export const a = 1;\n');
});
afterAll(() => s.cleanup());

describe('shell_cmd', () => {
  it('returns its text: Command, Executed at, Duration, Exit code, Standard Output', async () => {
    const r = await s.call('shell_cmd', { command: 'ls', parameters: ['-1', 'src'] });
    expect(r.error).toBeUndefined();
    const lines = r.llmContent.split('\n');
    expect(lines[0]).toBe('Command: ls -1 src');
    expect(lines[1]).toMatch(/^Executed at: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines[2]).toMatch(/^Duration: \d+ms$/);
    expect(lines.slice(3)).toEqual(['Exit code: 0', '', 'Standard Output:', 'a.ts']);
  });

  it('passes parameters literally: no globbing, variables or substitution', async () => {
    const r = await s.call('shell_cmd', { command: 'printf', parameters: ['%s|', '*', '$HOME', '$(id)', 'a b', "it's"] });
    expect(r.llmContent).toContain("Command: printf '%s|' '*' '$HOME' '$(id)' 'a b' 'it'\\''s'");
    expect(r.llmContent).toContain("Standard Output:\n*|$HOME|$(id)|a b|it's|");
  });

  it('a failure shows Error and Standard Error, as its text does', async () => {
    const r = await s.call('shell_cmd', { command: 'ls', parameters: ['/nonexistent-directory'] });
    expect(r.error).toBeUndefined();
    const lines = r.llmContent.split('\n');
    expect(lines[3]).toBe('Error: Command exited with code 2');
    expect(lines.slice(4, 6)).toEqual(['', 'Standard Error:']);
    expect(lines[6]).toMatch(/^ls: cannot access '\/nonexistent-directory': No such file or directory$/);
    expect(r.llmContent).not.toContain('Standard Output:');
  });

  it('timeout kills the program and says so', async () => {
    const r = await s.call('shell_cmd', { command: 'bash', parameters: ['-c', 'echo partial; exec sleep 30'], timeout: 300 });
    expect(r.llmContent).toContain('Error: Command timed out after 300ms and was killed');
    expect(r.llmContent).toContain('Standard Output:\npartial');
    expect(r.returnDisplay).toBe('Timed out after 300ms.');
  });

  it('a timeout is the service\'s: the job and its history entry say timed_out', async () => {
    const r = await s.call('shell_cmd', { command: 'bash', parameters: ['-c', 'echo timeout-history; exec sleep 30'], timeout: 300 });
    const data = r.data as { handle: number; status: string; pid: number };
    expect(data.status).toBe('timed_out');
    expect(alive(data.pid)).toBe(false);
    const entry = s.service.getExecutionHistory(20).find((e) => e.handle === data.handle);
    expect(entry).toMatchObject({ command: 'bash', status: 'timed_out' });
  });

  it('a program that cannot start is the service\'s failed result, under its history entry\'s handle', async () => {
    const r = await s.call('shell_cmd', { command: 'no-such-program-abc', parameters: ['x'] });
    expect(r.error?.type).toBe(ToolErrorType.SPAWN_FAILED);
    const data = r.data as { handle: number; status: string; error: string; pid: number | null };
    const entry = s.service.getExecutionHistory(20).find((e) => e.command === 'no-such-program-abc');
    expect(entry).toMatchObject({ status: 'failed', error: data.error });
    expect(data).toMatchObject({ handle: entry!.handle, status: 'failed', pid: null });
    expect(r.error?.message).toBe(entry!.error);
  });

  it('cwd: relative to the project, or absolute inside it; outside is INVALID_DIRECTORY', async () => {
    const rel = await s.call('shell_cmd', { command: 'pwd', cwd: 'src' });
    expect(rel.llmContent).toContain(`Standard Output:\n${join(s.root, 'src')}`);
    const abs = await s.call('shell_cmd', { command: 'pwd', cwd: join(s.root, 'src') });
    expect(abs.llmContent).toContain(`Standard Output:\n${join(s.root, 'src')}`);
    for (const cwd of ['/tmp', '..', 'nope']) {
      const r = await s.call('shell_cmd', { command: 'pwd', cwd });
      expect(r.error?.type).toBe(ToolErrorType.INVALID_DIRECTORY);
    }
  });

  it('finds the project root itself when the config does not give it', async () => {
    const { createShellTools } = await import('../../tools/index');
    const tools = createShellTools(s.service, { onAsk: 'allow' });
    const r = await tools.shell_cmd.buildAndExecute({ command: 'pwd', cwd: join(s.root, 'src') });
    expect(r.llmContent).toContain(`Standard Output:\n${join(s.root, 'src')}`);
  });

  it('an unknown program is SPAWN_FAILED with its text', async () => {
    const r = await s.call('shell_cmd', { command: 'no-such-program-xyz', parameters: [] });
    expect(r.error?.type).toBe(ToolErrorType.SPAWN_FAILED);
    expect(r.llmContent).toMatch(/^Command: no-such-program-xyz\nExecuted at: .*\nDuration: \d+ms\nError: .*no-such-program-xyz/);
  });

  it('bad parameters are INVALID_PARAMS', async () => {
    for (const params of [{}, { command: 'ls', parameters: 'x' }, { command: 'ls', timeout: -5 }, { command: 'ls', args: [] }]) {
      const r = await s.call('shell_cmd', params);
      expect(r.error?.type).toBe(ToolErrorType.INVALID_PARAMS);
    }
  });

  it('is recorded in the service execution history', async () => {
    await s.call('shell_cmd', { command: 'echo', parameters: ['history-mark'] });
    const entry = s.service.getExecutionHistory(5).find((e) => e.args?.includes('history-mark'));
    expect(entry).toMatchObject({ command: 'echo', args: ['history-mark'], exitCode: 0 });
  });

  it('abort kills the program and marks the result cancelled', async () => {
    const ac = new AbortController();
    const pending = s.call('shell_cmd', { command: 'bash', parameters: ['-c', 'echo begun; echo $$ >&2; exec sleep 30'] }, ac.signal);
    await eventually(() => s.service.getActiveProcesses().some((p) => p.command === 'bash' && p.outputBytes > 0));
    ac.abort();
    const r = await pending;
    expect(r.cancelled).toBe(true);
    expect(r.llmContent).toContain('Error: Command was cancelled by the user and killed');
    expect(r.llmContent).toContain('Standard Output:\nbegun');
    const pid = Number(/Standard Error:\n(\d+)/.exec(r.llmContent)![1]);
    expect(await eventually(() => !alive(pid))).toBe(true);
  });
});
