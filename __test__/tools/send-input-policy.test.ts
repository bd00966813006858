// send_input to a shell is checked line by line like run_shell_command (real bash, sh and
// python3 in PTYs); input to other programs is text and passes unchecked.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ConfirmationOutcome, createShellTools, type ShellToolsConfig, ToolErrorType } from '../../tools/index';
import { shellKind, splitShellInput } from '../../tools/shell-input';
import { eventually } from '../helpers';
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
