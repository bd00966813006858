// Loads the native addon by the package's own name (self-reference through `exports`),
// so the same code works from `tools/` (tests) and from `dist/tools/` (published).
import { createRequire } from 'node:module';

import type * as Addon from 'native-shell-service';

let cached: typeof Addon | null = null;

/**
 * `require` for this package's own modules. Compiled, this file is CommonJS and has
 * `require`; under a test runner's ESM transform it may not, and the package root (the
 * working directory) resolves the package's name.
 */
export function requireOwn(id: string): unknown {
  const load: NodeRequire = typeof require === 'function' ? require : createRequire(`${process.cwd()}/package.json`);
  return load(id);
}

export function loadAddon(): typeof Addon {
  cached ??= requireOwn('native-shell-service') as typeof Addon;
  return cached;
}

export type ShellExecutionService = Addon.ShellExecutionService;
export type RunResult = Addon.RunResult;
export type InteractionResult = Addon.InteractionResult;
export type ProcessInfo = Addon.ProcessInfo;
export type ServiceOptions = Addon.ServiceOptions;
export type RunOptions = Addon.RunOptions;
export type OutputEvent = Addon.OutputEvent;
