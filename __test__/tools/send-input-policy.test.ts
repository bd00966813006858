// send_input to a shell is checked line by line like run_shell_command (real bash, sh and
// python3 in PTYs); input to other programs is text and passes unchecked.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ConfirmationOutcome, createShellTools, type ShellToolsConfig, ToolErrorType } from '../../tools/index';
import { shellKind, splitShellInput } from '../../tools/shell-input';
import { eventually } from '../helpers';
import { connect } from '../mcp/setup';
import { field, handleOf, type ToolScratch, toolScratch } from './setup';

const never = new AbortController().signal;
const DENY_RM: ShellToolsConfig = { policy: { excludeTools: ['run_shell_command(rm)'] }, onAsk: 'allow' };

let s: ToolScratch;
beforeAll(() => {
  s = toolScratch(DENY_RM, {});
});
afterAll(() => s.cleanup());

const victim = () => join(s.root, 'x');
beforeEach(() => writeFileSync(victim(), 'keep'));

/** Tools over the same service (so the same session state) with another policy. */
const toolsWith = (config: ShellToolsConfig) => createShellTools(s.service, { projectRoot: s.root, ...config });

/** An interactive shell in the tool's PTY, at its prompt. */
async function startShell(program: string): Promise<number> {
  const r = await s.call('run_shell_command', { command: `PS1='P> ' ${program}`, ai_callback_pattern: 'P> ' });
  expect(field(r.llmContent, 'Status')).toMatch(/ai_callback_pattern "P> " matched/);
  const h = handleOf(r);
  expect(await eventually(() => foreground(h) === program.split(' ')[0])).toBe(true);
  return h;
}

const foreground = (h: number) => s.service.getActiveProcesses().find((p) => p.handle === h)?.foreground ?? null;
const everything = (h: number) => s.service.getResult(h, { maxOutputSize: 1 << 20 }).output;

