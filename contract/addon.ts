// The one way the TypeScript layers (tools/ and compat/) load the native addon, and
// the types they use. The addon is the generated loader, index.js (`npm run build`), with
// the package entry's `ShellExecutionService` (in process, or a daemon client:
// client/entry.ts, as service.js gives it), found from this file's place inside the
// package: contract/ in the
// repository (tests), dist/contract/ when built or installed. Neither the working
// directory nor the module system (CommonJS when compiled, ESM under a test runner)
// matters. Compiled by both tsconfig.json and compat/tsconfig.json to the same file.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import type * as Addon from 'native-shell-service';

import { isDaemonClient, type NativeExports, withDaemon } from '../client/entry.js';

export { isDaemonClient };

import type { RunResult } from 'native-shell-service';

export type {
  AnyShellExecutionService,
  CellRun,
  CommandCheck,
  CommandDecision,
  CommandPolicy,
  DaemonInfo,
  DaemonOptions,
  DaemonShellExecutionService,
  EndedJob,
  HistoryEntry,
  InteractionResult,
  JobMode,
  JobStatus,
  KillResult,
  OutputChunk,
  OutputEvent,
  PackedScreen,
  ProcessInfo,
  RunOptions,
  RunResult,
  RunStatus,
  SandboxInfo,
  SandboxOptions,
  Screen,
  ServiceOptions,
  ShellExecutionService,
  StartedJob,
  WaitStatus,
} from 'native-shell-service';

const PACKAGE_NAME = 'native-shell-service';

let root: string | undefined;

/** The directory holding this package's package.json, found by walking up from here. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === PACKAGE_NAME) {
          root = dir;
          return dir;
        }
      } catch {
        // not ours; keep walking
      }
    }
    if (dirname(dir) === dir) throw new Error(`${PACKAGE_NAME}: cannot find the package root from ${__dirname}`);
  }
}

/** This package's package.json. */
export function packageManifest(): { name: string; version: string } {
  return JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { name: string; version: string };
}

/**
 * The `RunResult` (status `failed`) a `SPAWN_FAILED` thrown by `start` carries: what
 * `run` returns for a program that cannot be started (README.md "API"). Undefined for
 * any other error.
 */
export function spawnFailure(error: unknown): RunResult | undefined {
  const e = error as { code?: unknown; result?: RunResult } | null;
  return e?.code === 'SPAWN_FAILED' && typeof e.result === 'object' && e.result !== null ? e.result : undefined;
}

let addon: typeof Addon | undefined;

/** The addon (loaded on first use, so importing a tool never loads the binary). */
export function loadAddon(): typeof Addon {
  if (!addon) {
    const native = createRequire(join(packageRoot(), 'package.json'))(join(packageRoot(), 'index.js')) as NativeExports;
    addon = withDaemon(native, { packageRoot: packageRoot(), version: packageManifest().version }) as unknown as typeof Addon;
  }
  return addon;
}
