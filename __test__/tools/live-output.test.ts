// Live output (tools/live-output.ts): run_shell_command and send_input stream the job's
// text to updateOutput while they wait, driven by the service's output events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createGeminiCliTools, LIVE_OUTPUT_MAX_BYTES } from '../../tools/index';
import { field, handleOf, type ToolScratch, toolScratch } from './setup';

let s: ToolScratch;
beforeAll(() => {
  s = toolScratch({ onAsk: 'allow', liveOutputIntervalMs: 100 });
});
afterAll(() => s.cleanup());

/** An updateOutput that records what it got and whether the call had resolved by then. */
function recorder() {
  const updates: string[] = [];
  const state = { resolved: false, lateCalls: 0 };
  const update = (text: string) => {
    if (state.resolved) state.lateCalls++;
    updates.push(text);
  };
  return { updates, state, update };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('live output', () => {
  it('run_shell_command streams lines as they come; the last update has the end; none after resolve', async () => {
    const rec = recorder();
    const command = 'for i in 1 2 3 4 5; do echo "line-$i"; sleep 0.3; done; echo done-all';
    const result = await s.tools.run_shell_command.buildAndExecute({ command }, undefined, rec.update);
    rec.state.resolved = true;
    expect(field(result.llmContent, 'Status')).toMatch(/^exited/);
    // Updates came while the command ran: several, each one longer than the last.
    const whileRunning = rec.updates.filter((u) => !u.includes('done-all'));
    expect(whileRunning.length).toBeGreaterThanOrEqual(2);
    expect(whileRunning[0]).toContain('line-1');
    expect(rec.updates.at(-1)).toContain('line-5');
    expect(rec.updates.at(-1)).toContain('done-all');
    for (let i = 1; i < rec.updates.length; i++) expect(rec.updates[i]!.length).toBeGreaterThan(rec.updates[i - 1]!.length);
    await sleep(300);
    expect(rec.state.lateCalls).toBe(0);
  });

  it('a call that returns while the job runs on sends no update after it resolved', async () => {
    const rec = recorder();
    const command = 'echo start; sleep 0.2; echo MARK; for i in {1..10}; do echo "more-$i"; sleep 0.1; done';
    const result = await s.tools.run_shell_command.buildAndExecute({ command, ai_callback_pattern: 'MARK' }, undefined, rec.update);
    rec.state.resolved = true;
    expect(field(result.llmContent, 'Status')).toMatch(/^running/);
    await sleep(800); // the job prints on meanwhile
    expect(rec.state.lateCalls).toBe(0);
    await s.service.kill(handleOf(result));
  });

  it('the last update is sent when the call returns, even inside the interval', async () => {
    const slow = toolScratch({ onAsk: 'allow', liveOutputIntervalMs: 5000 });
    try {
      const rec = recorder();
      const command = 'echo start; sleep 0.3; echo MARK; sleep 5';
      const result = await slow.tools.run_shell_command.buildAndExecute({ command, ai_callback_pattern: 'MARK' }, undefined, rec.update);
      expect(rec.updates[0]).toContain('start');
      expect(rec.updates.at(-1)).toContain('MARK');
      await slow.service.kill(handleOf(result));
    } finally {
      await slow.cleanup();
    }
  });

  it('coalesces: a command printing all the time gets about one update per interval, not one per line', async () => {
    const rec = recorder();
    const command = 'for i in {1..60}; do echo "tick-$i"; sleep 0.02; done';
    await s.tools.run_shell_command.buildAndExecute({ command }, undefined, rec.update);
    // ~1.2 s at one update per 100 ms (plus the first and the last), far fewer than 60 lines.
    expect(rec.updates.length).toBeGreaterThanOrEqual(3);
    expect(rec.updates.length).toBeLessThan(30);
    expect(rec.updates.at(-1)).toContain('tick-60');
  });

  it('an update carries only the tail of a large output', async () => {
    const rec = recorder();
    const command = `head -c 400000 /dev/zero | tr '\\0' 'x' | fold -w 99; echo; echo the-end`;
    await s.tools.run_shell_command.buildAndExecute({ command }, undefined, rec.update);
    expect(rec.updates.length).toBeGreaterThan(0);
    for (const u of rec.updates) expect(Buffer.byteLength(u)).toBeLessThanOrEqual(LIVE_OUTPUT_MAX_BYTES);
    expect(rec.updates.at(-1)).toMatch(/the-end\s*$/);
  });

  it('the default interval (1 s) still streams a command that runs a few seconds', async () => {
    const slow = toolScratch({ onAsk: 'allow' });
    try {
      const rec = recorder();
      const command = 'for i in 1 2 3; do echo "slow-$i"; sleep 0.8; done; echo slow-end';
      await slow.tools.run_shell_command.buildAndExecute({ command }, undefined, rec.update);
      expect(rec.updates.filter((u) => !u.includes('slow-end')).length).toBeGreaterThanOrEqual(2);
      expect(rec.updates.at(-1)).toContain('slow-end');
    } finally {
      await slow.cleanup();
    }
  });

  it('send_input to a python REPL streams its prints while it sleeps', async () => {
    const started = await s.call('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
    const h = handleOf(started);
    const rec = recorder();
    const input = 'import time\nfor i in range(4): print(f"py-{i}", flush=True); time.sleep(0.3)\n';
    const result = await s.tools.send_input.buildAndExecute(
      { handle: h, input, ai_callback_pattern: 'py-3\\s+>>> ' },
      undefined,
      rec.update,
    );
    rec.state.resolved = true;
    expect(result.error).toBeUndefined();
    const partial = rec.updates.filter((u) => u.includes('py-0') && !u.includes('py-3'));
    expect(partial.length).toBeGreaterThanOrEqual(2);
    expect(rec.updates.at(-1)).toContain('py-3');
    await sleep(300);
    expect(rec.state.lateCalls).toBe(0);
    await s.service.kill(h);
  });

  it('a throwing updateOutput does not change the result', async () => {
    let calls = 0;
    const throwing = () => {
      calls++;
      throw new Error('display broke');
    };
    const command = 'echo first; sleep 0.3; echo second; sleep 0.3; echo third';
    const result = await s.tools.run_shell_command.buildAndExecute({ command }, undefined, throwing);
    expect(result.error).toBeUndefined();
    expect(field(result.llmContent, 'Status')).toBe('exited successfully (exit code 0)');
    expect(result.returnDisplay).toContain('third');
    expect(calls).toBeGreaterThanOrEqual(2);

    const repl = await s.call('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
    const h = handleOf(repl);
    const sent = await s.tools.send_input.buildAndExecute({ handle: h, input: 'print(6*7)', ai_callback_pattern: '42' }, undefined, throwing);
    expect(sent.error).toBeUndefined();
    expect(sent.llmContent).toContain('42');
    await s.service.kill(h);
  });

  it('in the Gemini CLI: run_shell_command and send_input declare canUpdateOutput and stream through execute', async () => {
    const core = await import('@google/gemini-cli-core');
    const bus = new core.MessageBus(new core.PolicyEngine({ rules: [], defaultDecision: core.PolicyDecision.ALLOW }));
    const tools = Object.fromEntries(
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      createGeminiCliTools(core, s.service, bus, { projectRoot: s.root, liveOutputIntervalMs: 100 }).map((t: any) => [t.name, t]),
    );
    expect(tools.run_shell_command.canUpdateOutput).toBe(true);
    expect(tools.send_input.canUpdateOutput).toBe(true);
    expect(tools.jobs.canUpdateOutput).toBe(false);
    const rec = recorder();
    const invocation = tools.run_shell_command.build({ command: 'echo gem-1; sleep 1; echo gem-2' });
    await invocation.execute({ abortSignal: new AbortController().signal, updateOutput: rec.update });
    expect(rec.updates.length).toBeGreaterThanOrEqual(2);
    expect(rec.updates[0]).toContain('gem-1');
    expect(rec.updates.at(-1)).toContain('gem-2');
  });
});
