// The daemon client: `new ShellExecutionService({ daemon: ... })` (client/entry.ts).
// The same methods as the in-process service, over one connection to the per-user
// daemon; what is synchronous in process returns a promise of the same value here,
// because nothing may block the event loop on the daemon (docs/daemon.md).
//
// Calls made before the connection is up (or after it was lost) queue and go out in
// the order they were made, once `hello` and `open` have been answered: a `writeToPty`
// made after a `sendInput` reaches the job after it, as in process.

import { readFile } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath } from 'node:path';

import type {
  CommandCheck,
  CommandPolicy,
  ContainmentMode,
  DaemonInfo,
  DaemonOptions,
  DaemonShellExecutionService as DaemonServiceType,
  EndedJob,
  EndedJobsOptions,
  HistoryEntry,
  InteractionResult,
  KillOptions,
  KillResult,
  OutputChunk,
  OutputEvent,
  OutputOptions,
  PackedScreen,
  ProcessInfo,
  ReadOutputOptions,
  ResultOptions,
  RunOptions,
  RunResult,
  Screen,
  ScreenOptions,
  SendInputOptions,
  ServiceOptions,
  ShutdownOptions,
  StartedJob,
  WaitOptions,
} from 'native-shell-service';

import { envProblem } from './env.js';
import { codedError } from './errors.js';

import { daemonBinary, type Launched, launchDaemon } from './launch.js';
import { Link } from './link.js';
import { daemonUrl, urlMaxFrame } from './remote.js';
import { checkSocketDir, socketPath } from './place.js';

/** The wire protocol this client speaks (the daemon's `PROTOCOL`). */
export const PROTOCOL = 1;
/** How long a client tries to reach a daemon it started before `DAEMON_UNAVAILABLE`. */
const CONNECT_WITHIN_MS = 10_000;
/** A daemon started but not listening after this long is started again (it may have lost a race to an exiting one). */
const RELAUNCH_AFTER_MS = 1_000;

/** What the client needs from the package it belongs to. */
export interface ClientContext {
  packageRoot: string;
  /** This package's version: a daemon of another version is replaced or refused. */
  version: string;
  checkCommand(command: string, policy?: CommandPolicy | null): CommandCheck;
}

interface Opened {
  sessionId: string;
  outputDir: string;
  projectRoot: string;
  containment: ContainmentMode;
}

interface Hello {
  version: string;
  protocol: number;
  pid: number;
  jobs: number;
}

