// Runs the real Claude Code and Codex CLIs (devDependencies) offline: their model is
// __test__/e2e/fake-model.ts on 127.0.0.1, their MCP server `native-shell-service mcp`
// on a scratch project, their HOME a scratch directory. What a test reads back is what
// each client handed its model as the tool results.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, ensureBuilt, ROOT } from '../mcp/setup';
import { fakeModel, type ScriptedCall, type SeenResult } from './fake-model';

/** The launcher that finds the platform's binary even when npm ran no postinstall. */
export const CLAUDE = join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code', 'cli-wrapper.cjs');
export const CODEX = join(ROOT, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');

export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The tool results as the model received them, in order. */
  results: SeenResult[];
  requests: Array<{ path: string; body: unknown }>;
}

/** Why a client cannot run here, or null when `--version` answers. */
export async function unavailable(launcher: string): Promise<string | null> {
  if (!existsSync(launcher)) return `${launcher} is not installed (npm install)`;
  const base = mkdtempSync(join(tmpdir(), 'nss-client-probe-'));
  try {
    const r = await exec(process.execPath, [launcher, '--version'], { ...process.env, HOME: base, CODEX_HOME: base }, base, 60_000);
    return r.code === 0 ? null : `${launcher} --version failed (${r.code}): ${r.stderr.slice(0, 300)}`;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

function exec(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // A bound for a client that hangs (its own retries against the fake model): the run
    // is reported as it stands, and the assertions say what was missing.
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Only what a client needs: no proxies, keys or settings of the machine's user. */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  const keep = ['PATH', 'LANG', 'TERM', 'NATIVE_SHELL_DAEMON_BIN', 'TMPDIR'];
  const env: NodeJS.ProcessEnv = { HOME: home };
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

interface Scratch {
  base: string;
  home: string;
  project: string;
  mcpArgs: string[];
}

function scratch(): Scratch {
  ensureBuilt();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-client-')));
  const home = join(base, 'home');
  const project = join(base, 'project');
  mkdirSync(home);
  mkdirSync(project);
  return { base, home, project, mcpArgs: [BIN, 'mcp', '--project-root', project, '--io-dir', join(base, 'io')] };
}

/**
 * This package installed in `project` as npm would put it there, so the docs' `npx -y
 * native-shell-service mcp` runs this checkout, offline (npx takes a local bin first).
 */
export function installHere(project: string): void {
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'native-shell-service'));
  symlinkSync('../native-shell-service/bin/native-shell-service.js', join(project, 'node_modules', '.bin', 'native-shell-service'));
}

/** How Claude Code gets the server: a config given with `--mcp-config` (the default), or as docs/mcp.md says to set it up. */
export type ClaudeSetup =
  | { kind: 'flag'; server?: object }
  /** `<project>/.mcp.json` with this content, approved in the project's `.claude/settings.json`. */
  | { kind: 'project-file'; mcpJson: unknown }
  /** `claude mcp add <args...>` run in the project first. */
  | { kind: 'mcp-add'; args: string[] };

/** What Claude Code wrote to its debug log (`--debug-file`), for its [ERROR] lines. */
export interface ClaudeRun extends ClientRun {
  debugLog: string;
}

/**
 * Claude Code in print mode (`-p`), its MCP server from `--mcp-config` only: this
 * package's stdio server, or `server` (e.g. `{ type: 'http', url, headers }`); or set
 * up as docs/mcp.md says (`setup`), with the docs' `npx` command.
 */
export async function runClaude(
  script: ScriptedCall[],
  options: { server?: object; setup?: ClaudeSetup; extraArgs?: string[]; timeoutMs?: number } = {},
): Promise<ClaudeRun> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const setup: ClaudeSetup = options.setup ?? { kind: 'flag', ...(options.server ? { server: options.server } : {}) };
  const s = scratch();
  const model = await fakeModel(script);
  try {
    const config = join(s.base, 'mcp.json');
    const debugFile = join(s.base, 'claude-debug.log');
    const env = {
      ...cleanEnv(s.home),
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-ant-offline-test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      MCP_TIMEOUT: '60000',
      // MCP tools are otherwise deferred behind ToolSearch: the model would have to search first.
      ENABLE_TOOL_SEARCH: 'false',
      // Print mode's first model turn waits for the MCP servers (by default it goes out
      // while they start: `npx` on a loaded machine takes seconds, and the turn has no tools).
      MCP_CONNECTION_NONBLOCKING: '0',
    };
    let mcpFlags: string[] = [];
    if (setup.kind === 'flag') {
      writeFileSync(config, JSON.stringify({ mcpServers: { shell: setup.server ?? { command: process.execPath, args: [...s.mcpArgs, ...(options.extraArgs ?? [])] } } }));
      mcpFlags = ['--mcp-config', config, '--strict-mcp-config'];
    } else {
      installHere(s.project);
      if (setup.kind === 'project-file') {
        writeFileSync(join(s.project, '.mcp.json'), JSON.stringify(setup.mcpJson));
        // A project's .mcp.json servers run only once approved (asked in a terminal).
        mkdirSync(join(s.project, '.claude'));
        writeFileSync(join(s.project, '.claude', 'settings.json'), JSON.stringify({ enabledMcpjsonServers: ['shell'] }));
      } else {
        const added = await exec(process.execPath, [CLAUDE, 'mcp', 'add', ...setup.args], env, s.project, 60_000);
        if (added.code !== 0) throw new Error(`claude mcp add failed (${added.code}): ${added.stderr}`);
      }
    }
    const r = await exec(
      process.execPath,
      [
        CLAUDE,
        '-p',
        'Use the shell tools as asked.',
        '--model',
        'claude-sonnet-4-5',
        ...mcpFlags,
        '--debug-file',
        debugFile,
        '--allowedTools',
        script.map((c) => `mcp__shell__${c.tool}`).join(','),
        '--output-format',
        'json',
      ],
      env,
      s.project,
      timeoutMs,
    );
    const debugLog = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
    return { ...r, results: model.results(), requests: model.requests, debugLog };
  } finally {
    await model.close();
    rmSync(s.base, { recursive: true, force: true });
  }
}

