// The daemon client's errors: `Error`s with a stable `code`, as the in-process service
// throws them (docs/daemon.md, "Errors").

export type DaemonErrorCode = 'DAEMON_LOST' | 'DAEMON_UNAVAILABLE' | 'DAEMON_VERSION' | 'DAEMON_UNAUTHORIZED' | 'DAEMON_FRAME_TOO_LARGE';

/** An Error with `code` and any extra fields the daemon's reply carried (`result`, ...). */
export function codedError(code: string, message: string, extra: Record<string, unknown> = {}): Error & { code: string } {
  const e = new Error(message) as Error & { code: string } & Record<string, unknown>;
  for (const [k, v] of Object.entries(extra)) if (k !== 'message' && k !== 'stack') e[k] = v;
  e.code = code;
  return e;
}

/** The error a daemon's `{ code, message, ...extra }` reply stands for. */
export function replyError(error: unknown): Error & { code: string } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const code = typeof e.code === 'string' ? e.code : 'EXECUTION_FAILED';
  const message = typeof e.message === 'string' ? e.message : `the daemon answered with an error: ${JSON.stringify(error)}`;
  const extra = { ...e };
  delete extra.code;
  delete extra.message;
  return codedError(code, message, extra);
}
