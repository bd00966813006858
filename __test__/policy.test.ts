// checkCommand(): the command policy through the addon. The full rule table is in
// Rust (src/policy/tests.rs); this checks the JS surface: names, shapes, errors.
import { describe, expect, it } from 'vitest';

import { addon, expectCode } from './helpers';

const { checkCommand } = addon;

describe('checkCommand', () => {
  it('returns the full shape; with no policy every command asks', () => {
    const c = checkCommand('ls -l | wc -l > count.txt');
    expect(c).toEqual({
      decision: 'ask',
      roots: ['ls', 'wc'],
      subcommands: ['ls -l', 'wc -l'],
      hasSubstitution: false,
      hasRedirection: true,
      reason: expect.any(String),
    });
    expect(c.reason.length).toBeGreaterThan(0);
  });

  it('allows what coreTools and sessionApprovals cover, asks for the rest', () => {
    const policy = { coreTools: ['run_shell_command(git status)'], sessionApprovals: ['run_shell_command(npm test)'] };
    expect(checkCommand('git status --short && npm test', policy).decision).toBe('allow');
    expect(checkCommand('git push', policy).decision).toBe('ask');
    expect(checkCommand('ls', { coreTools: ['run_shell_command'] }).decision).toBe('allow');
  });

  it('denies excludeTools matches, also behind wrappers and inside bash -c', () => {
    const policy = { excludeTools: ['run_shell_command(rm)'], coreTools: ['run_shell_command'] };
    expect(checkCommand('sudo rm -rf /', policy).decision).toBe('deny');
    const c = checkCommand('bash -c "git push && rm -rf /"', policy);
    expect(c.decision).toBe('deny');
    expect(c.roots).toEqual(['bash', 'git', 'rm']);
    expect(checkCommand("echo 'rm -rf /'", policy).decision).toBe('allow');
  });

  it('refuses substitution wherever bash would run it, and only there', () => {
    const all = { coreTools: ['run_shell_command'] };
    for (const command of ['echo $(id)', 'echo `id`', 'diff <(a) b', 'cat <<EOF\n`id`\nEOF', 'echo "${x@P}"']) {
      const c = checkCommand(command, all);
      expect([command, c.decision, c.hasSubstitution]).toEqual([command, 'deny', true]);
    }
    for (const command of ["echo '$(id)'", 'echo \\$\\(id\\)', "cat <<'EOF'\n$(id)\nEOF", '# $(id)', 'echo "<(x)"']) {
      const c = checkCommand(command, all);
      expect([command, c.decision, c.hasSubstitution]).toEqual([command, 'allow', false]);
    }
  });

  it('asks for a command that does not parse', () => {
    const c = checkCommand("echo 'unterminated", { coreTools: ['run_shell_command'] });
    expect(c.decision).toBe('ask');
    expect(c.reason).toMatch(/parse/);
  });

  it('throws INVALID_ARGUMENT above the size limit', async () => {
    const err = await expectCode(() => checkCommand('a'.repeat(128 * 1024 + 1)), 'INVALID_ARGUMENT');
    expect(err.message).toMatch(/131072/);
    expect(checkCommand('a'.repeat(128 * 1024)).roots).toHaveLength(1);
  });
});
