// The published entry points: `native-shell-service/tools` from ESM (the Gemini CLI is
// ESM) and CommonJS, through the package's `exports`, with declarations next to the code.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

import { ensureBuilt, ROOT } from './setup';

beforeAll(() => ensureBuilt());

const node = (code: string, type: 'module' | 'commonjs') =>
  execFileSync(process.execPath, [`--input-type=${type}`, '-e', code], { cwd: ROOT, encoding: 'utf8' });

describe('package entry points', () => {
  it('exports ./tools with types, and the bin', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.exports['./tools']).toEqual({ types: './dist/tools/index.d.ts', default: './dist/tools/index.js' });
    expect(pkg.exports['.']).toBeDefined();
    expect(pkg.bin['native-shell-service']).toBe('bin/native-shell-service.js');
    for (const f of ['index.js', 'index.d.ts', 'cli.js', 'mcp-server.d.ts', 'gemini-cli.d.ts']) {
      expect(existsSync(join(ROOT, 'dist', 'tools', f)), f).toBe(true);
    }
  });

  it('`npm run build` builds the TypeScript too, and the package ships the Gemini CLI extension', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.build).toMatch(/^napi build .* && npm run build:ts && npm run build:compat$/);
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8'));
    for (const f of ['gemini-extension.json', manifest.contextFileName, 'bin/native-shell-service.js', 'dist/native-shell-service.cjs']) {
      expect(files, f).toContain(f);
    }
  });

  it('named ESM imports work', () => {
    const out = node(
      `import { createShellTools, DECLARATIONS, createGeminiCliTools, ToolErrorType } from 'native-shell-service/tools';
       import { ShellExecutionService } from 'native-shell-service';
       const s = new ShellExecutionService({ projectRoot: process.cwd(), persistOutput: false });
       const t = createShellTools(s, { onAsk: 'allow' });
       const r = await t.shell_cmd.buildAndExecute({ command: 'echo', parameters: ['esm'] });
       console.log(DECLARATIONS.length, typeof createGeminiCliTools, ToolErrorType.COMMAND_BLOCKED, r.llmContent.split('\\n').at(-1));
       await s.shutdown();`,
      'module',
    );
    expect(out.trim()).toBe('5 function COMMAND_BLOCKED esm');
  });

  it('require() works', () => {
    const out = node(
      `const t = require('native-shell-service/tools');
       const { ShellExecutionService } = require('native-shell-service');
       const s = new ShellExecutionService({ projectRoot: process.cwd(), persistOutput: false });
       console.log(Object.keys(t.createShellTools(s)).join(','));
       s.shutdown();`,
      'commonjs',
    );
    expect(out.trim()).toBe('run_shell_command,send_input,jobs,kill,shell_cmd');
  });
});