interface Queued {
  /** Empty: not a request, only waits for the connection (the getters). */
  method: string;
  params: Record<string, unknown>;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

type Listener = (event: OutputEvent) => void;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class DaemonShellExecutionService implements DaemonServiceType {
  private readonly socket: string;
  /** A daemon's HTTP port (`daemon.url`): reached over TCP, never started here. */
  private readonly url: URL | null;
  private readonly token: string | undefined;
  /** The largest frame taken from the daemon at `url` (`daemon.maxFrameBytes`). */
  private readonly maxFrame: number;
  private readonly idleExitMs: number | undefined;
  private readonly openParams: Record<string, unknown>;
  private live: Link | null = null;
  private connecting = false;
  private queue: Queued[] = [];
  private info: DaemonInfo | null = null;
  /** What `open` answered on the live connection. */
  private opened: Opened | null = null;
  private readonly listeners = new Map<number, Listener>();
  /** Output events of subscriptions whose `subscribe` reply has not come yet (the latest of each). */
  private readonly early = new Map<number, OutputEvent>();

  constructor(
    options: ServiceOptions & { daemon: true | DaemonOptions },
    private readonly context: ClientContext,
  ) {
    const { daemon, ...service } = options;
    const d: DaemonOptions = typeof daemon === 'object' && daemon !== null ? daemon : {};
    if (d.idleExitMs !== undefined && d.idleExitMs !== null && !(Number.isInteger(d.idleExitMs) && d.idleExitMs >= 0)) {
      throw codedError('INVALID_ARGUMENT', `daemon.idleExitMs must be a whole number of milliseconds, got ${String(d.idleExitMs)}`);
    }
    if (d.socket !== undefined && d.socket !== null && typeof d.socket !== 'string') {
      throw codedError('INVALID_ARGUMENT', `daemon.socket must be a string, got ${typeof d.socket}`);
    }
    if (d.token !== undefined && d.token !== null && typeof d.token !== 'string') {
      throw codedError('INVALID_ARGUMENT', `daemon.token must be a string, got ${typeof d.token}`);
    }
    const problem = envProblem(service.env);
    if (problem) throw codedError('INVALID_ARGUMENT', problem);
    this.url = daemonUrl(d);
    this.token = d.token ?? undefined;
    this.maxFrame = urlMaxFrame(d, this.url);
    this.socket = this.url ? this.url.origin : socketPath(d.socket ?? undefined);
    this.idleExitMs = d.idleExitMs ?? undefined;
    // The daemon's working directory and environment are not this process's: the
    // paths are made absolute here, and the jobs inherit this process's environment
    // (`inheritEnv`) in place of the daemon's, under the service's `env`, as in process.
    // A daemon reached by URL is another machine's (or container's): the paths are its
    // own (as given; no projectRoot: the daemon's), and this process's environment,
    // with whatever secrets it holds, is not sent there; its jobs get the daemon's.
    this.openParams = this.url
      ? { ...service }
      : {
          ...service,
          projectRoot: resolvePath(service.projectRoot ?? process.cwd()),
          ...(service.ioDir ? { ioDir: resolvePath(service.ioDir) } : {}),
          inheritEnv: inherited(),
        };
    // Connect now, in the background: `daemon` and the getters fill in; a failure
    // here is reported by the first call (which tries again).
    this.ensureConnecting();
  }

  /** `{ pid, socket, version }` of the daemon once connected; null before. */
  get daemon(): DaemonInfo | null {
    return this.info;
  }

  get outputDir(): Promise<string> {
    return this.whenOpened().then((o) => o.outputDir);
  }

  get projectRoot(): Promise<string> {
    return this.whenOpened().then((o) => o.projectRoot);
  }

  get containment(): Promise<ContainmentMode> {
    return this.whenOpened().then((o) => o.containment);
  }

  get sessionId(): Promise<string> {
    return this.whenOpened().then((o) => o.sessionId);
  }

  run(command: string, options?: RunOptions | null): Promise<RunResult> {
    return this.checked(options) ?? (this.call('run', { command, options: options ?? null }) as Promise<RunResult>);
  }

  start(command: string, options?: RunOptions | null): Promise<StartedJob> {
    return this.checked(options) ?? (this.call('start', { command, options: options ?? null }) as Promise<StartedJob>);
  }

  /** A run's `env` that JSON would not carry faithfully: refused here, as in process. */
  private checked(options: RunOptions | null | undefined): Promise<never> | null {
    const problem = envProblem(options?.env);
    return problem ? Promise.reject(codedError('INVALID_ARGUMENT', problem)) : null;
  }

  sendInput(handle: number, input: string, options?: SendInputOptions | null): Promise<InteractionResult> {
    return this.call('sendInput', { handle, input, options: options ?? null }) as Promise<InteractionResult>;
  }

  waitFor(handle: number, options?: WaitOptions | null): Promise<InteractionResult> {
    return this.call('waitFor', { handle, options: options ?? null }) as Promise<InteractionResult>;
  }

  async writeToPty(handle: number, data: string | Buffer): Promise<void> {
    const params = typeof data === 'string' ? { handle, data } : Buffer.isBuffer(data) ? { handle, base64: data.toString('base64') } : { handle, data };
    await this.call('writeToPty', params);
  }

  getResult(handle: number, options?: ResultOptions | null): Promise<RunResult> {
    return this.call('getResult', { handle, options: options ?? null }) as Promise<RunResult>;
  }

  isPtyActive(handle: number): Promise<boolean> {
    return this.call('isPtyActive', { handle }) as Promise<boolean>;
  }

  getActiveProcesses(): Promise<ProcessInfo[]> {
    return this.call('getActiveProcesses', {}) as Promise<ProcessInfo[]>;
  }

  getProcessOutput(handle: number, options?: OutputOptions | null): Promise<string> {
    return this.call('getProcessOutput', { handle, options: options ?? null }) as Promise<string>;
  }

  /**
   * Subscribes to the job's output events; settles with the function that stops them
   * (rejects `PROCESS_NOT_FOUND` as the in-process call throws it). While subscribed,
   * the connection keeps Node alive, like the in-process subscription.
   */
  async onOutput(handle: number, listener: Listener): Promise<() => void> {
    if (typeof listener !== 'function') throw codedError('INVALID_ARGUMENT', 'onOutput needs a listener function');
    const { sub } = (await this.call('subscribe', { handle })) as { sub: number };
    const link = this.live;
    this.listeners.set(sub, listener);
    this.updateRef();
    const early = this.early.get(sub);
    this.early.delete(sub);
    if (early) this.deliver(sub, early);
    return () => {
      if (!this.listeners.delete(sub)) return;
      this.updateRef();
      // Only the connection that made it knows the subscription.
      if (link && link === this.live && !link.closed) link.request('unsubscribe', { sub }).catch(() => {});
    };
  }

  readOutput(handle: number, options?: ReadOutputOptions | null): Promise<OutputChunk> {
    return this.call('readOutput', { handle, options: options ?? null }) as Promise<OutputChunk>;
  }

  getScreen(handle: number, options?: ScreenOptions | null): Promise<Screen> {
    return this.call('getScreen', { handle, options: options ?? null }) as Promise<Screen>;
  }

  async getScreenPacked(handle: number, options?: ScreenOptions | null): Promise<PackedScreen> {
    return packed(await this.call('getScreenPacked', { handle, options: options ?? null }));
  }

  async readScreenPacked(handle: number, options?: ScreenOptions | null): Promise<PackedScreen> {
    return packed(await this.call('readScreenPacked', { handle, options: options ?? null }));
  }

  async resizePty(handle: number, cols: number, rows: number): Promise<void> {
    await this.call('resizePty', { handle, cols, rows });
  }

  kill(handle: number, options?: KillOptions | null): Promise<KillResult> {
    return this.call('kill', { handle, options: options ?? null }) as Promise<KillResult>;
  }

  async removeProcess(handle: number): Promise<void> {
    await this.call('removeProcess', { handle });
  }

  getExecutionHistory(limit?: number | null): Promise<HistoryEntry[]> {
    return this.call('getExecutionHistory', limit === undefined || limit === null ? {} : { limit }) as Promise<HistoryEntry[]>;
  }

  clearExecutionHistory(): Promise<number> {
    return this.call('clearExecutionHistory', {}) as Promise<number>;
  }

  getEndedJobs(options?: EndedJobsOptions | null): Promise<EndedJob[]> {
    return this.call('getEndedJobs', { ...(options?.handle !== undefined ? { handle: options.handle } : {}), ...(options?.limit !== undefined ? { limit: options.limit } : {}) }) as Promise<EndedJob[]>;
  }

  /** `checkCommand` needs no daemon: the policy is checked here, as in process. */
  checkCommand(command: string, policy?: CommandPolicy | null): CommandCheck {
    return this.context.checkCommand(command, policy);
  }

  /**
   * Closes this client. Its jobs run on in the daemon (but those started with
   * `keep: false`); `{ killJobs: true }` ends the jobs this client started first.
   * A later call connects again.
   */
  async shutdown(options?: ShutdownOptions | null): Promise<void> {
    // A connection being made is let finish (or fail) first; none made: nothing to end.
    if (this.connecting) await this.whenOpened().catch(() => undefined);
    const current = this.live;
    if (!current || current.closed) return;
    if (options?.killJobs === true) await this.call('shutdown', { killJobs: true });
    current.close();
    await current.whenClosed;
  }

  // ---------------------------------------------------------------------------------

  /** The service as opened on the live connection; connects first if needed (and rejects as a call would). */
  private whenOpened(): Promise<Opened> {
    const live = this.live;
    if (live && !live.closed && this.opened) return Promise.resolve(this.opened);
    return new Promise((resolve, reject) => {
      this.queue.push({ method: '', params: {}, resolve: resolve as (v: unknown) => void, reject });
      this.ensureConnecting();
    });
  }

  private call(method: string, params: Record<string, unknown>): Promise<unknown> {
    const live = this.live;
    if (live && !live.closed && this.queue.length === 0) return live.request(method, params);
    return new Promise((resolve, reject) => {
      this.queue.push({ method, params, resolve, reject });
      this.ensureConnecting();
    });
  }

  /**
   * The live connection keeps Node alive while it has listeners; while a call waits,
   * the link keeps it alive itself (as a pending in-process promise does).
   */
  private updateRef(): void {
    const live = this.live;
    if (live && !live.closed) live.setRef(this.listeners.size > 0);
  }

  private ensureConnecting(): void {
    if (this.connecting) return;
    this.connecting = true;
    this.establish().then(
      (link) => {
        this.connecting = false;
        const queued = this.queue;
        this.queue = [];
        for (const q of queued) {
          if (q.method === '') q.resolve(this.opened);
          else link.request(q.method, q.params).then(q.resolve, q.reject);
        }
        this.updateRef();
      },
      (e: Error) => {
        this.connecting = false;
        const queued = this.queue;
        this.queue = [];
        for (const q of queued) q.reject(e);
      },
    );
  }

  private async establish(): Promise<Link> {
    if (this.url) return this.establishRemote(this.url);
    if (process.platform === 'win32') {
      throw codedError('DAEMON_UNAVAILABLE', 'the daemon runs on Linux and macOS only for now (docs/daemon.md)');
    }
    await checkSocketDir(this.socket);
    let replaced = false;
    let restarted = false;
    let restartNote = '';
    let lostAtHello = 0;
    for (;;) {
      const link = await this.dial();
      let hello: Hello;
      try {
        hello = (await link.request('hello', { version: this.context.version, protocol: PROTOCOL, pid: process.pid })) as Hello;
      } catch (e) {
        // Connected just as the daemon left (its idle exit): a new one is started.
        if ((e as { code?: string }).code === 'DAEMON_LOST' && lostAtHello++ < 3) continue;
        throw e;
      }
      if (hello.version !== this.context.version || hello.protocol !== PROTOCOL) {
        if (hello.jobs > 0 && !replaced && !restarted) {
          // A daemon with jobs is asked to restart in place into the binary on its
          // disk, which keeps its jobs (docs/daemon.md, "Restarting without ending
          // jobs"); then this client meets it again. A daemon that cannot (an older
          // one, a hand-over that does not carry its jobs) refuses and is left as is.
          const refusal = await link.request('restartDaemon', {}).then(
            () => null,
            (e: Error) => e,
          );
          if (refusal === null) {
            link.setRef(true); // held until the old image has gone
            await link.whenClosed;
            restarted = true;
            // Met again below: a daemon still of another version restarted into a binary
            // at its path that is not this client's (another install of the package).
            restartNote = ' It restarted in place, its jobs kept, but the binary at its path is still that version.';
            continue;
          }
          restartNote = ` It could not restart in place: ${refusal.message}`;
        }
        if (hello.jobs > 0 || replaced) {
          link.close();
          throw codedError(
            'DAEMON_VERSION',
            `the daemon at ${this.socket} (pid ${hello.pid}) is version ${hello.version} (protocol ${hello.protocol}); this client is ${this.context.version} (protocol ${PROTOCOL}). ` +
              `It holds ${hello.jobs} job(s): finish or kill them with a client of version ${hello.version}, or stop it, which kills them (npx native-shell-service daemon --stop --socket ${this.socket}, or kill ${hello.pid}); the next call then starts a daemon of this version.${restartNote}`,
            { daemonVersion: hello.version, daemonPid: hello.pid, jobs: hello.jobs },
          );
        }
        // An idle daemon of another version: asked to exit, and one of ours started.
        await link.request('exitDaemon', {}).catch(() => {});
        link.setRef(true); // held until the daemon is gone
        await link.whenClosed;
        replaced = true;
        continue;
      }
      return this.openOn(link, hello);
    }
  }

  /** `open` on a connection that said `hello`; it becomes the live one. */
  private async openOn(link: Link, hello: Hello): Promise<Link> {
    let opened: Opened;
    try {
      opened = (await link.request('open', this.openParams)) as Opened;
    } catch (e) {
      link.close();
      throw e;
    }
    this.info = { pid: hello.pid, socket: this.socket, version: hello.version };
    this.live = link;
    this.opened = opened;
    return link;
  }

  /**
   * A daemon's HTTP port: one attempt (it is not ours to start), then `hello`. Only the
   * protocol must match: a remote daemon of another version is not ours to replace.
   */
  private async establishRemote(url: URL): Promise<Link> {
    let link: Link;
    try {
      link = await Link.openUrl(
        url,
        this.token,
        {
          output: (sub, data) => this.event(link, sub, data as OutputEvent),
          closed: (why) => this.lost(link, why),
        },
        this.maxFrame,
      );
    } catch (e) {
      if ((e as { code?: string }).code?.startsWith('DAEMON_')) throw e;
      throw codedError('DAEMON_UNAVAILABLE', `cannot connect to the daemon at ${url.origin}: ${(e as Error).message}`);
    }
    const hello = (await link.request('hello', { version: this.context.version, protocol: PROTOCOL, pid: process.pid })) as Hello;
    if (hello.protocol !== PROTOCOL) {
      link.close();
      throw codedError(
        'DAEMON_VERSION',
        `the daemon at ${url.origin} (pid ${hello.pid}) speaks protocol ${hello.protocol} (version ${hello.version}); this client speaks ${PROTOCOL} (version ${this.context.version})`,
        { daemonVersion: hello.version, daemonPid: hello.pid, jobs: hello.jobs },
      );
    }
    return this.openOn(link, hello);
  }

  /** Connects, starting a daemon when none listens; `DAEMON_UNAVAILABLE` after 10 s. */
  private async dial(): Promise<Link> {
    const deadline = Date.now() + CONNECT_WITHIN_MS;
    let launchedAt = 0;
    let launched: Launched | null = null;
    let delay = 10;
    for (;;) {
      let link: Link;
      try {
        link = await Link.open(this.socket, {
          output: (sub, data) => this.event(link, sub, data as OutputEvent),
          closed: (why) => this.lost(link, why),
        });
        return link;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ECONNREFUSED') {
          if ((e as { code?: string }).code?.startsWith('DAEMON_')) throw e;
          throw codedError('DAEMON_UNAVAILABLE', `cannot connect to the daemon at ${this.socket}: ${(e as Error).message}`);
        }
      }
      if (Date.now() > deadline) {
        throw codedError(
          'DAEMON_UNAVAILABLE',
          `no daemon answered at ${this.socket} within ${CONNECT_WITHIN_MS / 1000} s (its log: daemon.log beside the socket)`,
        );
      }
      // The daemon started here could not serve (not a lost race: that exits 0).
      const code = launched?.exitCode() ?? null;
      if (code !== null && code !== 0) {
        const log = join(dirname(this.socket), 'daemon.log');
        const tail = await readFile(log, 'utf8').then((t) => t.trim().split('\n').slice(-3).join(' | '), () => '');
        throw codedError('DAEMON_UNAVAILABLE', `the daemon exited with status ${code} without serving ${this.socket}${tail ? `: ${tail}` : ''} (${log})`);
      }
      if (launchedAt === 0 || Date.now() - launchedAt > RELAUNCH_AFTER_MS) {
        launched = await launchDaemon(daemonBinary(this.context.packageRoot), this.socket, this.idleExitMs);
        launchedAt = Date.now();
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 200);
    }
  }

