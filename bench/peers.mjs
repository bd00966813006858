// The peers the benchmark compares, behind one small interface:
//   exec(cmd)      run `bash -c cmd` to the end: { exitMs, readableMs, bytes, text }
//                  (exitMs: the caller learns of the exit; readableMs: the text view is
//                  in hand; bytes: what the caller received, in the peer's own unit;
//                  text: the end of what a reader would see, for verification)
//   repl()         a Python REPL: { ready, roundTrip(k) -> ms, close() }
//   idle(cmd)      start a job that stays quiet: { stop() }
//   close()
// Each peer is constructed inside its own child process (see worker.mjs).
import { spawn as spawnChild } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const now = () => performance.now();
const COLS = 80;
const ROWS = 24;
const PROMPT = '>>> ';

// `npm run bench` gives every worker a place under its own temporary directory and
// removes it all once at the end: deleting one run's files between runs would tax the
// next run's file creations (journal-less ext4 skips every inode freed in the last
// minutes, one by one, on each allocation; see BENCHMARKS.md), and only this addon
// creates files, so it alone would pay for its peers' order.
const SHARED_SCRATCH = process.env.NSS_BENCH_SCRATCH;

function scratchDir() {
  const base = realpathSync(mkdtempSync(join(SHARED_SCRATCH ?? tmpdir(), 'nss-bench-')));
  mkdirSync(join(base, 'project'));
  return base;
}

/** Removes a peer's scratch directory, unless the whole run's is removed at its end. */
function removeScratch(base) {
  if (!SHARED_SCRATCH) rmSync(base, { recursive: true, force: true });
}

/** The last `n` characters of a growing string, cheaply. */
function keepTail(tail, chunk, n = 512) {
  const joined = tail + chunk;
  return joined.length > n ? joined.slice(joined.length - n) : joined;
}

/** The Gemini CLI's bwrap line, less its binds of the project (a read-only root). */
export const BWRAP = 'bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net --die-with-parent';

// ---------------------------------------------------------------- this addon
class Addon {
  /**
   * view: 'text' | 'screen'; mode: 'pty' | 'pipes'; sandbox: every job confined
   * (docs/sandbox.md); wrap: the command line each command is run inside (bwrap).
   */
  constructor({ view = 'text', mode = 'pty', sandbox = false, wrap = null } = {}) {
    const { ShellExecutionService } = require('../index.js');
    this.base = scratchDir();
    this.view = view;
    this.mode = mode;
    this.wrap = wrap;
    this.svc = new ShellExecutionService({
      projectRoot: join(this.base, 'project'),
      ioDir: join(this.base, 'io'),
      sessionId: 'bench',
      maxJobs: 4096,
      ...(sandbox ? { sandbox: true } : {}),
    });
  }

