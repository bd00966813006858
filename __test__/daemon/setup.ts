// Shared set-up of the daemon suites: the package entry (service.js, which gives daemon
// clients), the daemon's binary, a socket of each test's own (a temp directory) and the
// end of every daemon a test started: no daemon and no job outlives the suite.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type * as Entry from '../../service.js';
import { Link } from '../../client/link';
import { alive } from '../helpers';

const require = createRequire(import.meta.url);
export const ROOT = resolve(__dirname, '..', '..');
/** The package entry, as `require('native-shell-service')` gives it. */
export const entry: typeof Entry = require(join(ROOT, 'service.js'));
export const { ShellExecutionService } = entry;

/**
 * The daemon's binary: NATIVE_SHELL_DAEMON_BIN, else the one `npm run build` puts at the
 * package root, else cargo's. Set in the environment, so the clients of this process and
 * of the child scripts find it.
 */
export function daemonBinary(): string {
  const candidates = [
    process.env.NATIVE_SHELL_DAEMON_BIN ?? '',
    join(ROOT, 'native-shell-daemon'),
    join(ROOT, 'target', 'release', 'native-shell-daemon'),
    join(ROOT, 'target', 'debug', 'native-shell-daemon'),
  ].filter((c) => c && existsSync(c));
  if (candidates.length === 0) throw new Error('no native-shell-daemon binary: run `npm run build` (or cargo build --bin native-shell-daemon)');
  process.env.NATIVE_SHELL_DAEMON_BIN = candidates[0]!;
  return candidates[0]!;
}

export interface Place {
  /** A temp directory for the test: the socket's (mode 0700), the project, the ioDir. */
  base: string;
  socket: string;
  project: string;
  ioDir: string;
  /** The `daemon` option for a service of this test (a short idle exit). */
  daemon: { socket: string; idleExitMs: number };
}

const places: Place[] = [];
const daemonPids = new Set<number>();

export function place(idleExitMs = 3_000): Place {
  daemonBinary();
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-daemon-')));
  chmodSync(base, 0o755);
  const run = join(base, 'run');
  mkdirSync(run, { mode: 0o700 });
  const project = join(base, 'project');
  mkdirSync(project);
  const p = { base, socket: join(run, 'daemon.sock'), project, ioDir: join(base, 'io'), daemon: { socket: join(run, 'daemon.sock'), idleExitMs } };
  places.push(p);
  return p;
}

/** Remembers a daemon's pid, so `stopDaemons` can check it is gone (and SIGKILL it if not). */
export function seen(pid: number | undefined | null): void {
  if (pid) daemonPids.add(pid);
}

/** A service on a daemon of its own (a fresh place), given to `body` with the daemon's
 *  pid; shut down, its jobs killed, however `body` ends. */
export async function withDaemonService(
  body: (svc: InstanceType<typeof ShellExecutionService>, pid: number) => Promise<void>,
): Promise<void> {
  const p = place();
  const svc = new ShellExecutionService({ projectRoot: p.project, ioDir: p.ioDir, daemon: p.daemon });
  try {
    await svc.sessionId;
    const pid = svc.daemon!.pid;
    seen(pid);
    await body(svc, pid);
  } finally {
    await svc.shutdown({ killJobs: true });
  }
}

/** The threads of process `pid` named `name` (their `comm`). */
export function threadsNamed(pid: number, name: string): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .filter((tid) => {
      try {
        return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === name;
      } catch {
        return false; // Ended meanwhile.
      }
    });
}

/** Asks the daemon at `socket` (if one listens) to exit: it kills its jobs and removes its socket. */
export async function stopDaemon(socket: string): Promise<void> {
  let link: Link;
  try {
    link = await Link.open(socket, { output: () => {}, closed: () => {} });
  } catch {
    return; // none listens
  }
  try {
    const hello = (await link.request('hello', { version: 'test', protocol: 1, pid: process.pid })) as { pid: number };
    seen(hello.pid);
    await link.request('exitDaemon', {});
  } catch {
    // it went away already
  }
  await eventuallyAsync(async () => link.closed);
}

/** Ends every daemon the tests of this file started (then checks that they are gone) and removes their directories. */
export async function stopDaemons(): Promise<void> {
  for (const p of places.splice(0)) {
    await stopDaemon(p.socket);
    rmSync(p.base, { recursive: true, force: true });
  }
  for (const pid of daemonPids) {
    if (!(await eventuallyAsync(async () => !alive(pid)))) {
      process.kill(pid, 'SIGKILL');
      throw new Error(`the daemon ${pid} was still running after its tests`);
    }
  }
  daemonPids.clear();
}

/**
 * Resolves true when `predicate` holds, checking every 25 ms; the bound (never under
 * 30 s) only ends a wait for what never happens (as helpers.ts `eventually`).
 */
export async function eventuallyAsync(predicate: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + Math.max(timeoutMs, 30_000);
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return predicate();
}

/** Runs `node script args...` as another user (setpriv), returning its output. */
export function runAs(uid: number, script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, script, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
