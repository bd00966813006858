// send_input through the tool class: newline, delay, pattern, keys, exit, errors, abort.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ToolErrorType } from '../../tools/index';
import { alive, eventually } from '../helpers';
import { field, handleOf, type ToolScratch, toolScratch } from './setup';

let s: ToolScratch;
beforeAll(() => {
  s = toolScratch({ onAsk: 'allow', patternTimeoutMs: 400 });
});
afterAll(() => s.cleanup());

/** A line-echoing loop with a prompt, started through the tool. */
async function startRepl(): Promise<number> {
  const r = await s.call('run_shell_command', {
    command: `while IFS= read -r -p 'R> ' line; do echo "got[$line]"; done; echo bye`,
    ai_callback_pattern: 'R> ',
  });
  expect(field(r.llmContent, 'Status')).toMatch(/^running/);
  return handleOf(r);
}

/** Reads one line, answers, then stays busy (not reading): waits end by their delay or timeout. */
async function startBusyAfterOneLine(): Promise<number> {
  const r = await s.call('run_shell_command', { command: `IFS= read -r line; echo "got[$line]"; sleep 30` });
  expect(field(r.llmContent, 'Status')).toBe('running, waiting for input');
  return handleOf(r);
}

describe('send_input', () => {
  it('appends a newline by default and returns only the output after the input', async () => {
    const h = await startRepl();
    const r = await s.call('send_input', { handle: h, input: 'hello', ai_callback_pattern: 'R> ' });
    expect(r.error).toBeUndefined();
    expect(field(r.llmContent, 'Handle')).toBe(String(h));
    expect(field(r.llmContent, 'Input')).toBe('"hello\\n"');
    expect(field(r.llmContent, 'Status')).toBe('ai_callback_pattern "R> " matched "R> "');
    expect(r.llmContent).toContain('Output: hello\ngot[hello]\nR> ');
    expect(r.llmContent).toContain(`The process is still running as handle ${h}`);
    await s.service.kill(h);
  });

  it('append_newline false sends the text as is; a later newline completes the line', async () => {
    const h = await startRepl();
    const partial = await s.call('send_input', { handle: h, input: 'par', append_newline: false, ai_callback_delay: 5 });
    expect(field(partial.llmContent, 'Input')).toBe('"par"');
    // The line is not finished: the REPL still waits for input, and says so at once.
    expect(field(partial.llmContent, 'Status')).toBe('the process is waiting for input (prompt: "par")');
    expect(partial.llmContent).toContain(`The process is waiting for input at the prompt "par": answer with send_input(handle=${h}`);
    expect(partial.llmContent).not.toContain('got[');
    const rest = await s.call('send_input', { handle: h, input: 'tial', ai_callback_pattern: 'R> ' });
    expect(rest.llmContent).toContain('got[partial]');
    await s.service.kill(h);
  });

  it("names no prompt when the output ends a line (ed's append mode echoes the input)", async () => {
    const ed = await s.call('run_shell_command', { command: "ed -p 'ED> '", ai_callback_pattern: 'ED> ' });
    const h = handleOf(ed);
    const r = await s.call('send_input', { handle: h, input: 'a', ai_callback_delay: 5 });
    expect(field(r.llmContent, 'Status')).toBe('the process is waiting for input');
    expect(r.llmContent).toContain(`The process is waiting for input: answer with send_input(handle=${h}`);
    await s.service.kill(h);
  });

  it('without a pattern waits ai_callback_delay seconds', async () => {
    const h = await startBusyAfterOneLine();
    const r = await s.call('send_input', { handle: h, input: 'x', ai_callback_delay: 0.3 });
    expect(field(r.llmContent, 'Status')).toBe('waited 0.3s (ai_callback_delay)');
    expect(r.llmContent).toContain('got[x]');
    await s.service.kill(h);
  });

  it('returns as soon as the program waits for input again, long before the delay', async () => {
    const h = await startRepl();
    const t0 = Date.now();
    const r = await s.call('send_input', { handle: h, input: 'x', ai_callback_delay: 20 });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(field(r.llmContent, 'Status')).toBe('the process is waiting for input (prompt: "R>")');
    expect(r.llmContent).toContain('got[x]');
    await s.service.kill(h);
  });

  it('a pattern that never appears times out (after the configured pattern timeout)', async () => {
    const h = await startBusyAfterOneLine();
    const r = await s.call('send_input', { handle: h, input: 'y', ai_callback_pattern: 'NEVER-SEEN' });
    expect(r.error).toBeUndefined();
    expect(field(r.llmContent, 'Status')).toBe('ai_callback_pattern "NEVER-SEEN" did not appear within 0.4s');
    expect(r.llmContent).toContain('got[y]');
    await s.service.kill(h);
  });

  it('with a pattern, an explicit ai_callback_delay bounds the wait', async () => {
    const h = await startBusyAfterOneLine();
    const r = await s.call('send_input', { handle: h, input: 'z', ai_callback_pattern: 'NEVER-SEEN', ai_callback_delay: 0.2 });
    expect(field(r.llmContent, 'Status')).toBe('ai_callback_pattern "NEVER-SEEN" did not appear within 0.2s');
    expect(r.llmContent).toContain('got[z]');
    await s.service.kill(h);
  });

  it('an empty input without a newline only waits for more output', async () => {
    const r0 = await s.call('run_shell_command', { command: 'echo first; sleep 0.3; echo second; sleep 30', ai_callback_pattern: 'first' });
    const h = handleOf(r0);
    const r = await s.call('send_input', { handle: h, input: '', append_newline: false, ai_callback_pattern: 'second' });
    expect(field(r.llmContent, 'Input')).toBe('""');
    expect(field(r.llmContent, 'Status')).toBe('ai_callback_pattern "second" matched "second"');
    expect(r.llmContent).toContain('Output: second');
    await s.service.kill(h);
  });

  it('keys: C-c interrupts, C-d ends input; append_newline defaults to false with keys', async () => {
    const sleeper = await s.call('run_shell_command', { command: 'echo sleeping; sleep 30; echo woke', ai_callback_pattern: 'sleeping' });
    const hs = handleOf(sleeper);
    const c = await s.call('send_input', { handle: hs, input: '', keys: ['C-c'], ai_callback_delay: 5 });
    expect(field(c.llmContent, 'Input')).toBe('"" then keys C-c');
    expect(field(c.llmContent, 'Status')).toMatch(/^the process (exited with code 130|was ended by signal 2 \(SIGINT\))$/);
    expect(c.llmContent).not.toContain('woke');
    expect(c.llmContent).toContain('The process is no longer running');

    const h = await startRepl();
    const d = await s.call('send_input', { handle: h, input: '', keys: ['C-d'], ai_callback_delay: 5 });
    expect(field(d.llmContent, 'Status')).toBe('the process exited with code 0');
    expect(d.llmContent).toContain('bye');
  });

  it('keys Enter after text; the text is sent first', async () => {
    const h = await startRepl();
    const r = await s.call('send_input', { handle: h, input: 'abc', keys: ['Enter'], ai_callback_pattern: 'R> ' });
    expect(r.llmContent).toContain('got[abc]');
    await s.service.kill(h);
  });

  it('reports the exit when the input ends the program, then refuses further input', async () => {
    const h = await startRepl();
    await s.call('send_input', { handle: h, input: '', keys: ['C-d'], ai_callback_delay: 5 });
    const again = await s.call('send_input', { handle: h, input: 'more' });
    expect(again.error?.type).toBe(ToolErrorType.PROCESS_NOT_FOUND);
    expect(again.llmContent).toBe(`Process ${h} is not running: it exited with code 0. Start it again with run_shell_command if you still need it.`);
  });

  it('the handle of a finished `cmd &` job says its background processes do not read input', async () => {
    const r = await s.call('run_shell_command', { command: 'sleep 60 &' });
    const h = handleOf(r);
    const pid = field(r.llmContent, 'Background PIDs');
    const again = await s.call('send_input', { handle: h, input: 'x' });
    expect(again.error?.type).toBe(ToolErrorType.PROCESS_NOT_FOUND);
    expect(again.llmContent).toBe(
      `Process ${h} is not running: its shell exited with code 0; its background processes (PIDs ${pid}) still run but do not read input from here. Use kill(handle=${h}) to stop them.`,
    );
    await s.call('kill', { handle: h });
  });

  it('an unknown handle is PROCESS_NOT_FOUND pointing at jobs', async () => {
    const r = await s.call('send_input', { handle: 9999, input: 'x' });
    expect(r.error?.type).toBe(ToolErrorType.PROCESS_NOT_FOUND);
    expect(r.llmContent).toMatch(/No process has handle 9999\. Use jobs/);
  });

  it('a bad pattern is INVALID_PATTERN; bad parameters are INVALID_PARAMS', async () => {
    const h = await startRepl();
    const p = await s.call('send_input', { handle: h, input: 'x', ai_callback_pattern: '[' });
    expect(p.error?.type).toBe(ToolErrorType.INVALID_PATTERN);
    for (const params of [{ handle: h }, { handle: h, input: 'x', keys: ['Hyper'] }, { handle: -1, input: 'x' }, { handle: h, input: 'x', ai_callback_delay: -2 }]) {
      const r = await s.call('send_input', params);
      expect(r.error?.type).toBe(ToolErrorType.INVALID_PARAMS);
    }
    await s.service.kill(h);
  });

  it('abort kills the job and returns what it printed, marked cancelled', async () => {
    // cat answers the line, then is busy (not reading) until the abort.
    const r0 = await s.call('run_shell_command', { command: "trap '' INT; IFS= read -r l; echo \"$l\"; sleep 30", ai_callback_delay: 0.2 });
    const h = handleOf(r0);
    const pid = (r0.data as { pid: number }).pid;
    const ac = new AbortController();
    const pending = s.call('send_input', { handle: h, input: 'echoed', ai_callback_pattern: 'NEVER', }, ac.signal);
    setTimeout(() => ac.abort(), 200);
    const r = await pending;
    expect(r.cancelled).toBe(true);
    expect(field(r.llmContent, 'Status')).toBe('cancelled by the user; the process was killed');
    expect(r.llmContent).toContain('echoed');
    expect(await eventually(() => !alive(pid))).toBe(true);
  });
});
