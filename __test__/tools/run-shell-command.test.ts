// run_shell_command through the tool class: every parameter, both formats, the errors, abort.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ToolErrorType, ToolParamsError } from '../../tools/index';
import { alive, eventually } from '../helpers';
import { field, handleOf, type ToolScratch, toolScratch } from './setup';

let s: ToolScratch;
let json: ToolScratch;
beforeAll(() => {
  s = toolScratch({ onAsk: 'allow' });
  json = toolScratch({ onAsk: 'allow', format: 'json' });
  mkdirSync(join(s.root, 'sub'));
});
afterAll(async () => {
  await s.cleanup();
  await json.cleanup();
});

describe('run_shell_command', () => {
  it('returns the labelled fields, a status line and a handle for a finished command', async () => {
    const r = await s.call('run_shell_command', { command: 'echo out; echo "$GEMINI_CLI"; exit 3', description: 'three' });
    expect(r.error).toBeUndefined();
    const text = r.llmContent;
    expect(handleOf(r)).toBeGreaterThan(0);
    expect(field(text, 'Command')).toBe('echo out; echo "$GEMINI_CLI"; exit 3');
    expect(field(text, 'Directory')).toBe('(root)');
    expect(field(text, 'Status')).toBe('exited with code 3');
    expect(text).toContain('Stdout: out\n1\n');
    expect(field(text, 'Stderr')).toBe('(in a terminal, stderr is part of Stdout)');
    expect(field(text, 'Error')).toBe('(none)');
    expect(field(text, 'Exit Code')).toBe('3');
    expect(field(text, 'Signal')).toBe('(none)');
    expect(field(text, 'Background PIDs')).toBe('(none)');
    expect(text).not.toMatch(/still running/);
    // Finished jobs are not left behind for `jobs`.
    expect(s.service.getActiveProcesses().find((p) => p.handle === handleOf(r))).toBeUndefined();
  });

  it('runs in `directory`, relative to the project root', async () => {
    const r = await s.call('run_shell_command', { command: 'pwd', directory: 'sub' });
    expect(field(r.llmContent, 'Directory')).toBe('sub');
    expect(r.llmContent).toContain(`Stdout: ${join(s.root, 'sub')}`);
  });

  it('returns at ai_callback_pattern and leaves the job running, with how to continue', async () => {
    const r = await s.call('run_shell_command', {
      command: "echo booting; sleep 0.2; echo 'ready on port 4242 (ok)'; sleep 30",
      ai_callback_pattern: 'ready on port \\d+ \\(ok\\)',
      ai_callback_delay: 60,
    });
    const h = handleOf(r);
    expect(field(r.llmContent, 'Status')).toBe('running (ai_callback_pattern "ready on port \\\\d+ \\\\(ok\\\\)" matched "ready on port 4242 (ok)")');
    expect(r.llmContent).toContain('Stdout: booting\nready on port 4242 (ok)');
    expect(r.llmContent).toContain(`The process is still running as handle ${h}: use send_input(handle=${h}`);
    expect(r.llmContent).toContain(`kill(handle=${h})`);
    expect(s.service.isPtyActive(h)).toBe(true);
    await s.service.kill(h);
  });

  it('returns after ai_callback_delay seconds with the job still running', async () => {
    const r = await s.call('run_shell_command', { command: 'echo tick; sleep 30', ai_callback_delay: 0.3 });
    const h = handleOf(r);
    expect(field(r.llmContent, 'Status')).toBe('running (still running after ai_callback_delay of 0.3s)');
    expect(r.returnDisplay).toBe(`Running in the background as handle ${h}.`);
    await s.service.kill(h);
  });

  it('reports background PIDs of `cmd &` and keeps them killable by handle', async () => {
    const r = await s.call('run_shell_command', { command: 'sleep 60 &' });
    const pids = field(r.llmContent, 'Background PIDs')!.split(', ').map(Number);
    expect(pids).toHaveLength(1);
    expect(field(r.llmContent, 'Status')).toMatch(/exited successfully \(exit code 0\); its background processes are still running/);
    expect(r.llmContent).toContain(`kill(handle=${handleOf(r)})`);
    const k = await s.call('kill', { handle: handleOf(r) });
    expect(k.error).toBeUndefined();
    expect(await eventually(() => !alive(pids[0]!))).toBe(true);
  });

  it('max_output_size keeps head and tail and names the file with the whole output', async () => {
    const r = await s.call('run_shell_command', { command: 'seq 1 5000', max_output_size: 400 });
    const h = handleOf(r);
    const file = join(s.ioDir, 'test', String(h), 'stdout.txt');
    expect(r.llmContent).toMatch(/\nOutput truncated: \d+ bytes in total; the middle was left out above\. The whole output is in /);
    expect(r.llmContent.endsWith(`The whole output is in ${file}`)).toBe(true);
    expect(r.llmContent).toMatch(/Stdout: 1\n2\n3\n/);
    expect(r.llmContent).toMatch(/\n4999\n5000\nStderr:/);
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(5001);
  });

  it('format json gives the JSON object plus handle and status', async () => {
    const r = await json.call('run_shell_command', { command: 'echo hi; exit 2' });
    const o = JSON.parse(r.llmContent);
    expect(o).toMatchObject({ stdout: 'hi\n', stderr: '', exitCode: 2, status: 'exited' });
    expect(o.pid).toBeGreaterThan(1);
    expect(o.handle).toBeGreaterThan(0);
    expect('signal' in o).toBe(false);
    expect('error' in o).toBe(false);
    expect('backgroundPids' in o).toBe(false);
    const killed = JSON.parse((await json.call('run_shell_command', { command: 'kill -9 $$' })).llmContent);
    expect(killed).toMatchObject({ exitCode: null, signal: 9, status: 'exited' });
    const killedText = await s.call('run_shell_command', { command: 'echo bye; kill -9 $$' });
    expect(field(killedText.llmContent, 'Status')).toBe('ended by signal 9 (SIGKILL)');
    expect(field(killedText.llmContent, 'Exit Code')).toBe('(none)');
    expect(field(killedText.llmContent, 'Signal')).toBe('9 (SIGKILL)');
    const bg = JSON.parse((await json.call('run_shell_command', { command: 'sleep 30 &' })).llmContent);
    expect(bg.backgroundPids).toHaveLength(1);
    await json.service.kill(bg.handle);
  });

  it('refuses command substitution before running anything (COMMAND_BLOCKED)', async () => {
    const marker = join(s.root, 'should-not-exist');
    for (const command of [`echo $(touch ${marker})`, `echo \`touch ${marker}\``, `cat <(touch ${marker})`]) {
      const r = await s.call('run_shell_command', { command });
      expect(r.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
      expect(r.llmContent).toMatch(/^Command blocked, nothing was run: .*substitution/);
    }
    expect(existsSync(marker)).toBe(false);
    // Quoted, it is only text.
    const ok = await s.call('run_shell_command', { command: "echo '$(not run)'" });
    expect(ok.llmContent).toContain('Stdout: $(not run)');
  });

  it('bad parameters are INVALID_PARAMS with a clear message; build() throws ToolParamsError', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /Missing required parameter 'command'/],
      [{ command: '' }, /'command': must not be empty/],
      [{ command: 'ls', ai_callback_delay: 'soon' }, /'ai_callback_delay': expected a number/],
      [{ command: 'ls', max_output_size: 0 }, /'max_output_size': must be at least 1/],
      [{ command: 'ls', dir_path: 'x' }, /Unknown parameter 'dir_path'.*directory/],
      [{ command: 'ls', ai_callback_delay: 1e9 }, /'ai_callback_delay': must be at most 86400/],
      [{ command: 'ls', max_output_size: 1e12 }, /'max_output_size': must be at most 67108864/],
      [{ command: `echo ${'x'.repeat(200_000)}` }, /'command': it is 200005 bytes; at most 131072/],
      ['ls', /expects an object/],
    ];
    for (const [params, message] of cases) {
      const r = await s.call('run_shell_command', params);
      expect(r.error?.type).toBe(ToolErrorType.INVALID_PARAMS);
      expect(r.error?.message).toMatch(message);
      expect(s.tools.run_shell_command.validate(params)).toMatch(message);
      expect(() => s.tools.run_shell_command.build(params)).toThrow(ToolParamsError);
    }
  });

  it('a directory outside the project is INVALID_DIRECTORY; a bad regex is INVALID_PATTERN', async () => {
    writeFileSync(join(s.root, 'file.txt'), 'x');
    for (const directory of ['/tmp', '..', 'sub/../..', 'missing', 'file.txt']) {
      const r = await s.call('run_shell_command', { command: 'true', directory });
      expect(r.error?.type).toBe(ToolErrorType.INVALID_DIRECTORY);
    }
    const p = await s.call('run_shell_command', { command: 'true', ai_callback_pattern: '(' });
    expect(p.error?.type).toBe(ToolErrorType.INVALID_PATTERN);
    expect(p.llmContent).toMatch(/invalid pattern/);
  });

  it('LIMIT_REACHED when the service is at its job limit', async () => {
    const small = toolScratch({ onAsk: 'allow' }, { maxJobs: 1 });
    try {
      const first = await small.call('run_shell_command', { command: 'sleep 30', ai_callback_delay: 0 });
      expect(field(first.llmContent, 'Status')).toMatch(/^running/);
      const second = await small.call('run_shell_command', { command: 'true' });
      expect(second.error?.type).toBe(ToolErrorType.LIMIT_REACHED);
    } finally {
      await small.cleanup();
    }
  });

  it('abort kills the job (with escalation) and returns what it printed, marked cancelled', async () => {
    const ac = new AbortController();
    const pending = s.call('run_shell_command', { command: "trap '' TERM; echo started; sleep 30", ai_callback_delay: 60 }, ac.signal);
    await eventually(() => s.service.getActiveProcesses().some((p) => p.command.includes('trap') && p.outputBytes > 0));
    ac.abort();
    const r = await pending;
    expect(r.cancelled).toBe(true);
    expect(field(r.llmContent, 'Status')).toMatch(/^cancelled by the user; the process was killed/);
    expect(r.llmContent).toContain('Stdout: started');
    expect(field(r.llmContent, 'Signal')).toBe('9 (SIGKILL)');
    const pid = (r.data as { pid: number }).pid;
    expect(await eventually(() => !alive(pid))).toBe(true);
  });

  it('a pattern in the very first output is reported as matched', async () => {
    for (let i = 0; i < 20; i += 1) {
      const r = await s.call('run_shell_command', { command: 'printf "ready> "; sleep 30', ai_callback_pattern: 'ready> ', ai_callback_delay: 20 });
      expect(r.data?.matched).toBe('ready> ');
      await s.service.kill(handleOf(r));
    }
  });

  it('an already aborted signal runs nothing', async () => {
    const ac = new AbortController();
    ac.abort();
    const marker = join(s.root, 'aborted-marker');
    const r = await s.call('run_shell_command', { command: `touch ${marker}` }, ac.signal);
    expect(r.cancelled).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});
