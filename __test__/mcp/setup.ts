// Builds dist/tools when the TypeScript sources are newer, and connects the MCP SDK's own
// client to `native-shell-service mcp` over stdio.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const ROOT = resolve(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'native-shell-service.js');

/**
 * Compiles tools/ (and contract/, which it imports) to dist/ and bundles the command
 * (dist/native-shell-service.cjs, which the bin runs) unless the build is up to date.
 */
export function ensureBuilt(): void {
  const out = join(ROOT, 'dist', 'native-shell-service.cjs');
  const newest = Math.max(
    ...['tools', 'contract', 'client'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => statSync(join(ROOT, dir, f)).mtimeMs),
    ),
    statSync(join(ROOT, 'tsconfig.json')).mtimeMs,
  );
  if (existsSync(out) && existsSync(join(ROOT, 'dist', 'tools', 'cli.js')) && statSync(out).mtimeMs >= newest) return;
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs')], { cwd: ROOT, stdio: 'inherit' });
}

export interface McpSession {
  root: string;
  ioDir: string;
  client: Client;
  transport: StdioClientTransport;
  /** Text of a tool result, and whether it is an error. */
  call(name: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<{ text: string; isError: boolean }>;
  close(): Promise<void>;
  cleanup(): Promise<void>;
}

/** `env`: the server's environment (default: this process's). */
export async function connect(extraArgs: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<McpSession> {
  ensureBuilt();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-mcp-')));
  const root = join(base, 'project');
  const ioDir = join(base, 'io');
  mkdirSync(root);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--project-root', root, '--io-dir', ioDir, ...extraArgs],
    cwd: root,
    env: { ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'nss-test', version: '0.0.0' });
  await client.connect(transport);
  const session: McpSession = {
    root,
    ioDir,
    client,
    transport,
    async call(name, args = {}, options = {}) {
      const r = await client.callTool({ name, arguments: args }, undefined, options);
      const content = r.content as Array<{ type: string; text: string }>;
      return { text: content.map((c) => c.text).join('\n'), isError: r.isError === true };
    },
    close: () => client.close(),
    async cleanup() {
      await client.close().catch(() => {});
      rmSync(base, { recursive: true, force: true });
    },
  };
  return session;
}

/** Resolves when the process with this pid is gone (bounded). */
export async function exited(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/**
 * A Python interpreter that can import the `mcp` SDK: `$PYTHON` (default python3) if it
 * has it, else a virtual environment in the user's cache with `mcp` installed from PyPI
 * by pip (system Pythons often refuse a plain `pip install`). Throws when neither works:
 * the suite never skips the Python client.
 */
export function ensurePythonMcp(): string {
  const python = process.env.PYTHON ?? 'python3';
  const canImport = (py: string) => spawnSync(py, ['-c', 'import mcp.client.stdio'], { encoding: 'utf8' }).status === 0;
  if (canImport(python)) return python;
  const venv = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'native-shell-service', 'python-mcp');
  const venvPython = join(venv, 'bin', 'python');
  if (existsSync(venvPython) && canImport(venvPython)) return venvPython;
  const steps: Array<[string, string[]]> = [
    [python, ['-m', 'venv', '--clear', venv]],
    [venvPython, ['-m', 'pip', 'install', '--quiet', 'mcp']],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0) {
      throw new Error(`the Python mcp SDK is missing and \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}`);
    }
  }
  if (!canImport(venvPython)) throw new Error(`pip installed mcp in ${venv} but ${venvPython} cannot import it`);
  return venvPython;
}
