// Starting the daemon: its binary found, run detached (its own session, its output in
// `daemon.log` beside the socket), so it outlives the client that started it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';

import { codedError } from './errors.js';

const BINARY = process.platform === 'win32' ? 'native-shell-daemon.exe' : 'native-shell-daemon';

/** The addon file this process loaded (`native-shell-service.<platform>.node`), if any. */
function loadedAddon(): string | undefined {
  const cache = createRequire(__filename).cache;
  return Object.keys(cache).find((f) => /^native-shell-service[^/\\]*\.node$/.test(basename(f)));
}

/**
 * The daemon's binary: `NATIVE_SHELL_DAEMON_BIN`, else beside the loaded addon (its
 * platform package), else the package root. `DAEMON_UNAVAILABLE` when none exists.
 */
export function daemonBinary(packageRoot: string): string {
  const override = process.env.NATIVE_SHELL_DAEMON_BIN;
  if (override) {
    if (!existsSync(override)) throw codedError('DAEMON_UNAVAILABLE', `NATIVE_SHELL_DAEMON_BIN names ${override}, which does not exist`);
    return override;
  }
  const addon = loadedAddon();
  const candidates = [...new Set([...(addon ? [join(dirname(addon), BINARY)] : []), join(packageRoot, BINARY)])];
  const found = candidates.find((c) => existsSync(c));
  if (!found) {
    throw codedError(
      'DAEMON_UNAVAILABLE',
      `the daemon's binary ${BINARY} is not installed (looked at ${candidates.join(', ')}); set NATIVE_SHELL_DAEMON_BIN or build it (npm run build)`,
    );
  }
  return found;
}

/** A daemon this client started: how it ended, if it did (`null` while it runs). */
export interface Launched {
  exitCode(): number | null;
}

/**
 * Starts a daemon for `socket` and returns at once (the caller connects with retries).
 * Two clients may both start one: the daemon that loses the lock exits 0 at once
 * (docs/daemon.md); one that cannot serve exits non-zero, saying why in daemon.log.
 */
export async function launchDaemon(binary: string, socket: string, idleExitMs: number | undefined): Promise<Launched> {
  const log = await open(join(dirname(socket), 'daemon.log'), 'a', 0o600);
  try {
    const args = ['--socket', socket, ...(idleExitMs !== undefined ? ['--idle-exit-ms', String(idleExitMs)] : [])];
    const child = spawn(binary, args, { detached: true, stdio: ['ignore', log.fd, log.fd], windowsHide: true });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (e) => reject(codedError('DAEMON_UNAVAILABLE', `cannot start the daemon ${binary}: ${e.message}`)));
    });
    let code: number | null = null;
    child.once('exit', (c, signal) => {
      code = c ?? (signal ? 128 : 1);
    });
    child.unref();
    return { exitCode: () => code };
  } finally {
    await log.close();
  }
}
