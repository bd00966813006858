// The tools as real Gemini CLI tools (@google/gemini-cli-core 0.61 classes, its policy
// engine and message bus), driven the way its scheduler drives a tool.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createGeminiCliTools, DECLARATIONS } from '../../tools/index';
import { type Scratch, scratch } from '../helpers';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
let core: Any;
let s: Scratch;
const signal = new AbortController().signal;

beforeAll(async () => {
  core = await import('@google/gemini-cli-core');
  s = scratch();
});
afterAll(() => s.cleanup());

function toolsWith(defaultDecision: string, rules: object[] = [], config = {}): Record<string, Any> {
  const bus = new core.MessageBus(new core.PolicyEngine({ rules, defaultDecision }));
  const list = createGeminiCliTools(core, s.service, bus, { projectRoot: s.root, ...config });
  return Object.fromEntries(list.map((t: Any) => [t.name, t]));
}

describe('Gemini CLI tools (real gemini-cli-core classes)', () => {
  it('are DeclarativeTools with our schemas', () => {
    const tools = toolsWith(core.PolicyDecision.ASK_USER);
    expect(Object.keys(tools)).toEqual(DECLARATIONS.map((d) => d.name));
    for (const d of DECLARATIONS) {
      const t = tools[d.name];
      expect(core.isTool(t)).toBe(true);
      expect(t).toBeInstanceOf(core.BaseDeclarativeTool);
      // The Gemini CLI adds its scheduling hint `wait_for_previous` to every declaration.
      const { wait_for_previous: hint, ...properties } = t.schema.parametersJsonSchema.properties;
      expect(hint.type).toBe('boolean');
      expect({ ...t.schema, parametersJsonSchema: { ...t.schema.parametersJsonSchema, properties } }).toEqual({
        name: d.name,
        description: d.description,
        parametersJsonSchema: d.parametersJsonSchema,
      });
    }
    expect(tools.jobs.kind).toBe(core.Kind.Read);
    expect(tools.run_shell_command.kind).toBe(core.Kind.Execute);
  });

  it('the policy engine asks → our exec confirmation; it allows → no confirmation; our allowlist can skip asking', async () => {
    const asking = toolsWith(core.PolicyDecision.ASK_USER);
    // (The Gemini CLI's engine allows read-only commands such as `ls` by itself.)
    const details = await asking.run_shell_command.build({ command: 'touch made.txt' }).shouldConfirmExecute(signal);
    expect(details).toMatchObject({ type: 'exec', title: 'Confirm Shell Command', command: 'touch made.txt', rootCommands: ['touch'] });
    await details.onConfirm(core.ToolConfirmationOutcome.ProceedOnce);
    const kill = await asking.kill.build({ handle: 1 }).shouldConfirmExecute(signal);
    expect(kill).toMatchObject({ type: 'info', title: 'Confirm Process Termination' });

    const allowing = toolsWith(core.PolicyDecision.ASK_USER, [
      { toolName: 'run_shell_command', decision: core.PolicyDecision.ALLOW, priority: 1 },
    ]);
    expect(await allowing.run_shell_command.build({ command: 'touch made.txt' }).shouldConfirmExecute(signal)).toBe(false);

    const ours = toolsWith(core.PolicyDecision.ASK_USER, [], { policy: { coreTools: ['run_shell_command(git)'] } });
    expect(await ours.run_shell_command.build({ command: 'git status' }).shouldConfirmExecute(signal)).toBe(false);
  });

  it('execute returns our llmContent; errors map to the Gemini CLI error types', async () => {
    const tools = toolsWith(core.PolicyDecision.ALLOW);
    const ok = await tools.run_shell_command.build({ command: 'echo via gemini core', wait_for_previous: true }).execute({ abortSignal: signal });
    expect(ok.llmContent).toContain('Stdout: via gemini core');
    expect(ok.error).toBeUndefined();
    const blocked = await tools.run_shell_command.build({ command: 'echo $(id)' }).execute({ abortSignal: signal });
    expect(blocked.error.type).toBe(core.ToolErrorType.POLICY_VIOLATION);
    const invalid = await tools.run_shell_command.validateBuildAndExecute({ command: 'ls', dir_path: 'x' }, signal);
    expect(invalid.error.type).toBe(core.ToolErrorType.INVALID_TOOL_PARAMS);
    const missing = await tools.send_input.build({ handle: 999, input: 'x' }).execute({ abortSignal: signal });
    expect(missing.error.type).toBe(core.ToolErrorType.EXECUTION_FAILED);
    expect(missing.llmContent).toMatch(/No process has handle 999/);
  });

  it('the ed workflow through the Gemini CLI tool classes', async () => {
    const tools = toolsWith(core.PolicyDecision.ALLOW);
    const run = (name: string, params: object) => tools[name].build(params).execute({ abortSignal: signal });
    const start = await run('run_shell_command', { command: "ed -p 'ED> ' gem.txt", ai_callback_pattern: 'ED> ' });
    const h = Number(/^Handle: (\d+)$/m.exec(start.llmContent)![1]);
    await run('send_input', { handle: h, input: 'a', ai_callback_delay: 0.2 });
    await run('send_input', { handle: h, input: 'from gemini core', ai_callback_delay: 0.2 });
    await run('send_input', { handle: h, input: '.', ai_callback_pattern: 'ED> ' });
    await run('send_input', { handle: h, input: 'w', ai_callback_pattern: 'ED> ' });
    const q = await run('send_input', { handle: h, input: 'q' });
    expect(q.llmContent).toContain('the process exited with code 0');
    expect(readFileSync(join(s.root, 'gem.txt'), 'utf8')).toBe('from gemini core\n');
  });
});
