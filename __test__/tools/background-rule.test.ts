// One rule on a trailing `&`, in the tool's description and in the Gemini extension's
// context file alike: the foreground is preferred, `&` works, `kill` stops either.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { RUN_SHELL_COMMAND } from '../../tools/declarations';

const ROOT = join(__dirname, '..', '..');
const context = readFileSync(join(ROOT, 'gemini-extension.md'), 'utf8').replace(/\s+/g, ' ');
const description = RUN_SHELL_COMMAND.description.replace(/\s+/g, ' ');
const command = String((RUN_SHELL_COMMAND.parametersJsonSchema as { properties: { command: { description: string } } }).properties.command.description);

describe('the rule on a trailing &', () => {
  it('is the same in the tool description and the context file', () => {
    for (const text of [description, context]) {
      expect(text).toMatch(/run them in the foreground with their ready line as the pattern/i);
      expect(text).toContain('A trailing `&` also works: its PIDs are reported as Background PIDs.');
      expect(text).toMatch(/stop them with `kill` when done/);
      expect(text).not.toMatch(/(do not|never|don't) (add|use) `?&/i);
    }
    expect(command).toContain('a trailing `&` work');
  });
});
