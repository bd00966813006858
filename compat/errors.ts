// What the drop-in does with what a call throws: made an Error, or let go when the job
// it was about is gone.

/** Runs `call`, ignoring what it throws or rejects with (a job that is gone). */
export function quietly(call: () => unknown): void {
  try {
    const done = call();
    if (done instanceof Promise) done.catch(() => undefined);
  } catch {
    // the job is gone
  }
}

export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
