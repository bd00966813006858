// A daemon with its HTTP port, started as users start it: `native-shell-service daemon
// --listen 127.0.0.1:0 ...` (bin/native-shell-service.js), which runs the MCP server
// beside the daemon (tools/daemon-front.ts). Each test gets its own socket, runtime
// directory, token and port (0: the kernel picks a free one; the daemon prints it).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { BIN, ensureBuilt } from '../mcp/setup';
import { alive } from '../helpers';
import { eventuallyAsync, place, type Place, seen } from '../daemon/setup';

export interface Listening {
  place: Place;
  url: string;
  token: string | null;
  /** The wrapper (Node) process. */
  wrapper: ChildProcess;
  stderr(): string;
  /** SIGTERM to the wrapper, which passes it on: the daemon ends its jobs and exits, then the wrapper. */
  stop(): Promise<void>;
}

const running: Listening[] = [];

export async function listen(options: { token?: boolean; args?: string[] } = {}): Promise<Listening> {
  ensureBuilt();
  const p = place();
  const run = dirname(p.socket);
  const token = options.token === false ? null : randomBytes(16).toString('hex');
  const args = ['daemon', '--listen', '127.0.0.1:0', '--socket', p.socket, '--project-root', p.project];
  if (token) {
    const file = join(run, 'token');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    args.push('--access-token-file', file);
  }
  // NSS_E2E_SERVER_BIN: another build's command (__test__/e2e/model-clients.ts says why).
  const wrapper = spawn(process.execPath, [process.env.NSS_E2E_SERVER_BIN ?? BIN, ...args, ...(options.args ?? [])], {
    cwd: p.project,
    // The wrapper's private directory is made under XDG_RUNTIME_DIR: this test's.
    env: { ...process.env, XDG_RUNTIME_DIR: run },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  wrapper.stderr?.on('data', (d) => (stderr += d));
  const listening = await eventuallyAsync(() => /listening on http:\/\/([\d.]+:\d+)/.test(stderr) || wrapper.exitCode !== null, 60_000);
  const addr = /listening on http:\/\/([\d.]+:\d+)/.exec(stderr)?.[1];
  if (!listening || !addr) {
    wrapper.kill('SIGKILL');
    throw new Error(`the daemon did not listen: ${stderr}`);
  }
  const l: Listening = {
    place: p,
    url: `http://${addr}`,
    token,
    wrapper,
    stderr: () => stderr,
    stop: async () => {
      if (wrapper.exitCode === null && wrapper.signalCode === null) wrapper.kill('SIGTERM');
      if (!(await eventuallyAsync(() => wrapper.exitCode !== null || wrapper.signalCode !== null))) {
        wrapper.kill('SIGKILL');
        throw new Error('the wrapper outlived its daemon');
      }
    },
  };
  running.push(l);
  return l;
}

/** Stops every daemon this file started (afterAll). */
export async function stopAll(): Promise<void> {
  const problems: string[] = [];
  for (const l of running.splice(0)) {
    await l.stop().catch((e: Error) => problems.push(e.message));
    if (l.wrapper.pid && alive(l.wrapper.pid)) problems.push(`wrapper ${l.wrapper.pid} still runs`);
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
}

export { seen };