  /** `remove`: drop the finished job from the service (its memory) afterwards. */
  async exec(cmd, { remove = false } = {}) {
    const t0 = now();
    const line = this.wrap ? `${this.wrap} bash -c '${cmd.replace(/'/g, `'\\''`)}'` : cmd;
    const r = await this.svc.run(line, { mode: this.mode, cols: COLS, rows: ROWS });
    const exitMs = now() - t0;
    const text = this.svc.getProcessOutput(r.handle, { view: this.view });
    const readableMs = now() - t0;
    if (remove) this.svc.removeProcess(r.handle);
    return { exitMs, readableMs, bytes: r.totalBytes, text: text.slice(-512), outputDir: r.outputDir };
  }

  async repl() {
    const r = await this.svc.run('python3 -q -i', { cols: COLS, rows: ROWS, callbackPattern: '>>> $' });
    if (r.status !== 'running') throw new Error(`the REPL did not start: ${r.status} ${r.output}`);
    const handle = r.handle;
    return {
      roundTrip: async (k) => {
        const t0 = now();
        const out = await this.svc.sendInput(handle, `print(${k})`, { pattern: '>>> $', timeoutMs: 10_000 });
        const ms = now() - t0;
        if (out.status !== 'matched' || !out.output.includes(`\n${k}\n`)) {
          throw new Error(`round trip ${k}: ${out.status} ${JSON.stringify(out.output)}`);
        }
        return ms;
      },
      close: () => this.svc.kill(handle, { graceMs: 100 }),
    };
  }

  /** The seed design's loop: write, then look at the output every 100 ms. */
  async pollingRepl() {
    const r = await this.svc.run('python3 -q -i', { cols: COLS, rows: ROWS, callbackPattern: '>>> $' });
    const handle = r.handle;
    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
    return {
      roundTrip: async (k) => {
        const t0 = now();
        this.svc.writeToPty(handle, `print(${k})\n`);
        for (;;) {
          await sleep(100);
          const out = this.svc.getProcessOutput(handle, { view: 'text', tailBytes: 256 });
          if (out.endsWith(`\n${k}\n${PROMPT}`)) return now() - t0;
        }
      },
      close: () => this.svc.kill(handle, { graceMs: 100 }),
    };
  }

  async idle(cmd) {
    const r = await this.svc.run(cmd, { mode: this.mode, cols: COLS, rows: ROWS, callbackDelayMs: 1 });
    if (r.status !== 'running') throw new Error(`idle job ended: ${r.status}`);
    return { stop: () => this.svc.kill(r.handle, { graceMs: 100 }) };
  }

  /** Another service in this process (what a second in-process client is). */
  async sibling() {
    return new Addon({ view: this.view, mode: this.mode });
  }

  async close() {
    await this.svc.shutdown();
    removeScratch(this.base);
  }
}

// ---------------------------------------------------------------- this addon through its daemon
/**
 * The same calls as `Addon`, through the per-user daemon (docs/daemon.md): a daemon of
 * this peer's own (its socket in the scratch directory), connected before anything is
 * timed; every call a request over the socket. `daemonRssKiB`: the daemon's resident
 * memory (the idle scenario's jobs live there, not in Node).
 */
class AddonDaemon {
  /** `socket`: another client of that daemon (`sibling`), which leaves it running at `close`. */
  constructor(socket = null) {
    const { ShellExecutionService } = require('../service.js');
    if (!process.env.NATIVE_SHELL_DAEMON_BIN) {
      for (const c of ['../native-shell-daemon', '../target/release/native-shell-daemon']) {
        const path = join(fileURLToPath(new URL('.', import.meta.url)), c);
        if (existsSync(path)) {
          process.env.NATIVE_SHELL_DAEMON_BIN = path;
          break;
        }
      }
    }
    this.base = scratchDir();
    this.mode = 'pty';
    this.sharing = socket !== null;
    const run = join(this.base, 'run');
    mkdirSync(run, { mode: 0o700 });
    this.socket = socket ?? join(run, 'daemon.sock');
    this.svc = new ShellExecutionService({
      projectRoot: join(this.base, 'project'),
      ioDir: join(this.base, 'io'),
      sessionId: 'bench',
      maxJobs: 4096,
      daemon: { socket: this.socket, idleExitMs: 1000 },
    });
    // Every job of a run dies with its worker's connection, whatever ends the worker.
    for (const method of ['run', 'start']) {
      const call = this.svc[method].bind(this.svc);
      this.svc[method] = (command, options) => call(command, { ...options, keep: false });
    }
    this.closed = false;
  }

  async init() {
    await this.svc.sessionId; // connected (the daemon started) and opened
    return this;
  }

  async exec(cmd, { remove = false } = {}) {
    const t0 = now();
    const r = await this.svc.run(cmd, { cols: COLS, rows: ROWS });
    const exitMs = now() - t0;
    // A run ended by `close` (the flood beside the round trips): nothing more to ask.
    if (this.closed) return { exitMs, readableMs: exitMs, bytes: r.totalBytes, text: '', outputDir: null };
    const text = await this.svc.getProcessOutput(r.handle, { view: 'text' });
    const readableMs = now() - t0;
    if (remove) await this.svc.removeProcess(r.handle);
    return { exitMs, readableMs, bytes: r.totalBytes, text: text.slice(-512), outputDir: r.outputDir };
  }

  repl() {
    return Addon.prototype.repl.call(this);
  }

  idle(cmd) {
    return Addon.prototype.idle.call(this, cmd);
  }

  daemonRssKiB() {
    const pid = this.svc.daemon?.pid;
    const m = pid ? /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8')) : null;
    return m ? Number(m[1]) : null;
  }

  /** The daemon's open descriptors (the idle scenario's jobs hold theirs there). */
  daemonFds() {
    const pid = this.svc.daemon?.pid;
    return pid ? readdirSync(`/proc/${pid}/fd`).length : null;
  }

  /** Another client of the same daemon. */
  sibling() {
    return new AddonDaemon(this.socket).init();
  }

  async close() {
    this.closed = true;
    const pid = this.sharing ? null : this.svc.daemon?.pid;
    await this.svc.shutdown({ killJobs: true });
    // This peer's daemon ends with it (it would within a second anyway: idleExitMs).
    if (pid) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    removeScratch(this.base);
  }
}

// ---------------------------------------------------------------- this addon, driven by events
/** The addon as an event consumer drives it: `start`, then `onOutput` + `readOutput`. */
class AddonEvents extends Addon {
  /** Resolves once the exit event is handled and every byte of committed text is read. */
  exec(cmd, { remove = false } = {}) {
    return new Promise((resolve, reject) => {
      const t0 = now();
      const { handle } = this.svc.start(cmd, { mode: this.mode, cols: COLS, rows: ROWS });
      let next = 0;
      let bytes = 0;
      let tail = '';
      const readUpTo = (textLength) => {
        while (next < textLength) {
          const chunk = this.svc.readOutput(handle, { since: next });
          if (chunk.next === next) break;
          next = chunk.next;
          bytes += Buffer.byteLength(chunk.text);
          tail = keepTail(tail, chunk.text);
        }
      };
      let exitMs = null;
      const stop = this.svc.onOutput(handle, (event) => {
        try {
          if (event.exited) exitMs = now() - t0;
          readUpTo(event.textLength);
          if (!event.exited) return;
          const readableMs = now() - t0;
          stop();
          // Only the completeness runs look at the output file; finding it is not timed.
          const { outputDir } = this.svc.getResult(handle, { maxOutputSize: 1 });
          if (remove) this.svc.removeProcess(handle);
          resolve({ exitMs, readableMs, bytes, text: tail, outputDir });
        } catch (e) {
          stop();
          reject(e);
        }
      });
    });
  }

  /** Write, then resolve from the `onOutput` call after which the text view shows the answer. */
  async repl() {
    const { handle } = this.svc.start('python3 -q -i', { cols: COLS, rows: ROWS });
    let check = null;
    let fail = null; // the waiting promise's reject: an ended REPL answers nothing more
    const stop = this.svc.onOutput(handle, (event) => {
      if (event.exited) fail?.(new Error(`the REPL ended: ${event.status}`));
      else check?.(this.svc.getProcessOutput(handle, { view: 'text', tailBytes: 256 }));
    });
    await new Promise((res, rej) => {
      fail = rej;
      check = (text) => text.endsWith(PROMPT) && res();
      // The prompt may have come before the listener: look once now.
      check(this.svc.getProcessOutput(handle, { view: 'text', tailBytes: 256 }));
    });
    return {
      roundTrip: (k) =>
        new Promise((res, rej) => {
          const t0 = now();
          fail = rej;
          check = (text) => {
            if (text.endsWith(`\n${k}\n${PROMPT}`)) {
              check = null;
              res(now() - t0);
            }
          };
          this.svc.writeToPty(handle, `print(${k})\n`);
        }),
      close: () => {
        stop();
        return this.svc.kill(handle, { graceMs: 100 });
      },
    };
  }
}

// ---------------------------------------------------------------- node-pty (raw)
function loadPty() {
  return require('@lydell/node-pty');
}

function ptySpawn(pty, file, args, cwd) {
  return pty.spawn(file, args, { name: 'xterm-256color', cols: COLS, rows: ROWS, cwd, env: process.env });
}

class NodePty {
  constructor() {
    this.pty = loadPty();
    this.base = scratchDir();
    this.cwd = join(this.base, 'project');
  }

  exec(cmd) {
    return new Promise((resolve) => {
      const t0 = now();
      const p = ptySpawn(this.pty, 'bash', ['-c', cmd], this.cwd);
      let bytes = 0;
      let tail = '';
      const data = p.onData((d) => {
        bytes += Buffer.byteLength(d);
        tail = keepTail(tail, d);
      });
      p.onExit(() => {
        // What a caller that resolves on the exit event has: node-pty may deliver data
        // after it, and that data is what the Gemini CLI loses.
        const exitMs = now() - t0;
        data.dispose();
        resolve({ exitMs, readableMs: exitMs, bytes, text: tail });
      });
    });
  }

  async repl() {
    const p = ptySpawn(this.pty, 'python3', ['-q', '-i'], this.cwd);
    let seen = '';
    let want = null;
    let done = null;
    p.onData((d) => {
      seen += d;
      if (want && seen.endsWith(want)) {
        want = null;
        done();
      }
    });
    await new Promise((res) => {
      want = PROMPT;
      done = res;
      if (seen.endsWith(PROMPT)) {
        want = null;
        res();
      }
    });
    return {
      roundTrip: (k) =>
        new Promise((res) => {
          seen = '';
          const t0 = now();
          want = `\r\n${k}\r\n${PROMPT}`;
          done = () => res(now() - t0);
          p.write(`print(${k})\r`);
        }),
      close: () => p.kill('SIGKILL'),
    };
  }

  async idle(cmd) {
    const p = ptySpawn(this.pty, 'bash', ['-c', cmd], this.cwd);
    p.onData(() => {});
    return { stop: () => p.kill('SIGKILL') };
  }

  async close() {
    removeScratch(this.base);
  }
}

// ---------------------------------------------------------------- node-pty + @xterm/headless
function lastContentLine(term) {
  const buffer = term.buffer.active;
  for (let i = buffer.length - 1; i >= 0; i--) {
    const text = buffer.getLine(i)?.translateToString(true) ?? '';
    if (text.length > 0) return { index: i, text };
  }
  return { index: -1, text: '' };
}

class Xterm extends NodePty {
  constructor() {
    super();
    this.Terminal = require('@xterm/headless').Terminal;
  }

  newTerminal() {
    return new this.Terminal({ cols: COLS, rows: ROWS, scrollback: 300_000, allowProposedApi: true });
  }

  exec(cmd) {
    return new Promise((resolve) => {
      const t0 = now();
      const term = this.newTerminal();
      const p = ptySpawn(this.pty, 'bash', ['-c', cmd], this.cwd);
      let bytes = 0;
      const data = p.onData((d) => {
        bytes += Buffer.byteLength(d);
        term.write(d);
      });
      p.onExit(() => {
        const exitMs = now() - t0;
        data.dispose();
        // Readable once the terminal has parsed everything queued so far.
        term.write('', () => {
          const text = lastContentLine(term).text;
          const readableMs = now() - t0;
          term.dispose();
          resolve({ exitMs, readableMs, bytes, text });
        });
      });
    });
  }

  async repl() {
    const p = ptySpawn(this.pty, 'python3', ['-q', '-i'], this.cwd);
    const term = this.newTerminal();
    let check = null;
    p.onData((d) => term.write(d, () => check?.()));
    const promptAfter = (k) => {
      const { index, text } = lastContentLine(term);
      if (text.trimEnd() !== PROMPT.trimEnd()) return false;
      if (k === undefined) return true;
      return term.buffer.active.getLine(index - 1)?.translateToString(true).trimEnd() === String(k);
    };
    await new Promise((res) => {
      check = () => promptAfter() && res();
    });
    return {
      roundTrip: (k) =>
        new Promise((res) => {
          const t0 = now();
          check = () => {
            if (promptAfter(k)) {
              check = null;
              res(now() - t0);
            }
          };
          p.write(`print(${k})\r`);
        }),
      close: () => {
        p.kill('SIGKILL');
        term.dispose();
      },
    };
  }

  async idle(cmd) {
    const p = ptySpawn(this.pty, 'bash', ['-c', cmd], this.cwd);
    const term = this.newTerminal();
    p.onData((d) => term.write(d));
    return {
      stop: () => {
        p.kill('SIGKILL');
        term.dispose();
      },
    };
  }
}

// ---------------------------------------------------------------- Gemini CLI's ShellExecutionService
const UPSTREAM_SERVICE = '@google/gemini-cli-core/dist/src/services/shellExecutionService.js';
// This package's drop-in for it, with the same static API (`npm run build:compat`).
const DROP_IN_SERVICE = '../dist/compat/gemini-compat.js';

/** Drives a `ShellExecutionService` with upstream's static API, imported from `module`. */
class Gemini {
  constructor(module) {
    this.module = module;
  }

  async init() {
    const m = await import(this.module);
    const s = await import('@google/gemini-cli-core/dist/src/services/sandboxManager.js');
    this.Service = m.ShellExecutionService;
    this.base = scratchDir();
    this.cwd = join(this.base, 'project');
    // The drop-in keeps its jobs' output in files: in the scratch directory, like the
    // Addon peer's (upstream has no `configure`). In process: the peer measures the
    // drop-in's own cost, not a daemon's (its default places pipes-mode jobs there).
    this.Service.configure?.({ ioDir: join(this.base, 'io'), daemon: false });
    this.config = {
      sessionId: 'bench',
      terminalWidth: COLS,
      terminalHeight: ROWS,
      pager: 'cat',
      showColor: false,
      sanitizationConfig: {
        enableEnvironmentVariableRedaction: false,
        allowedEnvironmentVariables: [],
        blockedEnvironmentVariables: [],
      },
      sandboxManager: new s.NoopSandboxManager(),
    };
    return this;
  }

  async start(cmd, onEvent = () => {}) {
    const abort = new AbortController();
    const handle = await this.Service.execute(cmd, this.cwd, onEvent, abort.signal, true, this.config);
    return { ...handle, abort };
  }

  async exec(cmd) {
    const t0 = now();
    let exitMs = null;
    const { pid, result } = await this.start(cmd);
    this.Service.onExit(pid, () => {
      exitMs = now() - t0;
    });
    const r = await result;
    const readableMs = now() - t0;
    if (r.executionMethod === 'child_process') throw new Error('Gemini fell back to child_process');
    return { exitMs: exitMs ?? readableMs, readableMs, bytes: r.output.length, text: r.output.slice(-512) };
  }

  async repl() {
    let check = null;
    const lines = (chunk) =>
      Array.isArray(chunk)
        ? chunk.map((line) => (Array.isArray(line) ? line.map((t) => t.text).join('') : String(line)).trimEnd())
        : String(chunk).split('\n');
    const onEvent = (e) => {
      if (e.type === 'data') check?.(lines(e.chunk).filter((l) => l.length > 0));
    };
    const { pid, abort } = await this.start('python3 -q -i', onEvent);
    await new Promise((res) => {
      check = (ls) => ls.at(-1) === PROMPT.trimEnd() && res();
    });
    return {
      roundTrip: (k) =>
        new Promise((res) => {
          const t0 = now();
          check = (ls) => {
            if (ls.at(-1) === PROMPT.trimEnd() && ls.at(-2) === String(k)) {
              check = null;
              res(now() - t0);
            }
          };
          this.Service.writeToPty(pid, `print(${k})\r`);
        }),
      close: () => abort.abort(),
    };
  }

  async idle(cmd) {
    const { abort } = await this.start(cmd);
    return { stop: () => abort.abort() };
  }

  async close() {
    removeScratch(this.base);
  }
}

// ---------------------------------------------------------------- child_process pipes
class Pipes {
  constructor() {
    this.base = scratchDir();
    this.cwd = join(this.base, 'project');
  }

  exec(cmd) {
    return new Promise((resolve, reject) => {
      const t0 = now();
      const child = spawnChild('bash', ['-c', cmd], { cwd: this.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let bytes = 0;
      let tail = '';
      const take = (d) => {
        bytes += d.length;
        tail = keepTail(tail, d.toString('latin1'));
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.on('error', reject);
      child.on('close', () => {
        const ms = now() - t0;
        resolve({ exitMs: ms, readableMs: ms, bytes, text: tail });
      });
    });
  }

  async repl() {
    const child = spawnChild('python3', ['-q', '-i', '-u'], { cwd: this.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let check = () => {};
    child.stdout.on('data', (d) => {
      out += d;
      check();
    });
    child.stderr.on('data', (d) => {
      err += d;
      check();
    });
    await new Promise((res) => {
      check = () => err.endsWith(PROMPT) && res();
      check();
    });
    return {
      roundTrip: (k) =>
        new Promise((res) => {
          out = '';
          err = '';
          const t0 = now();
          check = () => {
            if (out.includes(`${k}\n`) && err.endsWith(PROMPT)) {
              check = () => {};
              res(now() - t0);
            }
          };
          child.stdin.write(`print(${k})\n`);
        }),
      close: () => child.kill('SIGKILL'),
    };
  }

  async idle(cmd) {
    const child = spawnChild('bash', ['-c', cmd], { cwd: this.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', () => {});
    child.stderr.on('data', () => {});
    return { stop: () => child.kill('SIGKILL') };
  }

  async close() {
    removeScratch(this.base);
  }
}

/** Peer name → constructor. The `limit-*` peers are not Node code (see worker.mjs). */
export const PEERS = {
  'addon-text': async () => new Addon({ view: 'text' }),
  'addon-screen': async () => new Addon({ view: 'screen' }),
  'addon-pipes': async () => new Addon({ view: 'text', mode: 'pipes' }),
  'addon-events': async () => new AddonEvents(),
  'addon-daemon': async () => new AddonDaemon().init(),
  // The per-job sandbox (Landlock + seccomp in the spawn child), and the peers' way of
  // confining a command: the same command wrapped in bubblewrap, as the Gemini CLI's
  // and Codex's Linux sandboxes do (a process and namespaces per command).
  'addon-sandbox': async () => new Addon({ view: 'text', sandbox: true }),
  'addon-bwrap': async () => new Addon({ view: 'text', wrap: BWRAP }),
  'node-pty': async () => new NodePty(),
  xterm: async () => new Xterm(),
  gemini: async () => new Gemini(UPSTREAM_SERVICE).init(),
  compat: async () => new Gemini(DROP_IN_SERVICE).init(),
  pipes: async () => new Pipes(),
};
