// A daemon with its network face for the e2b SDK suites: its own socket (and
// XDG_RUNTIME_DIR), its own project directory, its own port. The SDKs' debug mode
// aims at localhost:49983, but both take the whole base URL from `sandboxUrl`
// (E2B_SANDBOX_URL), so every run picks a free port and runs beside any other.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { daemonBinary, eventuallyAsync, place, seen, type Place } from '../daemon/setup';

export interface Face extends Place {
  /** The envd base URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** What the daemon printed on stderr (for failures). */
  log: () => string;
}

/** A port the kernel just gave and took back: free unless someone races for it (retried). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/health`);
    return r.status === 204 || r.ok;
  } catch {
    return false;
  }
}

/**
 * Starts the daemon with `--listen 127.0.0.1:<free port>` (or `port`) and waits for
 * /health (open to all). `token`: every other request must carry it
 * (`--access-token-file`).
 */
export async function startFace(options: { token?: string; port?: number } = {}): Promise<Face> {
  const bin = daemonBinary();
  const p = place(600_000);
  const extra: string[] = [];
  if (options.token) {
    const file = join(p.base, 'token');
    writeFileSync(file, options.token, { mode: 0o600 });
    extra.push('--access-token-file', file);
  }
  const runtime = join(p.base, 'xdg');
  mkdirSync(runtime, { mode: 0o700 });
  const home = join(p.base, 'home');
  mkdirSync(home);
  let lastLog = '';
  for (let attempt = 0; attempt < (options.port ? 1 : 3); attempt++) {
    const port = options.port ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;
    let log = '';
    const child = spawn(bin, ['--socket', p.socket, '--listen', `127.0.0.1:${port}`, '--project-root', p.project, ...extra], {
      // HOME of its own: the SDKs run every command in a login shell (`bash -l`), which
      // would otherwise source this machine's profile (slow, and not the point here).
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, HOME: home },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    seen(child.pid);
    child.stderr.on('data', (d) => (log += d));
    let exited = false;
    child.on('exit', () => (exited = true));
    child.unref();
    if (await eventuallyAsync(async () => exited || (await healthy(url)))) {
      if (!exited) return { ...p, url, log: () => log };
    }
    lastLog = log;
  }
  throw new Error(`the daemon did not serve /health on any of 3 ports:\n${lastLog}`);
}

/** Whether nothing listens on 127.0.0.1:`port` now (a bind succeeds). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
