// Where a client finds the daemon: the socket's path and the check of its directory,
// the same rule as the daemon's src/daemon/place.rs.
import { lstat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { codedError } from './errors.js';

/**
 * `$XDG_RUNTIME_DIR/native-shell-service/daemon.sock`, else
 * `<temp dir>/native-shell-service-<uid>/daemon.sock`.
 */
export function defaultSocket(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime) return join(runtime, 'native-shell-service', 'daemon.sock');
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return join(tmpdir(), `native-shell-service-${uid}`, 'daemon.sock');
}

/** The socket path a client uses: the option made absolute, else the default. */
export function socketPath(option: string | undefined): string {
  return option ? resolve(option) : defaultSocket();
}

/**
 * Makes the socket's directory (mode 0700) or checks the one there: a real directory
 * (lstat: a symlink is refused) of this user with no group or other access, else
 * `DAEMON_UNAVAILABLE`. Fails closed: a directory someone else can write could hold
 * their socket in place of the daemon's, and this client would send them its commands
 * (and run what their "daemon" answers).
 */
export async function checkSocketDir(socket: string): Promise<string> {
  const dir = dirname(socket);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw codedError('DAEMON_UNAVAILABLE', `cannot make the daemon's directory ${dir}: ${(e as Error).message}`);
  }
  let stats;
  try {
    stats = await lstat(dir);
  } catch (e) {
    throw codedError('DAEMON_UNAVAILABLE', `cannot read the daemon's directory ${dir}: ${(e as Error).message}`);
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  if (!stats.isDirectory()) {
    throw codedError('DAEMON_UNAVAILABLE', `the daemon's directory ${dir} is not a directory (a symlink is refused)`);
  }
  if (stats.uid !== uid) {
    throw codedError('DAEMON_UNAVAILABLE', `the daemon's directory ${dir} belongs to uid ${stats.uid}, not ${uid}: refused`);
  }
  if ((stats.mode & 0o077) !== 0) {
    throw codedError(
      'DAEMON_UNAVAILABLE',
      `the daemon's directory ${dir} has mode ${(stats.mode & 0o777).toString(8)}: group and others must have no access (chmod 700 it)`,
    );
  }
  return dir;
}
