// Runs the real Claude Code and Codex CLIs (devDependencies) offline: their model is
// __test__/e2e/fake-model.ts on 127.0.0.1, their MCP server `native-shell-service mcp`
// on a scratch project, their HOME a scratch directory. What a test reads back is what
// each client handed its model as the tool results.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ShellExecutionService } from '../helpers';
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
  /** With `tap`: every message the client sent the stdio server, in order. */
  wire: Array<{ method?: string; id?: unknown; params?: Record<string, unknown> }>;
}

/** Runs the stdio server behind a tap that records what the client sends (wire-tap.cjs). */
const TAP = join(ROOT, '__test__', 'e2e', 'wire-tap.cjs');

function readWire(file: string): ClientRun['wire'] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ClientRun['wire'][number]);
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

/**
 * The stdio server's command: this checkout's, or another build's
 * `bin/native-shell-service.js` named by NSS_E2E_SERVER_BIN (how BENCHMARKS.md, "What
 * the model sees", took its "before" figures from an earlier commit's server).
 */
const SERVER_BIN = process.env.NSS_E2E_SERVER_BIN ?? BIN;

function scratch(): Scratch {
  ensureBuilt();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-client-')));
  const home = join(base, 'home');
  const project = join(base, 'project');
  mkdirSync(home);
  mkdirSync(project);
  return { base, home, project, mcpArgs: [SERVER_BIN, 'mcp', '--project-root', project, '--io-dir', join(base, 'io')] };
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
  options: { server?: object; setup?: ClaudeSetup; extraArgs?: string[]; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ClaudeRun> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const setup: ClaudeSetup = options.setup ?? { kind: 'flag', ...(options.server ? { server: options.server } : {}) };
  const s = scratch();
  const model = await fakeModel(script);
  try {
    const config = join(s.base, 'mcp.json');
    const wireLog = join(s.base, 'wire.jsonl');
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
      ...options.env,
    };
    let mcpFlags: string[] = [];
    if (setup.kind === 'flag') {
      writeFileSync(config, JSON.stringify({ mcpServers: { shell: setup.server ?? { command: process.execPath, args: [TAP, wireLog, process.execPath, ...s.mcpArgs, ...(options.extraArgs ?? [])] } } }));
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
    return { ...r, results: model.results(), requests: model.requests, wire: readWire(wireLog), debugLog };
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
  options: {
    approve?: boolean;
    timeoutMs?: number;
    serverToml?: string;
    /** More arguments for this checkout's stdio server (`--daemon-socket P`). */
    extraArgs?: string[];
    /** The server over Streamable HTTP instead: its `/mcp` URL and bearer token (passed as Codex reads it, from an environment variable). */
    http?: { url: string; token: string };
  } = {},
): Promise<ClientRun> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const s = scratch();
  const model = await fakeModel(script);
  try {
    const wireLog = join(s.base, 'wire.jsonl');
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
              ...(options.http
                ? [`url = ${toml(options.http.url)}`, 'bearer_token_env_var = "SHELL_TOKEN"']
                : [
                    `command = ${toml(process.execPath)}`,
                    `args = [${[TAP, wireLog, process.execPath, ...s.mcpArgs, ...(options.extraArgs ?? [])].map(toml).join(', ')}]`,
                  ]),
              'tool_timeout_sec = 600',
              ...(options.approve === false ? [] : ['default_tools_approval_mode = "approve"']),
            ]),
        '',
      ].join('\n'),
    );
    if (options.serverToml !== undefined) installHere(s.project);
    const env = { ...cleanEnv(s.home), CODEX_HOME: codexHome, FAKE_API_KEY: 'offline-test', ...(options.http ? { SHELL_TOKEN: options.http.token } : {}) };
    const r = await exec(
      process.execPath,
      [CODEX, 'exec', '--skip-git-repo-check', '--json', 'Use the shell tools as asked.'],
      env,
      s.project,
      timeoutMs,
    );
    return { ...r, results: model.results(), requests: model.requests, wire: readWire(wireLog) };
  } finally {
    await model.close();
    rmSync(s.base, { recursive: true, force: true });
  }
}

/** How Claude Code's notification to the model of an MCP task's end begins (its tools' texts mention task notifications too). */
export const TASK_ENDED = '<summary>MCP task shell-job-';