  private event(link: Link, sub: number, event: OutputEvent): void {
    if (link !== this.live) return;
    if (!this.listeners.has(sub)) {
      this.early.set(sub, event);
      return;
    }
    this.deliver(sub, event);
  }

  private deliver(sub: number, event: OutputEvent): void {
    const listener = this.listeners.get(sub);
    if (!listener) return;
    if (event.exited) {
      this.listeners.delete(sub);
      this.updateRef();
    }
    try {
      listener(event);
    } catch (e) {
      process.emitWarning(`an onOutput listener threw: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  /** The connection ended: its subscriptions are gone; the next call connects again. */
  private lost(link: Link, _why: string): void {
    if (link !== this.live) return;
    this.live = null;
    this.info = null;
    this.listeners.clear();
    this.early.clear();
    this.opened = null;
  }
}

/** This process's environment as strings (what a job inherits in process). */
function inherited(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v;
  return env;
}

/** A packed screen from the wire (plain arrays) with the typed arrays of the in-process one. */
function packed(value: unknown): PackedScreen {
  const v = value as Record<string, unknown>;
  const u32 = (k: string) => Uint32Array.from((v[k] as number[] | undefined) ?? []);
  return {
    ...(v as unknown as PackedScreen),
    lineRuns: u32('lineRuns'),
    runLengths: u32('runLengths'),
    runFlags: u32('runFlags'),
    runFg: u32('runFg'),
    runBg: u32('runBg'),
  };
}
