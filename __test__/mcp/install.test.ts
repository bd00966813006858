// The package as a user installs it: `npm pack` of the main package and of this machine's
// platform package, installed into an empty project (offline: nothing else may be
// needed), on the Node that runs the suite (CI: Node 20). Nothing but the two packages
// lands in node_modules, npm warns of no engine, and `npx native-shell-service mcp`
// serves the tools: the MCP SDK is bundled (scripts/bundle.mjs), not a dependency.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureBuilt, ROOT } from './setup';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// The platform package this machine loads, as the generated loader names it.
const host = `${process.platform}-${process.arch}${process.platform === 'linux' ? '-gnu' : process.platform === 'win32' ? '-msvc' : ''}`;
const binary = `${pkg.napi.binaryName}.${host}.node`;

let base: string;
let project: string;
let packed: string[];
let install: { stdout: string; stderr: string };

beforeAll(() => {
  ensureBuilt();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-install-')));
  project = join(base, 'project');
  mkdirSync(project);
  // The platform package with the addon `npm run build` made here, packed from a copy.
  const platformDir = join(base, 'platform');
  cpSync(join(ROOT, 'npm', host), platformDir, { recursive: true });
  copyFileSync(join(ROOT, binary), join(platformDir, binary));
  const pack = (dir: string, ignoreScripts: boolean) =>
    JSON.parse(
      execFileSync(NPM, ['pack', '--json', '--pack-destination', base, ...(ignoreScripts ? ['--ignore-scripts'] : [])], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        shell: process.platform === 'win32',
      }),
    )[0] as { filename: string; files: Array<{ path: string }> };
  // The suite's build made dist/ already; prepack would make it again.
  const main = pack(ROOT, true);
  const platform = pack(platformDir, false);
  packed = main.files.map((f) => f.path);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', private: true }));
  const r = spawnSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', join(base, main.filename), join(base, platform.filename)], {
    cwd: project,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'warn' },
    shell: process.platform === 'win32',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`npm install failed:\n${r.stdout}\n${r.stderr}`);
  install = { stdout: r.stdout, stderr: r.stderr };
}, 360_000);
afterAll(() => base && rmSync(base, { recursive: true, force: true }));

describe('the packed package', () => {
  it('holds the licence, the bundle and declarations; no source maps, no code that needs the SDK', () => {
    for (const f of ['LICENSE', 'CHANGELOG.md', 'SECURITY.md', 'README.md', 'index.js', 'index.d.ts', 'dist/native-shell-service.cjs', 'dist/THIRD_PARTY_LICENSES.txt', 'dist/tools/index.d.ts']) {
      expect(packed, f).toContain(f);
    }
    expect(packed.filter((f) => f.endsWith('.map'))).toEqual([]);
    // The unbundled command and server (they import the SDK) stay out: the bundle is the command.
    expect(packed.filter((f) => /^dist\/tools\/(cli|main|mcp-server|demo)\.|^dist\/tools\/mcp\//.test(f))).toEqual([]);
    expect(pkg.dependencies ?? {}).toEqual({});
  });

  it('says where it comes from, and its README links work on the registry', () => {
    const repo = 'https://github.com/native-shell-service/native-shell-service';
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${repo}.git` });
    expect(pkg.homepage).toBe(`${repo}#readme`);
    expect(pkg.bugs).toEqual({ url: `${repo}/issues` });
    // npm's provenance checks each published package's repository against the workflow's.
    const platformPkg = JSON.parse(readFileSync(join(project, 'node_modules', `${pkg.name}-${host}`, 'package.json'), 'utf8'));
    expect(platformPkg.repository).toEqual(pkg.repository);
    expect(readFileSync(join(project, 'node_modules', pkg.name, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0, January 2004[\s\S]*END OF TERMS AND CONDITIONS/);
    // The registry shows the README without the repository around it: relative links break.
    const readme = readFileSync(join(project, 'node_modules', pkg.name, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThan(5);
    expect(links.filter((l) => !/^https:\/\//.test(l))).toEqual([]);
  });

  it('installs offline into an empty project with no warning and nothing else in node_modules', () => {
    expect(`${install.stdout}${install.stderr}`).not.toMatch(/EBADENGINE|npm warn|npm WARN/);
    const modules = readdirSync(join(project, 'node_modules')).filter((f) => !f.startsWith('.'));
    expect(modules.sort()).toEqual([pkg.name, `${pkg.name}-${host}`]);
    // What the installed package imports at run time resolves inside it.
    const installed = join(project, 'node_modules', pkg.name);
    const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(installed)}); require(${JSON.stringify(join(installed, 'dist', 'tools', 'index.js'))})`], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(existsSync(join(project, 'node_modules', '.bin'))).toBe(true);
  });

  it('`npx native-shell-service mcp` serves the tools', async () => {
    const transport = new StdioClientTransport({
      command: NPM === 'npm' ? 'npx' : 'npx.cmd',
      args: ['--offline', '--no-install', 'native-shell-service', 'mcp', '--io-dir', join(base, 'io')],
      cwd: project,
      env: { ...process.env } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'install-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['jobs', 'kill', 'run_shell_command', 'send_input', 'shell_cmd']);
      const r = await client.callTool({ name: 'shell_cmd', arguments: { command: 'node', parameters: ['-e', 'console.log(6 * 7)'] } });
      expect((r.content as Array<{ text: string }>).map((c) => c.text).join('\n')).toMatch(/\n42$/);
    } finally {
      await client.close();
    }
  }, 60_000);
});