export interface InteractiveRun {
  /** What the client sent the server, in order. */
  wire: ClientRun['wire'];
  /** The terminal's screen when Claude Code asked its user for the task's input. */
  asked: string;
  /** The terminal's screen at the end. */
  screen: string;
  results: SeenResult[];
  /** Every request body the model got, as JSON text (the task's end arrives as a notification). */
  modelSaw: string[];
}

/**
 * Claude Code as a person runs it: interactive, in a real terminal (this package's PTY),
 * where MCP tasks are on (docs/mcp.md, "Tasks in each client"). The model calls
 * run_shell_command with `command` once; when Claude Code shows the task's question,
 * `answer` is typed into its form and accepted, as its user would; the run ends when the
 * model has been told the task ended (or the bounds run out: the caller's assertions say
 * what was missing).
 */
export async function runClaudeInteractive(
  command: string,
  answer: string,
  /** The server over HTTP instead of stdio: its config entry, and the tap its requests go through (http-tap.ts). */
  http?: { server: object; wire: () => ClientRun['wire'] },
): Promise<InteractiveRun> {
  const s = scratch();
  const model = await fakeModel([{ tool: 'run_shell_command', args: { command } }]);
  const service = new ShellExecutionService({ projectRoot: s.project, ioDir: join(s.base, 'terminal-io') });
  const key = 'sk-ant-offline-test-interactive-0123456789';
  try {
    // A user who has been through onboarding, trusts the project and approved the key.
    writeFileSync(
      join(s.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: 'dark',
        customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
        projects: { [s.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      }),
    );
    const wireLog = join(s.base, 'wire.jsonl');
    const config = join(s.base, 'mcp.json');
    const server = http?.server ?? { command: process.execPath, args: [TAP, wireLog, process.execPath, ...s.mcpArgs] };
    writeFileSync(config, JSON.stringify({ mcpServers: { shell: server } }));
    const wire = () => (http ? http.wire() : readWire(wireLog));
    const env: Record<string, string> = {
      ...(cleanEnv(s.home) as Record<string, string>),
      TERM: 'xterm-256color',
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: key,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      MCP_TIMEOUT: '60000',
      ENABLE_TOOL_SEARCH: 'false',
    };
    const args = [CLAUDE, '--model', 'claude-sonnet-4-5', '--mcp-config', config, '--strict-mcp-config', '--allowedTools', 'mcp__shell__run_shell_command'];
    const { handle } = service.start(process.execPath, { args, env, cols: 120, rows: 40 });
    const screen = () => service.getProcessOutput(handle, { view: 'screen' });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /** Polls `done` (bounded generously: both cores may be busy); false when the bound ran out. */
    const until = async (done: () => boolean, ms = 120_000) => {
      for (const end = Date.now() + ms; Date.now() < end; await sleep(250)) if (done()) return true;
      return false;
    };
    const saw = () => model.requests.map((r) => JSON.stringify(r.body));
    // The prompt only once the server's tools are listed: an interactive session starts
    // before its MCP servers connect, and a first turn without them has no tool to call.
    await until(() => wire().some((m) => m.method === 'tools/list'));
    await sleep(1000);
    service.writeToPty(handle, 'Use the shell tools as asked.');
    await until(() => screen().includes('Use the shell tools as asked.'), 30_000);
    service.writeToPty(handle, '\r');
    let asked = '';
    if (await until(() => screen().includes('requests your input'))) {
      asked = screen();
      service.writeToPty(handle, answer);
      await until(() => screen().includes(`Input: ${answer}`), 30_000);
      // Each Enter is pressed again while its step has not shown: on a loaded machine
      // the form drops a key that comes while it redraws (seen 1 run in 3-5 with both
      // cores busy, the form left at "❯ Accept"). Both presses are idempotent: the
      // first moves on to Accept, the second accepts and closes the form.
      const press = async (done: () => boolean) => {
        for (let tries = 0; tries < 5 && !done(); tries++) {
          service.writeToPty(handle, '\r');
          await until(done, 15_000);
        }
      };
      await press(() => /❯ Accept/.test(screen())); // the field is filled: on to Accept
      await press(() => !screen().includes('requests your input'));
      await until(() => saw().some((b) => b.includes(TASK_ENDED)));
    }
    const end = screen();
    await service.kill(handle).catch(() => {});
    return { wire: wire(), asked, screen: end, results: model.results(), modelSaw: saw() };
  } finally {
    await service.shutdown().catch(() => {});
    await model.close();
    rmSync(s.base, { recursive: true, force: true });
  }
}
