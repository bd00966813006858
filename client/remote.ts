// `daemon.url`: a daemon's HTTP port (`native-shell-daemon --listen`, docs/remote.md)
// in place of the unix socket. Checked here, so a typo fails at the constructor.
import type { DaemonOptions } from 'native-shell-service';

import { codedError } from './errors.js';

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
