// The command line and environment upstream's ShellExecutionService hands to its
// sandbox manager, rebuilt here (same variables, same git overrides), so that the
// sandbox manager the caller passes prepares the same command for the native service.
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import type { ShellExecutionConfig, SandboxedCommand, SandboxRequest } from './types.js';

/** Bash options upstream turns off in front of every command. */
const SHOPT_GUARD = 'shopt -u promptvars nullglob extglob nocaseglob dotglob;';

/** Git settings that could prompt, run hooks or page; upstream neutralises the same list. */
const GIT_OVERRIDES: ReadonlyArray<readonly [string, string]> = [
  ['credential.helper', ''],
  ['core.fsmonitor', ''],
  ['core.hooksPath', ''],
  ['core.sshCommand', ''],
  ['core.pager', 'cat'],
  ['core.editor', ''],
  ['sequence.editor', ''],
  ['diff.external', ''],
];

const NO_PROMPTS: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
  GH_PROMPT_DISABLED: '1',
  GCM_INTERACTIVE: 'never',
  DISPLAY: '',
  DBUS_SESSION_BUS_ADDRESS: '',
};

export function guardCommand(command: string): string {
  return command.trimStart().startsWith(SHOPT_GUARD) ? command : `${SHOPT_GUARD} ${command}`;
}

/**
 * Pipes mode: stderr joins stdout at the source, so the result interleaves them in
 * the order they were written (two pipes read apart can reorder); and, unless asked
 * to keep it open for `writeToPty`, stdin reads EOF at once, as upstream's
 * `stdio: 'ignore'` does, so a command that reads stdin cannot hang.
 */
export function pipesPrefix(keepStdinOpen: boolean): string {
  return keepStdinOpen ? 'exec 2>&1; ' : 'exec </dev/null 2>&1; ';
}

/** `name` looked up in PATH, as upstream resolves its shell (so `$0` is the full path). */
export function resolveExecutable(name: string, path = process.env['PATH'] ?? ''): string {
  if (isAbsolute(name)) return name;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return name;
}

/** The request upstream would pass to `sandboxManager.prepareCommand`. */
export function sandboxRequest(
  command: string,
  cwd: string,
  config: ShellExecutionConfig,
  pty: boolean,
): SandboxRequest {
  const source: Record<string, string | undefined> = config.env ?? process.env;
  const gitKeys = Object.keys(source).filter((k) => k.startsWith('GIT_CONFIG_'));
  const allowed = [...(config.sanitizationConfig?.allowedEnvironmentVariables ?? []), ...gitKeys];
  const env: Record<string, string | undefined> = { ...source };
  env.GEMINI_CLI = '1';
  env.TERM = 'xterm-256color';
  env.PAGER = config.pager ?? 'cat';
  env.GIT_PAGER = config.pager ?? 'cat';
  env.GIT_CONFIG_GLOBAL = '/dev/null';
  env.GIT_CONFIG_SYSTEM = '/dev/null';
  env.GIT_CONFIG_NOSYSTEM = '1';
  allowed.push('GIT_CONFIG_COUNT', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM');
  let count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10) || 0;
  for (const [key, value] of GIT_OVERRIDES) {
    env[`GIT_CONFIG_KEY_${count}`] = key;
    env[`GIT_CONFIG_VALUE_${count}`] = value;
    allowed.push(`GIT_CONFIG_KEY_${count}`, `GIT_CONFIG_VALUE_${count}`);
    count += 1;
  }
  env.GIT_CONFIG_COUNT = String(count);
  Object.assign(env, NO_PROMPTS);
  const sanitizationConfig = config.sanitizationConfig
    ? { ...config.sanitizationConfig, allowedEnvironmentVariables: allowed }
    : undefined;
  return {
    command: resolveExecutable('bash'),
    args: ['-c', guardCommand(pty ? command : pipesPrefix(config.keepStdinOpen === true) + command)],
    env,
    cwd,
    policy: {
      ...config,
      ...(config.sandboxConfig ?? {}),
      sanitizationConfig,
      additionalPermissions: config.additionalPermissions,
    } as SandboxRequest['policy'],
  };
}

/** Asks the caller's sandbox manager (if any) to prepare the request. */
export async function prepare(
  command: string,
  cwd: string,
  config: ShellExecutionConfig,
  pty: boolean,
): Promise<SandboxedCommand> {
  const request = sandboxRequest(command, cwd, config, pty);
  if (config.sandboxManager) return config.sandboxManager.prepareCommand(request);
  return { program: request.command, args: request.args, env: request.env };
}

/**
 * The prepared environment as the native service takes it (`RunOptions.env` with
 * `clearEnv: true`): exactly these variables, so a sanitising sandbox manager's
 * removals hold; unset and malformed entries are left out.
 */
export function exactEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const exact: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || key === '' || key.includes('=')) continue;
    exact[key] = value;
  }
  return exact;
}
