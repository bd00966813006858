// `daemon.url`: a daemon's HTTP port (`native-shell-daemon --listen`, docs/remote.md)
// in place of the unix socket. Checked here, so a typo fails at the constructor.
import type { DaemonOptions } from 'native-shell-service';

import { DEFAULT_URL_MAX_FRAME, MAX_REPLY } from './envelope.js';
import { codedError } from './errors.js';

/** The smallest `daemon.maxFrameBytes`: below it even `hello`'s reply would not fit. */
const MIN_FRAME = 64 << 10;

/** The URL to reach, or null for the unix socket; `INVALID_ARGUMENT` for a bad one. */
export function daemonUrl(d: DaemonOptions): URL | null {
  if (d.url === undefined || d.url === null) return null;
  if (typeof d.url !== 'string') throw codedError('INVALID_ARGUMENT', `daemon.url must be a string, got ${typeof d.url}`);
  if (d.socket !== undefined && d.socket !== null) throw codedError('INVALID_ARGUMENT', 'daemon.url and daemon.socket exclude each other');
  let url: URL;
  try {
    url = new URL(d.url);
  } catch {
    throw codedError('INVALID_ARGUMENT', `daemon.url ${JSON.stringify(d.url)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw codedError('INVALID_ARGUMENT', `daemon.url must be http: or https:, got ${url.protocol}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw codedError('INVALID_ARGUMENT', 'daemon.url takes no user, password, query or fragment (the token goes in daemon.token)');
  }
  return url;
}

/**
 * `daemon.maxFrameBytes`: the largest frame taken from the daemon at `url` (default
 * `DEFAULT_URL_MAX_FRAME`, 16 MiB), a whole number from 64 KiB to `MAX_REPLY`
 * (448 MiB); only with `url` (a socket's daemon is this user's own, checked, and may
 * send `MAX_REPLY`). `INVALID_ARGUMENT` otherwise.
 */
export function urlMaxFrame(d: DaemonOptions, url: URL | null): number {
  const given = d.maxFrameBytes;
  if (given === undefined || given === null) return DEFAULT_URL_MAX_FRAME;
  if (url === null) throw codedError('INVALID_ARGUMENT', 'daemon.maxFrameBytes applies to a daemon reached by daemon.url only');
  if (typeof given !== 'number' || !Number.isInteger(given) || given < MIN_FRAME || given > MAX_REPLY) {
    throw codedError('INVALID_ARGUMENT', `daemon.maxFrameBytes must be a whole number of bytes from ${MIN_FRAME} to ${MAX_REPLY}, got ${String(given)}`);
  }
  return given;
}