/**
 * `codex exec` with a model provider of its own (the fake model's Responses API) and the
 * server as docs/mcp.md configures it; `approve: false` leaves out
 * `default_tools_approval_mode` (what the docs said before).
 */
export async function runCodex(
  script: ScriptedCall[],
  options: { approve?: boolean; timeoutMs?: number; serverToml?: string } = {},
): Promise<ClientRun> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const s = scratch();
  const model = await fakeModel(script);
  try {
    const codexHome = join(s.home, '.codex');
    mkdirSync(codexHome);
    const toml = (v: string) => JSON.stringify(v);
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "gpt-5"',
        'model_provider = "fake"',
        // `codex exec` waits this long for MCP servers still starting before its first turn
        // (by default a moment: `npx` on a loaded machine takes seconds, and the turn has no tools).
        'mcp_optional_startup_grace_ms = 60000',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = ${toml(`${model.url}/v1`)}`,
        'wire_api = "responses"',
        'env_key = "FAKE_API_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        // The server as docs/mcp.md writes it (its `npx` command, this checkout installed in the project), or this checkout's.
        ...(options.serverToml !== undefined
          ? [options.serverToml]
          : [
              '[mcp_servers.shell]',
              `command = ${toml(process.execPath)}`,
              `args = [${s.mcpArgs.map(toml).join(', ')}]`,
              'tool_timeout_sec = 600',
              ...(options.approve === false ? [] : ['default_tools_approval_mode = "approve"']),
            ]),
        '',
      ].join('\n'),
    );
    if (options.serverToml !== undefined) installHere(s.project);
    const env = { ...cleanEnv(s.home), CODEX_HOME: codexHome, FAKE_API_KEY: 'offline-test' };
    const r = await exec(
      process.execPath,
      [CODEX, 'exec', '--skip-git-repo-check', '--json', 'Use the shell tools as asked.'],
      env,
      s.project,
      timeoutMs,
    );
    return { ...r, results: model.results(), requests: model.requests };
  } finally {
    await model.close();
    rmSync(s.base, { recursive: true, force: true });
  }
}
