// Policy and confirmation decisions of the tool classes (the addon's checkCommand).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  ConfirmationOutcome,
  checkCommand,
  createShellTools,
  type ShellToolsConfig,
  ToolErrorType,
} from '../../tools/index';
import { type Scratch, scratch } from '../helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

const never = new AbortController().signal;
const toolsWith = (config: ShellToolsConfig) => createShellTools(s.service, { projectRoot: s.root, ...config });

describe('confirmation decisions', () => {
  it('with no policy, run_shell_command asks with exec details naming the roots', async () => {
    const inv = toolsWith({}).run_shell_command.build({ command: 'ls -la | grep x', description: 'list' });
    expect(inv.policy().decision).toBe('ask');
    const details = await inv.shouldConfirmExecute(never);
    expect(details).not.toBe(false);
    if (!details) return;
    expect(details.type).toBe('exec');
    expect(details.title).toBe('Confirm Shell Command');
    expect(details.command).toBe('ls -la | grep x');
    expect(details.rootCommands).toEqual(['ls', 'grep']);
    expect(details.prompt).toContain('list');
  });

  it('coreTools allows covered commands without asking; anything uncovered still asks', async () => {
    const tools = toolsWith({ policy: { coreTools: ['run_shell_command(echo)', 'run_shell_command(git status)'] } });
    const ok = tools.run_shell_command.build({ command: 'echo hi && git status --short' });
    expect(ok.policy().decision).toBe('allow');
    expect(await ok.shouldConfirmExecute(never)).toBe(false);
    expect(tools.run_shell_command.build({ command: 'echo hi; git push' }).policy().decision).toBe('ask');
    expect(tools.run_shell_command.build({ command: 'echoes' }).policy().decision).toBe('ask');
  });

  it('excludeTools refuses, even when allowed too: no confirmation, COMMAND_BLOCKED, nothing runs', async () => {
    writeFileSync(join(s.root, 'keep.txt'), 'x');
    const tools = toolsWith({ policy: { excludeTools: ['run_shell_command(rm)'], coreTools: ['run_shell_command'] } });
    for (const command of ['rm keep.txt', 'echo a; rm keep.txt', '/bin/rm keep.txt']) {
      const inv = tools.run_shell_command.build({ command });
      expect(inv.policy().decision).toBe('deny');
      expect(await inv.shouldConfirmExecute(never)).toBe(false);
      const r = await inv.execute(never);
      expect(r.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
      expect(r.llmContent).toMatch(/^Command blocked, nothing was run: .*excludeTools/);
    }
    expect(existsSync(join(s.root, 'keep.txt'))).toBe(true);
    expect(tools.run_shell_command.build({ command: 'echo rm' }).policy().decision).toBe('allow');
  });

  it('excludeTools run_shell_command blocks every command', async () => {
    const tools = toolsWith({ policy: { excludeTools: ['run_shell_command'] } });
    const r = await tools.run_shell_command.buildAndExecute({ command: 'true' });
    expect(r.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
  });

  it('proceed_always approves the roots for the session; proceed_once does not', async () => {
    const service = scratch();
    try {
      const tools = createShellTools(service.service, {});
      const once = await tools.run_shell_command.build({ command: 'date' }).shouldConfirmExecute(never);
      if (!once) throw new Error('expected a confirmation');
      await once.onConfirm(ConfirmationOutcome.ProceedOnce);
      expect(tools.run_shell_command.build({ command: 'date' }).policy().decision).toBe('ask');
      const always = await tools.run_shell_command.build({ command: 'date -u' }).shouldConfirmExecute(never);
      if (!always) throw new Error('expected a confirmation');
      await always.onConfirm(ConfirmationOutcome.ProceedAlways);
      expect(tools.run_shell_command.build({ command: 'date +%s' }).policy().decision).toBe('allow');
      // Shared by every tool built over the same service.
      const other = createShellTools(service.service, {});
      expect(other.run_shell_command.build({ command: 'date' }).policy().decision).toBe('allow');
      expect(other.run_shell_command.build({ command: 'uname' }).policy().decision).toBe('ask');
    } finally {
      await service.cleanup();
    }
  });

  it('sessionApprovals in the config allow like coreTools', () => {
    const tools = toolsWith({ policy: { sessionApprovals: ['run_shell_command(whoami)'] } });
    expect(tools.run_shell_command.build({ command: 'whoami' }).policy().decision).toBe('allow');
  });

  it("onAsk 'deny' makes the allowlist strict; onAsk 'allow' runs without asking", async () => {
    const strict = toolsWith({ onAsk: 'deny', policy: { coreTools: ['run_shell_command(echo)'] } });
    const blocked = await strict.run_shell_command.buildAndExecute({ command: 'ls' });
    expect(blocked.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    expect(blocked.llmContent).toMatch(/only allowed commands may run here/);
    expect((await strict.run_shell_command.buildAndExecute({ command: 'echo fine' })).llmContent).toContain('Stdout: fine');
    const open = toolsWith({ onAsk: 'allow' });
    const inv = open.run_shell_command.build({ command: 'ls' });
    expect(inv.policy().decision).toBe('allow');
    expect(await inv.shouldConfirmExecute(never)).toBe(false);
  });

  it('substitution is denied whatever the allowlist says', () => {
    const tools = toolsWith({ policy: { coreTools: ['run_shell_command'] }, onAsk: 'allow' });
    expect(tools.run_shell_command.build({ command: 'echo $(whoami)' }).policy().decision).toBe('deny');
  });

  it('kill always asks; jobs and send_input never do', async () => {
    const tools = toolsWith({ policy: { coreTools: ['run_shell_command'] } });
    const kill = await tools.kill.build({ handle: 1 }).shouldConfirmExecute(never);
    expect(kill).not.toBe(false);
    if (kill) {
      expect(kill.type).toBe('info');
      expect(kill.title).toBe('Confirm Process Termination');
      expect(kill.prompt).toMatch(/^Terminate process 1\?/);
    }
    expect(await tools.jobs.build({}).shouldConfirmExecute(never)).toBe(false);
    expect(await tools.send_input.build({ handle: 1, input: 'x' }).shouldConfirmExecute(never)).toBe(false);
  });

  it('shell_cmd is checked as its quoted command line', async () => {
    const tools = toolsWith({ policy: { excludeTools: ['run_shell_command(rm)'], coreTools: ['run_shell_command(echo)'] } });
    const blocked = await tools.shell_cmd.buildAndExecute({ command: 'rm', parameters: ['-rf', 'x'] });
    expect(blocked.error?.type).toBe(ToolErrorType.COMMAND_BLOCKED);
    const allowed = tools.shell_cmd.build({ command: 'echo', parameters: ['$(id)', '`id`'] });
    expect(allowed.policy().decision).toBe('allow');
    const asks = await tools.shell_cmd.build({ command: 'ls' }).shouldConfirmExecute(never);
    expect(asks && asks.type).toBe('exec');
  });
});

describe('the policy is the addon\'s checkCommand (a bash parser)', () => {
  const tools = () => toolsWith({ policy: { coreTools: ['run_shell_command(echo)', 'run_shell_command(git status)'], excludeTools: ['run_shell_command(rm)'] } });

  it.each([
    ['echo $(id)', 'deny'],
    ['echo `id`', 'deny'],
    ['diff <(ls) x', 'deny'],
    ['tee >(cat)', 'deny'],
    ['echo "$(id)"', 'deny'],
    ["echo '$(id)'", 'allow'],
    // `\$(` is no substitution, but the `(` that follows is a bash syntax error: ask.
    ['echo \\$(id)', 'ask'],
    ['echo \\$HOME', 'allow'],
    ['echo hi && git status --short', 'allow'],
    ['FOO=1 git status | echo x', 'allow'],
    ['git statusx', 'ask'],
    ['ls & rm -f x', 'deny'],
    ['sudo rm -rf x', 'deny'],
    ["bash -c 'rm -rf x'", 'deny'],
    ['echo ok # $(id) in a comment', 'allow'],
  ])('%s → %s', (command, decision) => {
    expect(tools().run_shell_command.build({ command }).policy().decision).toBe(decision);
  });

  it('checkCommand is exported and is the native one', () => {
    expect(checkCommand('echo $(id)')).toMatchObject({ decision: 'deny', hasSubstitution: true });
    expect(checkCommand('echo x > out.txt', { coreTools: ['run_shell_command(echo)'] })).toMatchObject({ decision: 'allow', hasRedirection: true });
    expect(checkCommand).not.toBe(undefined);
  });
});