describe('send_input to a shell is checked like run_shell_command', () => {
  it('a denied line is refused and not written; an allowed line runs', async () => {
    const h = await startShell('bash --norc');
    const r = await s.call('send_input', { handle: h, input: 'rm -rf x', ai_callback_pattern: 'P> ' });
    expect(r.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(r.llmContent).toMatch(/^Input blocked, nothing was written: handle \d+ is at a bash prompt/);
    expect(r.llmContent).toContain('line "rm -rf x": `rm -rf x` is blocked by excludeTools entry `run_shell_command(rm)`');
    const ok = await s.call('send_input', { handle: h, input: 'echo alive-$((40+2))', ai_callback_pattern: 'P> ' });
    expect(ok.error).toBeUndefined();
    expect(ok.llmContent).toContain('alive-42');
    expect(existsSync(victim())).toBe(true);
    expect(everything(h)).not.toContain('rm -rf');
    await s.service.kill(h);
  });

  it('command substitution is refused; a multi-line input with one denied line writes nothing', async () => {
    const h = await startShell('bash --norc');
    const sub = await s.call('send_input', { handle: h, input: 'echo $(rm -rf x)', ai_callback_delay: 0.3 });
    expect(sub.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    const multi = await s.call('send_input', { handle: h, input: 'echo first-line\nrm -rf x\necho third', ai_callback_delay: 0.3 });
    expect(multi.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(multi.llmContent).toContain('Lines: "echo first-line", "rm -rf x", "echo third"');
    // Enter completes a line like a newline does.
    const keyed = await s.call('send_input', { handle: h, input: 'rm -rf x', keys: ['Enter'], ai_callback_delay: 0.3 });
    expect(keyed.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    const out = everything(h);
    expect(out).not.toContain('first-line');
    expect(out).not.toContain('rm -rf');
    expect(existsSync(victim())).toBe(true);
    await s.service.kill(h);
  });
});

describe('lines split over calls, unfinished commands and edited lines', () => {
  it('a partial line is checked as if complete, and again with its rest when a later call completes it', async () => {
    const h = await startShell('bash --norc');
    const start = await s.call('send_input', { handle: h, input: 'r', append_newline: false, ai_callback_delay: 0.3 });
    expect(start.error).toBeUndefined(); // `r` asks, and onAsk 'allow' lets it through
    const rest = await s.call('send_input', { handle: h, input: 'm -rf x', ai_callback_delay: 0.3 });
    expect(rest.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(rest.llmContent).toContain('line "rm -rf x"');
    // C-c drops the shell's line; after it the shell's line is empty again.
    await s.call('send_input', { handle: h, input: '', keys: ['C-c'], ai_callback_pattern: 'P> ' });
    const after = await s.call('send_input', { handle: h, input: 'echo clean', ai_callback_pattern: 'P> ' });
    expect(after.error).toBeUndefined();
    expect(after.llmContent).toContain('clean');
    expect(existsSync(victim())).toBe(true);
    await s.service.kill(h);
  });

  it('a line is also checked with the unfinished command it continues (an open quote)', async () => {
    const h = await startShell('bash --norc');
    const open = await s.call('send_input', { handle: h, input: "echo 'abc", ai_callback_delay: 0.3 });
    expect(open.error).toBeUndefined();
    const close = await s.call('send_input', { handle: h, input: "def'; rm -rf x", ai_callback_delay: 0.5 });
    expect(close.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(close.llmContent).toContain('`rm -rf x` is blocked');
    expect(existsSync(victim())).toBe(true);
    await s.service.kill(h);
  });

  it('keys that edit the line make it ask, since the shell runs another text than the one sent', async () => {
    const h = await startShell('bash --norc');
    const strict = toolsWith({ policy: { coreTools: ['run_shell_command(echo)'] }, onAsk: 'deny' });
    // `xrm -rf x`, Home, Delete would run `rm -rf x`.
    const r = await strict.send_input.buildAndExecute({ handle: h, input: 'echo x', keys: ['Home', 'Delete', 'Enter'], ai_callback_delay: 0.3 });
    expect(r.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(r.llmContent).toContain('keys or control characters');
    const tab = strict.send_input.build({ handle: h, input: 'echo a\tb' });
    expect(tab.policy().decision).toBe('deny');
    expect(strict.send_input.build({ handle: h, input: 'echo ok' }).policy().decision).toBe('allow');
    await s.service.kill(h);
  });
});

describe('ask, confirmation and session approvals', () => {
  it("onAsk 'deny' refuses a line the allowlist does not cover; 'confirm' gives exec details naming the lines", async () => {
    const h = await startShell('bash --norc');
    const strict = toolsWith({ policy: { coreTools: ['run_shell_command(echo)'] }, onAsk: 'deny' });
    const refused = await strict.send_input.buildAndExecute({ handle: h, input: 'echo ok\ntouch made-by-ask', ai_callback_delay: 0.3 });
    expect(refused.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(refused.llmContent).toContain('only allowed commands may run here');
    expect(existsSync(join(s.root, 'made-by-ask'))).toBe(false);

    const confirming = toolsWith({ policy: { coreTools: ['run_shell_command(echo)'] } });
    const inv = confirming.send_input.build({ handle: h, input: 'echo ok\ntouch made-by-ask' });
    expect(inv.policy().decision).toBe('ask');
    const details = await inv.shouldConfirmExecute(never);
    if (!details) throw new Error('expected a confirmation');
    expect(details.type).toBe('exec');
    expect(details.title).toBe('Confirm Shell Input');
    expect(details.command).toBe('echo ok\ntouch made-by-ask');
    expect(details.rootCommands).toEqual(['echo', 'touch']);
    await details.onConfirm(ConfirmationOutcome.ProceedAlways);
    // The same approval run_shell_command would add: both tools now allow touch.
    expect(confirming.run_shell_command.build({ command: 'touch y' }).policy().decision).toBe('allow');
    const again = confirming.send_input.build({ handle: h, input: 'touch made-by-ask', ai_callback_pattern: 'P> ' });
    expect(again.policy().decision).toBe('allow');
    expect((await again.execute(never)).error).toBeUndefined();
    expect(existsSync(join(s.root, 'made-by-ask'))).toBe(true);
    s.tools.run_shell_command.state.sessionApprovals.clear();
    await s.service.kill(h);
  });
});

describe('input to other programs is text', () => {
  it('python3 started inside bash gets `rm -rf x` unchecked; after exit() bash is checked again', async () => {
    const h = await startShell('bash --norc');
    await s.call('send_input', { handle: h, input: 'python3 -q', ai_callback_pattern: '>>> ' });
    expect(await eventually(() => /^python/.test(foreground(h) ?? ''))).toBe(true);
    const py = await s.call('send_input', { handle: h, input: 'rm -rf x', ai_callback_pattern: '>>> ' });
    expect(py.error).toBeUndefined();
    expect(py.llmContent).toContain('SyntaxError'); // python read it as python
    await s.call('send_input', { handle: h, input: 'exit()', ai_callback_pattern: 'P> ' });
    expect(await eventually(() => foreground(h) === 'bash')).toBe(true);
    const sh = await s.call('send_input', { handle: h, input: 'rm -rf x', ai_callback_delay: 0.3 });
    expect(sh.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(existsSync(victim())).toBe(true);
    await s.service.kill(h);
  });

  it.each(['sh', 'dash'])('%s as the shell is checked too', async (program) => {
    const h = await startShell(program);
    const r = await s.call('send_input', { handle: h, input: 'rm -rf x', ai_callback_delay: 0.3 });
    expect(r.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(r.llmContent).toContain(`at a ${program} prompt`);
    const ok = await s.call('send_input', { handle: h, input: 'echo still-$((1+1))', ai_callback_pattern: 'P> ' });
    expect(ok.llmContent).toContain('still-2');
    expect(existsSync(victim())).toBe(true);
    await s.service.kill(h);
  });
});

describe('splitting input into shell lines', () => {
  it('names: shells with and without a login dash; other programs are not shells', () => {
    expect(['bash', '-bash', 'sh', 'dash', 'zsh', 'ksh'].map(shellKind)).toEqual(Array(6).fill('parsed'));
    expect(shellKind('fish')).toBe('other');
    expect(['python3', 'ed', 'sqlite3', 'gdb', 'less', null].map(shellKind)).toEqual(Array(6).fill(null));
  });

  it('newlines, \\r and Enter end lines; C-c drops the partial line; Space is text', () => {
    const none = { text: '', edited: false };
    const r = splitShellInput({ text: 'ec', edited: false }, 'ho a\rls', ['Space', 'C-c', 'Enter'], false);
    expect(r.lines.map((l) => l.text)).toEqual(['echo a', '']);
    expect(r.lines[1]?.afterCancel).toBe(true);
    expect(splitShellInput(none, 'a\nb', [], true).lines.map((l) => l.text)).toEqual(['a', 'b']);
    expect(splitShellInput(none, 'tail', [], false).partial).toEqual({ text: 'tail', edited: false, afterCancel: false });
    expect(splitShellInput(none, 'x', ['Left'], false).partial.edited).toBe(true);
  });
});

describe('the MCP server checks the same way', () => {
  it('--deny run_shell_command(rm): send_input of `rm -rf x` to its bash is refused and not written', async () => {
    const m = await connect(['--deny', 'run_shell_command(rm)']);
    try {
      writeFileSync(join(m.root, 'x'), 'keep');
      const started = await m.call('run_shell_command', { command: "PS1='P> ' bash --norc", ai_callback_pattern: 'P> ' });
      const h = Number(field(started.text, 'Handle'));
      const r = await m.call('send_input', { handle: h, input: 'rm -rf x', ai_callback_delay: 0.3 });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/^Input blocked, nothing was written/);
      const ok = await m.call('send_input', { handle: h, input: 'echo via-mcp', ai_callback_pattern: 'P> ' });
      expect(ok.isError).toBe(false);
      expect(ok.text).toContain('via-mcp');
      expect(existsSync(join(m.root, 'x'))).toBe(true);
    } finally {
      await m.cleanup();
    }
  });
});
