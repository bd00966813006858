// The declarations as JSON Schema (ajv, strict) and as the seeds define them.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';

import { DECLARATIONS, DEFAULTS, JOBS, KEY_NAMES, KILL, RUN_SHELL_COMMAND, SEND_INPUT, SHELL_CMD, validateParams } from '../../tools/index';

const ajv = new Ajv({ strict: true, allErrors: true });

describe('declarations', () => {
  it('are the five tools, each a valid JSON Schema object usable as a Gemini FunctionDeclaration', () => {
    expect(DECLARATIONS.map((d) => d.name)).toEqual(['run_shell_command', 'send_input', 'jobs', 'kill', 'shell_cmd']);
    for (const d of DECLARATIONS) {
      expect(Object.keys(d).sort()).toEqual(['description', 'name', 'parametersJsonSchema']);
      expect(d.name).toMatch(/^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/);
      expect(d.description.length).toBeGreaterThan(80);
      expect(ajv.validateSchema(d.parametersJsonSchema)).toBe(true);
      expect(() => ajv.compile(d.parametersJsonSchema)).not.toThrow();
      expect(d.parametersJsonSchema.type).toBe('object');
      // Survives a JSON round trip (what MCP and the Gemini API send).
      expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    }
  });

  it('have the seed parameter names, required lists and defaults', () => {
    const props = (d: typeof RUN_SHELL_COMMAND) => d.parametersJsonSchema.properties ?? {};
    expect(Object.keys(props(RUN_SHELL_COMMAND))).toEqual([
      'command',
      'description',
      'directory',
      'ai_callback_delay',
      'ai_callback_pattern',
      'max_output_size',
    ]);
    expect(RUN_SHELL_COMMAND.parametersJsonSchema.required).toEqual(['command']);
    expect(props(RUN_SHELL_COMMAND).ai_callback_delay?.default).toBe(5);
    expect(props(RUN_SHELL_COMMAND).max_output_size?.default).toBe(16384);

    expect(Object.keys(props(SEND_INPUT))).toEqual(['handle', 'input', 'append_newline', 'ai_callback_delay', 'ai_callback_pattern', 'keys']);
    expect(SEND_INPUT.parametersJsonSchema.required).toEqual(['handle', 'input']);
    expect(props(SEND_INPUT).append_newline?.default).toBe(true);
    expect(props(SEND_INPUT).ai_callback_delay?.default).toBe(3);
    expect(props(SEND_INPUT).keys?.items?.enum).toEqual(KEY_NAMES);
    expect(KEY_NAMES).toContain('C-c');
    expect(KEY_NAMES).toContain('Enter');

    expect(props(JOBS)).toEqual({});
    expect(Object.keys(props(KILL))).toEqual(['handle']);
    expect(KILL.parametersJsonSchema.required).toEqual(['handle']);

    expect(Object.keys(props(SHELL_CMD))).toEqual(['command', 'parameters', 'timeout', 'cwd']);
    expect(SHELL_CMD.parametersJsonSchema.required).toEqual(['command']);
    expect(props(SHELL_CMD).timeout?.default).toBe(30000);
    expect(props(SHELL_CMD).parameters?.items?.type).toBe('string');
    expect(DEFAULTS).toMatchObject({ runCallbackDelaySeconds: 5, sendInputCallbackDelaySeconds: 3, maxOutputSize: 16384 });
  });

  it('teach the model how to use them', () => {
    expect(RUN_SHELL_COMMAND.description).toMatch(/send_input/);
    expect(RUN_SHELL_COMMAND.description).toMatch(/kill/);
    expect(RUN_SHELL_COMMAND.description).toMatch(/ED> /);
    expect(SEND_INPUT.description).toMatch(/>>> |prompt/);
    expect(JOBS.description).toMatch(/Handle/);
    expect(KILL.description).toMatch(/SIGTERM/);
    expect(SHELL_CMD.description).toMatch(/without a shell/);
  });

  // The same verdict from ajv and from the tools' own validator, on good and bad input.
  const samples: Array<[typeof RUN_SHELL_COMMAND, unknown, boolean]> = [
    [RUN_SHELL_COMMAND, { command: 'ls' }, true],
    [RUN_SHELL_COMMAND, { command: 'ls', description: 'd', directory: 'sub', ai_callback_delay: 0.5, ai_callback_pattern: 'x', max_output_size: 10 }, true],
    [RUN_SHELL_COMMAND, {}, false],
    [RUN_SHELL_COMMAND, { command: 3 }, false],
    [RUN_SHELL_COMMAND, { command: 'ls', ai_callback_delay: -1 }, false],
    [RUN_SHELL_COMMAND, { command: 'ls', max_output_size: 1.5 }, false],
    [RUN_SHELL_COMMAND, { command: 'ls', dir_path: 'x' }, false],
    // What the host adds on its own (the Gemini CLI's wait_for_previous) is accepted and ignored.
    [{ ...RUN_SHELL_COMMAND, parametersJsonSchema: { ...RUN_SHELL_COMMAND.parametersJsonSchema, properties: { ...RUN_SHELL_COMMAND.parametersJsonSchema.properties, wait_for_previous: { type: 'boolean' } } } }, { command: 'ls', wait_for_previous: true }, true],
    [SEND_INPUT, { handle: 1, input: '' }, true],
    [SEND_INPUT, { handle: 1, input: 'x', append_newline: false, ai_callback_delay: 0, ai_callback_pattern: '>>> ', keys: ['C-c', 'Enter'] }, true],
    [SEND_INPUT, { handle: 1 }, false],
    [SEND_INPUT, { handle: 0, input: 'x' }, false],
    [SEND_INPUT, { handle: '1', input: 'x' }, false],
    [SEND_INPUT, { handle: 1, input: 'x', keys: ['Hyper'] }, false],
    [SEND_INPUT, { handle: 1, input: 'x', append_newline: 'yes' }, false],
    [JOBS, {}, true],
    [JOBS, { all: true }, false],
    [KILL, { handle: 2 }, true],
    [KILL, {}, false],
    [KILL, { handle: 2.5 }, false],
    [SHELL_CMD, { command: 'ls', parameters: ['-la'], timeout: 1000, cwd: 'sub' }, true],
    [SHELL_CMD, { command: 'ls', parameters: '-la' }, false],
    [SHELL_CMD, { command: 'ls', parameters: [1] }, false],
    [SHELL_CMD, { command: 'ls', timeout: 0 }, false],
    [SHELL_CMD, { command: 'ls', timeout: 1e12 }, false],
    [SEND_INPUT, { handle: 1, input: 'x', ai_callback_delay: 1e6 }, false],
  ];
  it.each(samples.map(([d, p, ok]) => [d.name, JSON.stringify(p), d, p, ok] as const))(
    '%s %s: ajv and validate() agree',
    (_name, _json, declaration, params, ok) => {
      const validate = ajv.compile(declaration.parametersJsonSchema);
      expect(validate(params)).toBe(ok);
      const message = validateParams(declaration, params);
      if (ok) expect(message).toBeNull();
      else expect(message).toMatch(/parameter|expects/);
    },
  );
});
