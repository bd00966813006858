// The sandbox flags of `native-shell-service mcp` → `SandboxOptions` (and, for
// `--sandbox-caches`, the environment that points the package managers at caches of the
// sandbox's own).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

import type { SandboxOptions } from '../contract/addon.js';

export const SANDBOX_VALUED_FLAGS = [
  'sandbox-write',
  'sandbox-ports',
  'sandbox-env',
  'sandbox-read-deny',
  'sandbox-read-allow',
  'sandbox-unix-socket',
];
export const SANDBOX_BOOLEAN_FLAGS = [
  'sandbox',
  'sandbox-network',
  'sandbox-private-home',
  'sandbox-caches',
  'sandbox-sysv-ipc',
];

export const SANDBOX_USAGE = `[--sandbox] [--sandbox-write PATH]... [--sandbox-network]
                           [--sandbox-ports PORT,PORT...] [--sandbox-private-home] [--sandbox-caches]
                           [--sandbox-env NAME]... [--sandbox-read-deny PATH]...
                           [--sandbox-read-allow PATH]... [--sandbox-sysv-ipc]
                           [--sandbox-unix-socket PATH]...`;

/**
 * `--sandbox-caches`: one writable directory, used by sandboxed jobs only, and the
 * variables that send the package managers' caches there.
 *
 * Why not the user's own caches (`~/.npm`, `~/.cargo`, `~/.cache`): what is in them runs
 * later, outside the sandbox. `~/.cargo/bin` is on the PATH and `~/.cargo/env` is sourced
 * by `.profile`; `~/.cargo/registry/src` holds the crates' sources, which the next
 * unconfined `cargo build` of any project compiles (and whose build scripts it runs)
 * without checking them again; `~/.npm/_npx` holds what `npx` runs and `_cacache` what
 * later installs unpack; `~/.cache` has pip's built wheels, node-gyp's headers, browsers
 * downloaded by test tools. A job allowed to write any of them could leave code that the
 * user's own shell runs unconfined. So the jobs get caches of their own, which nothing
 * outside the sandbox reads: the price is a second download of what the user's caches
 * already have.
 */
export interface SandboxCaches {
  /** The one directory the sandbox makes writable. */
  root: string;
  /** Set in every job's environment (the MCP server's jobs are all sandboxed). */
  env: Record<string, string>;
}

/**
 * Where the caches are: `$XDG_CACHE_HOME/native-shell-service/sandbox-caches` (default
 * `~/.cache/...`). Nothing under it is read by a process outside the sandbox: the
 * variables below are set for sandboxed jobs only.
 */
export function sandboxCaches(env: NodeJS.ProcessEnv = process.env, home = homedir()): SandboxCaches {
  const root = join(env.XDG_CACHE_HOME || join(home, '.cache'), 'native-shell-service', 'sandbox-caches');
  return {
    root,
    env: {
      // npm's whole cache folder: `_cacache` (packages), `_logs`, `_npx` (what npx
      // installs and runs) and the update notifier's stamp are all written there.
      npm_config_cache: join(root, 'npm'),
      // Cargo's registry index, `.crate` files and unpacked sources, git checkouts, its
      // locks and `.global-cache`. Its `bin` and `env` there are on no PATH and sourced by
      // nothing. `~/.cargo/config.toml` is still read for projects under the home
      // directory (cargo reads every parent's `.cargo/config.toml`).
      CARGO_HOME: join(root, 'cargo'),
      // Every tool that keeps its cache under the XDG cache directory: pip, yarn 1,
      // Go's build cache, node-gyp's headers, Playwright's and Puppeteer's browsers.
      XDG_CACHE_HOME: join(root, 'xdg'),
      // Go's module cache (default ~/go/pkg/mod, beside ~/go/bin).
      GOMODCACHE: join(root, 'go-mod'),
    },
  };
}

/**
 * Makes the caches' directories (0700, the user's only); the sandbox needs them to exist.
 * Throws an Error with the file system's `code` and a message naming the flag.
 */
export function makeSandboxCaches(caches: SandboxCaches): void {
  for (const dir of [caches.root, ...Object.values(caches.env)]) {
    try {
      // One level at a time: Node's `recursive` spins forever where a file system answers
      // ENOENT for a child of a directory that exists (XDG_CACHE_HOME under /proc).
      const missing: string[] = [];
      for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d);
      for (const d of missing) {
        try {
          mkdirSync(d, { mode: 0o700 });
        } catch (e) {
          // Another server starting at the same moment made it.
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d).isDirectory()) throw e;
        }
      }
    } catch (e) {
      const { code, message } = e as NodeJS.ErrnoException;
      throw Object.assign(new Error(`--sandbox-caches: cannot make ${dir}: ${message}`), { code });
    }
  }
}

/**
 * The sandbox the flags ask for, or undefined for none. Any `--sandbox-*` flag implies
 * `--sandbox`. With `--sandbox-caches`, `caches.root` is writable (give the same
 * `caches` to the service's environment). Throws an Error with a message for people on a
 * bad port list.
 */
export function sandboxFromFlags(flags: Map<string, string[]>, caches: SandboxCaches = sandboxCaches()): SandboxOptions | undefined {
  const any = [...SANDBOX_VALUED_FLAGS, ...SANDBOX_BOOLEAN_FLAGS].some((f) => flags.has(f));
  if (!any) return undefined;
  const options: SandboxOptions = {};
  const write = [...(flags.get('sandbox-write') ?? []), ...(flags.has('sandbox-caches') ? [caches.root] : [])];
  if (write.length > 0) options.write = write;
  const ports = flags.get('sandbox-ports');
  if (flags.has('sandbox-network') && ports) throw new Error('--sandbox-network allows every port; leave out --sandbox-ports');
  if (flags.has('sandbox-network')) options.network = true;
  else if (ports) {
    const tcpPorts = ports.flatMap((list) => list.split(',')).map((p) => p.trim()).filter((p) => p !== '').map(Number);
    if (tcpPorts.length === 0 || tcpPorts.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
      throw new Error('--sandbox-ports is a comma-separated list of ports from 1 to 65535, e.g. 3000,5173');
    }
    options.network = { tcpPorts };
  }
  if (flags.has('sandbox-private-home')) options.read = [];
  // Variables a job gets although they look like credentials (`NPM_TOKEN` for a private
  // registry): by default a sandboxed job's environment has none (docs/sandbox.md).
  const env = flags.get('sandbox-env');
  if (env) options.env = env;
  // Paths jobs may not read besides the credential stores left out by default (~/.ssh,
  // ~/.aws...), and hidden paths they may read after all (docs/sandbox.md, "Secrets").
  const readDeny = flags.get('sandbox-read-deny');
  if (readDeny) options.readDeny = readDeny;
  const readAllow = flags.get('sandbox-read-allow');
  if (readAllow) options.readAllow = readAllow;
  if (flags.has('sandbox-sysv-ipc')) options.sysvIpc = true;
  // Pathname unix sockets outside the writable paths a job may connect to (an ssh-agent,
  // the D-Bus session bus): none by default, since the servers behind them run or sign
  // anything for the user (docs/sandbox.md, "Unix sockets").
  const unixSockets = flags.get('sandbox-unix-socket');
  if (unixSockets) options.unixSockets = unixSockets;
  return options;
}
