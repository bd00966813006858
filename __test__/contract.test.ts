// The contract the core answers for the TypeScript layers: status
// unions generated from the Rust enums, survivors in the kill report, a failed start
// as a result, and `start`'s timeout.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OUTPUT_SCHEMAS } from '../tools/mcp/output-schemas';
import { addon, alive, eventually, expectCode, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

/** The values the unions had when they were written by hand in src/binding/. */
const UNIONS: Record<string, string[]> = {
  JobStatus: ['exited', 'running', 'killed', 'timed_out', 'failed'],
  RunStatus: ['exited', 'running', 'awaiting_input', 'killed', 'timed_out', 'failed'],
  WaitStatus: ['matched', 'exited', 'delay_elapsed', 'timed_out', 'awaiting_input'],
  JobMode: ['pty', 'pipes'],
  CommandDecision: ['allow', 'deny', 'ask'],
};

describe('status unions generated from the Rust enums', () => {
  const dts = readFileSync(join(__dirname, '..', 'index.d.ts'), 'utf8');

  for (const [name, values] of Object.entries(UNIONS)) {
    it(`${name} has the same values as before, in index.d.ts and in index.js`, () => {
      expect(dts).toContain(`export type ${name} = ${values.map((v) => `'${v}'`).join(' | ')}\n`);
      const runtime = (addon as unknown as Record<string, Record<string, string>>)[name];
      expect(Object.values(runtime)).toEqual(values);
    });
  }

  /** The body of an interface of index.d.ts. */
  const body = (name: string) => {
    const start = dts.indexOf(`export interface ${name} {\n`);
    return start < 0 ? '' : dts.slice(start, dts.indexOf('\n}\n', start));
  };

  it('the fields name the generated types', () => {
    expect(body('RunResult')).toContain('\n  status: RunStatus\n');
    expect(body('InteractionResult')).toContain('\n  status: WaitStatus\n');
    expect(body('ProcessInfo')).toContain('\n  mode: JobMode\n  status: JobStatus\n');
    expect(body('KillResult')).toContain('\n  status: JobStatus\n');
    expect(body('OutputEvent')).toContain('\n  status: JobStatus\n');
    expect(body('HistoryEntry')).toContain('\n  status: JobStatus\n');
    expect(body('RunOptions')).toContain('\n  mode?: JobMode\n');
    expect(body('CommandCheck')).toContain('\n  decision: CommandDecision\n');
  });

  it('the MCP output schemas list the same statuses', () => {
    const props = (tool: keyof typeof OUTPUT_SCHEMAS) =>
      (OUTPUT_SCHEMAS[tool] as { properties: Record<string, { enum?: string[] }> }).properties;
    expect(props('run_shell_command')['status']!.enum).toEqual(UNIONS['RunStatus']);
    expect(props('shell_cmd')['status']!.enum).toEqual(UNIONS['RunStatus']);
    expect(props('send_input')['status']!.enum).toEqual(UNIONS['WaitStatus']);
    expect(props('kill')['status']!.enum).toEqual(UNIONS['JobStatus']);
  });

  it('a bad mode is still INVALID_ARGUMENT with its message', async () => {
    const e = await expectCode(() => s.service.start('true', { mode: 'tty' as never }), 'INVALID_ARGUMENT');
    expect(e.message).toBe(`mode must be 'pty' or 'pipes', got "tty"`);
  });
});

describe('survivors in the kill report', () => {
  it('is empty when SIGKILL ended a tree that ignored SIGTERM', async () => {
    const r = await s.service.run(
      `trap '' TERM; (trap '' TERM; while :; do sleep 0.05; done) & echo "p $!"; echo ready; while :; do sleep 0.05; done`,
      { mode: 'pipes', callbackPattern: 'ready' },
    );
    const child = Number(/p (\d+)/.exec(r.output)![1]);
    expect(alive(child)).toBe(true);
    const k = await s.service.kill(r.handle, { graceMs: 100 });
    expect(k.escalated).toBe(true);
    expect(k.survivors).toEqual([]);
    expect(alive(child)).toBe(false);
  });

  it('is empty for a job that had ended with nothing left', async () => {
    const r = await s.service.run('exit 3');
    const k = await s.service.kill(r.handle);
    expect(k).toMatchObject({ status: 'exited', escalated: false, survivors: [] });
  });
});

describe('a failed start as a result', () => {
  it("start's SPAWN_FAILED carries the result run returns, under the handle of its history entry", async () => {
    const e = (await expectCode(() => s.service.start('no-such-program-xyz', { args: ['a'], mode: 'pipes' }), 'SPAWN_FAILED')) as Error & {
      result?: import('../index.js').RunResult;
    };
    const entry = s.service.getExecutionHistory(1)[0]!;
    expect(entry).toMatchObject({ command: 'no-such-program-xyz', status: 'failed' });
    expect(e.result).toMatchObject({
      handle: entry.handle,
      pid: null,
      command: 'no-such-program-xyz',
      directory: '.',
      status: 'failed',
      error: e.message,
      output: '',
      exitCode: null,
      backgroundPids: [],
      outputDir: null,
      awaitingInput: false,
    });
    expect(e.message).toMatch(/^failed to start "no-such-program-xyz": /);
    const ran = await s.service.run('no-such-program-xyz', { args: ['a'], mode: 'pipes' });
    const { handle: _h, startedAt: _s, ...same } = ran;
    expect(e.result).toMatchObject(same);
  });

  it('other errors of start carry no result', async () => {
    const e = (await expectCode(() => s.service.start('true', { directory: '/etc' }), 'INVALID_DIRECTORY')) as Error & { result?: unknown };
    expect(e.result).toBeUndefined();
  });
});

describe("start's timeoutMs", () => {
  it('kills a job still running then, as timed_out, without anyone waiting', async () => {
    const { handle, pid } = s.service.start('echo partial; exec sleep 30', { mode: 'pipes', timeoutMs: 300 });
    expect(s.service.getResult(handle).status).toBe('running');
    expect(await eventually(() => s.service.getResult(handle).status !== 'running', 5000)).toBe(true);
    const r = s.service.getResult(handle);
    expect(r).toMatchObject({ status: 'timed_out', signal: 15 });
    expect(r.output).toContain('partial');
    expect(alive(pid)).toBe(false);
    expect(s.service.getExecutionHistory(1)[0]).toMatchObject({ handle, status: 'timed_out' });
  });

  it('leaves a job that ends first as it ended', async () => {
    const { handle } = s.service.start('exit 4', { mode: 'pipes', timeoutMs: 300 });
    const w = await s.service.waitFor(handle, { timeoutMs: 5000 });
    expect(w.status).toBe('exited');
    await new Promise((r) => setTimeout(r, 400));
    expect(s.service.getResult(handle)).toMatchObject({ status: 'exited', exitCode: 4 });
  });
});
