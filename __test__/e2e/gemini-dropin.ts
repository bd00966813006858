// The real Gemini CLI 0.61 switched over to this package's drop-in, as
// docs/gemini-compat.md, "Switching the Gemini CLI over", does in the CLI's source: here
// in a copy of its published bundle, where each chunk that defines the CLI's
// ShellExecutionService defines it as the drop-in's instead (and lets the drop-in report
// to the CLI's own ExecutionLifecycleService, step 3). Nothing else of the CLI changes.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { ROOT } from '../mcp/setup';

/**
 * Where the copy and the drop-in are built: inside the package, so that the drop-in finds
 * the addon as dist/ does and the CLI's own dependencies resolve from node_modules.
 */
const HERE = join(ROOT, 'node_modules', '.cache', 'nss-gemini-dropin-test');

/** How upstream's class is declared in a chunk of the bundle (esbuild's output for 0.61.0). */
const UPSTREAM = 'var ShellExecutionService = class _ShellExecutionService {';
const LIFECYCLE = 'var ExecutionLifecycleService = class';

/** Builds the copy; returns its `bundle/gemini.js`. Throws when the bundle has no chunk to switch. */
export function geminiWithDropIn(): string {
  removeGeminiWithDropIn();
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'compat', 'tsconfig.json'), '--outDir', join(HERE, 'drop-in')]);
  const dropIn = join(HERE, 'drop-in', 'compat', 'gemini-compat.js');
  const cli = join(HERE, 'gemini-cli');
  cpSync(join(ROOT, 'node_modules', '@google', 'gemini-cli'), cli, { recursive: true });
  let switched = 0;
  for (const name of readdirSync(join(cli, 'bundle'))) {
    if (!name.endsWith('.js')) continue;
    const file = join(cli, 'bundle', name);
    const text = readFileSync(file, 'utf8');
    if (!text.includes(UPSTREAM)) continue;
    // The chunk's own `require` (each chunk makes one with createRequire) loads the drop-in;
    // the lifecycle class is declared earlier in the same chunk.
    const useLifecycle = text.indexOf(LIFECYCLE) >= 0 && text.indexOf(LIFECYCLE) < text.indexOf(UPSTREAM) ? 'S.useLifecycle(ExecutionLifecycleService); ' : '';
    const replacement =
      `var ShellExecutionService = (() => { const S = require(${JSON.stringify(dropIn)}).ShellExecutionService; ${useLifecycle}return S; })();\n` +
      'var UpstreamShellExecutionService = class _ShellExecutionService {';
    writeFileSync(file, text.replace(UPSTREAM, replacement));
    switched++;
  }
  if (switched === 0) throw new Error(`no chunk of the Gemini CLI's bundle declares ${UPSTREAM}`);
  return join(cli, 'bundle', 'gemini.js');
}

export function removeGeminiWithDropIn(): void {
  if (existsSync(HERE)) rmSync(HERE, { recursive: true, force: true });
}
