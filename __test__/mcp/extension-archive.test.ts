// The release archive of this machine's platform (`npm run build:extension`,
// scripts/build-extension.mjs) as a user gets it: named as the Gemini CLI picks a GitHub
// release asset, extracted, installed with `gemini extensions install <dir>` (a copy, not
// a link to this checkout), and used offline by the real CLI through its own server.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { geminiHome, type GeminiHome } from './gemini-home';
import { ensureBuilt, ROOT } from './setup';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8'));
const server = Object.keys(manifest.mcpServers)[0] as string;
const archiveName = `${platform()}.${arch()}.${pkg.name}.tar.gz`;

let g: GeminiHome;
let extracted: string;
let installed: string;
let build: string;

beforeAll(() => {
  ensureBuilt();
  build = execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-extension.mjs')], { cwd: ROOT, encoding: 'utf8' });
  g = geminiHome();
  extracted = join(g.base, 'extracted');
  mkdirSync(extracted);
  execFileSync('tar', ['-xzf', join(ROOT, 'release', archiveName), '-C', extracted]);
  g.extensions('install', extracted);
  installed = join(g.base, 'home', '.gemini', 'extensions', pkg.name);
}, 180_000);
afterAll(() => g?.cleanup());

/** Every file under `dir`, relative to it. */
const files = (dir: string) => (readdirSync(dir, { recursive: true, withFileTypes: true }) as any[]).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1));

describe('the extension archive', () => {
  it('is named as the Gemini CLI picks a release asset for this machine', () => {
    expect(archiveName.startsWith(`${platform()}.${arch()}.`)).toBe(true);
    expect(build).toContain(`release/${archiveName}`);
  });

  it('holds the manifest, the context file, one bundled server, the addon, its daemon and the licenses; no node_modules', () => {
    const list = files(extracted).sort();
    const node = list.filter((f) => f.endsWith('.node'));
    expect(node).toEqual([`${pkg.napi.binaryName}.${platform()}-${arch()}${platform() === 'linux' ? '-gnu' : platform() === 'win32' ? '-msvc' : ''}.node`]);
    expect(list).toEqual(
      ['LICENSE', 'dist/THIRD_PARTY_LICENSES.txt', 'dist/native-shell-service.cjs', 'gemini-extension.json', manifest.contextFileName, 'index.js', 'package.json', ...node, platform() === 'win32' ? 'native-shell-daemon.exe' : 'native-shell-daemon'].sort(),
    );
    expect(list.some((f) => f.includes('node_modules'))).toBe(false);
    const js = list.filter((f) => /\.(c|m)?js$/.test(f));
    expect(js).toEqual(['dist/native-shell-service.cjs', 'index.js']); // the server, the addon's loader
    expect(readFileSync(join(extracted, 'LICENSE'), 'utf8')).toContain('Apache License');
    // The daemon is started by path: unpacked without its executable bit, `mcp --daemon` could not start it.
    if (platform() !== 'win32') expect(statSync(join(extracted, 'native-shell-daemon')).mode & 0o100).toBe(0o100);
  });

  it('runs from its own folder with nothing else: the server file requires only Node built-ins and the addon', () => {
    // Outside this checkout, with no module search path: a missing package would throw.
    const r = spawnSync(process.execPath, [join(extracted, 'dist', 'native-shell-service.cjs'), '--version'], {
      cwd: g.base,
      env: { ...process.env, NODE_PATH: '' },
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(pkg.version);
    const bundle = readFileSync(join(extracted, 'dist', 'native-shell-service.cjs'), 'utf8');
    // Calls, not text: ajv's code generator holds `require("ajv/...")` in template strings.
    const required = [...bundle.matchAll(/(?<![`'"])\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string);
    expect(required.filter((m) => !m.startsWith('node:') && !require('node:module').builtinModules.includes(m))).toEqual([]);
  });

  it('installs as a copy and a session uses its tools', async () => {
    expect(existsSync(join(installed, 'gemini-extension.json'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'native-shell-service.cjs'))).toBe(true);
    const calls = await g.session(
      server,
      [
        { call: 'run_shell_command', args: { command: 'python3 -q', ai_callback_pattern: '>>> ' } },
        { call: 'send_input', args: { handle: 1, input: "open('sum.txt', 'w').write(str(sum(range(10))))", ai_callback_pattern: '>>> ' } },
        { call: 'jobs', args: {} },
        { call: 'send_input', args: { handle: 1, input: 'exit()' } },
        { text: 'Done.' },
      ],
      'Sum 0..9 in Python into sum.txt.',
    );
    expect(calls.map((c) => c.name)).toEqual(['run_shell_command', 'send_input', 'jobs', 'send_input']);
    expect(calls.map((c) => c.status)).toEqual(Array(4).fill('success'));
    expect(readFileSync(join(g.root, 'sum.txt'), 'utf8')).toBe('45');
    expect(calls[0]!.output).toMatch(/^Handle: 1\n/);
    expect(calls[3]!.output).toContain('Status: the process exited with code 0');
  }, 180_000);
});
