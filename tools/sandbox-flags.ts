// The sandbox flags of `native-shell-service mcp` → `SandboxOptions`.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import type { SandboxOptions } from '../contract/addon.js';

export const SANDBOX_VALUED_FLAGS = ['sandbox-write', 'sandbox-ports', 'sandbox-env'];
export const SANDBOX_BOOLEAN_FLAGS = ['sandbox', 'sandbox-network', 'sandbox-private-home', 'sandbox-caches'];

export const SANDBOX_USAGE = `[--sandbox] [--sandbox-write PATH]... [--sandbox-network]
                           [--sandbox-ports PORT,PORT...] [--sandbox-private-home] [--sandbox-caches]
                           [--sandbox-env NAME]...`;

/**
 * The package managers' caches under the home directory, writable with
 * `--sandbox-caches` (those that exist): what `npm install`, `cargo build`, `pip` and
 * `go build` write outside the project.
 */
export function cacheDirs(home = homedir()): string[] {
  return ['.npm', '.cache', '.cargo', '.yarn', join('.local', 'share', 'pnpm'), join('go', 'pkg')]
    .map((d) => join(home, d))
    .filter((d) => existsSync(d));
}

/**
 * The sandbox the flags ask for, or undefined for none. Any `--sandbox-*` flag implies
 * `--sandbox`. Throws an Error with a message for people on a bad port list.
 */
export function sandboxFromFlags(flags: Map<string, string[]>): SandboxOptions | undefined {
  const any = [...SANDBOX_VALUED_FLAGS, ...SANDBOX_BOOLEAN_FLAGS].some((f) => flags.has(f));
  if (!any) return undefined;
  const options: SandboxOptions = {};
  const write = [...(flags.get('sandbox-write') ?? []), ...(flags.has('sandbox-caches') ? cacheDirs() : [])];
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
  return options;
}
