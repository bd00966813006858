// The slice of the native addon the adapter uses, typed here so the adapter's
// declarations do not point into the package root, and a loader that finds the
// addon both from `compat/` (tests) and from `dist/compat/` (the build).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export type NativeStatus = 'exited' | 'running' | 'killed' | 'timed_out' | 'failed';

export interface NativeRunResult {
  handle: number;
  pid: number | null;
  status: NativeStatus;
  exitCode: number | null;
  signal: number | null;
  error: string | null;
  outputDir: string | null;
}

/** What an `onOutput` listener is told: the job's output position (see index.d.ts). */
export interface NativeOutputEvent {
  handle: number;
  totalBytes: number;
  textLength: number;
  exited: boolean;
  status: NativeStatus;
  exitCode: number | null;
  signal: number | null;
}

/** One `readOutput` answer: committed text from `since` to `next`, `omitted` bytes gone from both memory and file. */
export interface NativeOutputChunk {
  text: string;
  next: number;
  omitted: number;
}

/** A run of screen cells with the same attributes; colours `#rrggbb` or `''` (default). */
export interface NativeCellRun {
  text: string;
  fg: string;
  bg: string;
  bold: boolean;
  italic: boolean;
  underline: boolean;
  dim: boolean;
  inverse: boolean;
}

/** A PTY job's screen: `lines` are the scrollback asked for, oldest first, then the rows. */
export interface NativeScreen {
  cols: number;
  rows: number;
  cursor: { x: number; y: number; visible: boolean };
  alternateScreen: boolean;
  lines: NativeCellRun[][];
}

export interface NativeService {
  run(command: string, options?: {
    args?: string[];
    mode?: 'pty' | 'pipes';
    directory?: string;
    cols?: number;
    rows?: number;
    env?: Record<string, string>;
    /** The environment is `env` alone (plus the markers the service finds its jobs by). */
    clearEnv?: boolean;
    /** Lines the job's screen model keeps above the screen (for `getScreen`). */
    scrollback?: number;
    callbackDelayMs?: number;
    description?: string;
  }): Promise<NativeRunResult>;
  writeToPty(handle: number, data: string | Buffer): void;
  getResult(handle: number, options?: { maxOutputSize?: number }): { totalBytes: number };
  onOutput(handle: number, listener: (event: NativeOutputEvent) => void): () => void;
  readOutput(handle: number, options: { since: number; maxBytes?: number }): NativeOutputChunk;
  getScreen(handle: number, options?: { scrollback?: number }): NativeScreen;
  getProcessOutput(handle: number, options?: { view?: 'text' | 'screen' | 'raw'; tailBytes?: number }): string;
  resizePty(handle: number, cols: number, rows: number): void;
  kill(handle: number, options?: { graceMs?: number }): Promise<{ status: NativeStatus }>;
  removeProcess(handle: number): void;
  shutdown(): Promise<void>;
}

export interface NativeServiceOptions {
  projectRoot?: string;
  ioDir?: string;
  sessionId?: string;
  maxJobs?: number;
  persistOutput?: boolean;
}

interface Addon {
  ShellExecutionService: new (options?: NativeServiceOptions) => NativeService;
}

/** The directory holding this package's package.json, found by walking up. */
function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'native-shell-service') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('native-shell-service: cannot find the package root from ' + __dirname);
    dir = parent;
  }
}

let addon: Addon | undefined;

export function loadAddon(): Addon {
  if (!addon) {
    const root = packageRoot();
    addon = createRequire(join(root, 'package.json'))(join(root, 'index.js')) as Addon;
  }
  return addon;
}

/** Defaults for the one native service behind the adapter's static API. */
export function defaultNativeOptions(): NativeServiceOptions {
  return {
    // Upstream takes absolute working directories; the native service takes them
    // relative to its root, so the root is `/` and every directory is inside it.
    projectRoot: '/',
    ioDir: join(tmpdir(), 'native-shell-service-gemini-compat'),
    sessionId: `gemini-compat-${process.pid}`,
    maxJobs: 256,
    persistOutput: true,
  };
}
