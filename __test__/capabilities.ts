// Which tests can run on this machine, by what the machine can do, not by its name: the
// vitest configs leave out a file whose needs are not met and print the file with the
// reason (CI on macOS and Windows: .github/workflows/ci.yml). A file not listed here
// needs nothing but the addon and Node, and runs everywhere. Where only some tests of a
// file need something (cgroup containment, a Landlock ABI, user namespaces, root), the
// file gates them one by one with __test__/gates.ts, which skips each with the reason.
//
// A need listed here is what the tests check, not a convenience: a suite about /proc is
// about Linux. Probed once per run: the configs probe (and print what they found), and
// the results reach the test workers through NSS_TEST_* variables (a worker started
// another way probes again).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Need =
  /** Jobs run `bash -c` with POSIX tools (ed, python3, sleep, kill...). */
  | 'posix'
  /** Linux's kernel interfaces: /proc, cgroups, the wait channel behind `awaiting_input`. */
  | 'linux'
  /** GNU tar: scripts/build-extension.mjs makes reproducible archives with its options. */
  | 'gnu-tar'
  /** A program the tests drive. */
  | `program:${string}`
  /** Root that may mount (CAP_SYS_ADMIN: not so in most containers): the full-disk faults' tmpfs. */
  | 'root'
  /** Unprivileged user namespaces (`unshare -r`): refused by Ubuntu 24.04's AppArmor. */
  | 'userns'
  /** At least this Landlock ABI (the sandbox: 1 to confine at all, 4 TCP ports, 6 signals). */
  | `landlock:${number}`
  /**
   * Jobs whose processes left their session, parent and environment (setsid -f with
   * env -i, a double fork, daemon(3)) are still ended with the job: see escapesHeld().
   */
  | 'escapes-held'
  /** The per-job sandbox: Landlock (Linux) or sandbox-exec (macOS). */
  | 'sandbox'
  /** A thread may ask for a shorter scheduler slice (Linux 6.12+, EEVDF; src/daemon/latency.rs). */
  | 'slices'
  /**
   * Pathname unix sockets are judged by the service's seccomp supervisor: Landlock below
   * ABI 9 (from ABI 9 Landlock judges them itself and no supervisor thread exists).
   */
  | 'unix-supervised';

const WHY: Record<string, string> = {
  posix: 'its jobs run `bash -c` and POSIX tools; on Windows jobs run cmd.exe (covered by __test__/windows)',
  'gnu-tar': 'scripts/build-extension.mjs packs with GNU tar (sorted names, no owner, a fixed time), and this tar is not GNU tar',
  linux: "it checks Linux's /proc, cgroups or the kernel's wait channel (awaiting_input), which this OS does not have (docs/platforms.md)",
  slices:
    "it checks the daemon's short scheduler slices (src/daemon/latency.rs), and this kernel takes no slice from a thread (Linux 6.12+ does: its /proc/<pid>/sched shows se.slice)",
  sandbox:
    "its jobs run sandboxed (the extension's manifest starts the MCP server with --sandbox), and this machine has neither Landlock (Linux) nor sandbox-exec (macOS) (docs/sandbox.md)",
};

/** Every test file (relative to __test__/) with what it needs. */
export const NEEDS: Record<string, Need[]> = {
  'bad-input.test.ts': ['posix', 'linux'],
  'contract.test.ts': ['posix', 'linux'],
  'docs-samples.test.ts': ['posix', 'program:git', 'program:python3', 'program:ed'],
  'events.test.ts': ['posix'],
  'flood-loop.test.ts': ['posix'],
  'input-wait.test.ts': ['posix', 'linux', 'program:gdb'],
  'interaction.test.ts': ['posix', 'linux', 'program:gdb'],
  'lifecycle.test.ts': ['posix', 'linux'],
  'exits.test.ts': ['posix'],
  'output.test.ts': ['posix', 'linux', 'program:vim'],
  'output-limit.test.ts': ['posix', 'program:python3'],
  'persistence-registry.test.ts': ['posix'],
  'run.test.ts': ['posix'],
  'screen.test.ts': ['posix'],
  'containment.test.ts': ['posix', 'linux'],
  'daemon/client.test.ts': ['posix', 'linux', 'program:python3'],
  'daemon/short-turns.test.ts': ['posix', 'linux', 'program:python3', 'slices'],
  'daemon/mcp.test.ts': ['posix', 'program:python3'],
  'daemon/ended-jobs.test.ts': ['posix'],
  'daemon/keep-alive.test.ts': ['posix'],
  'daemon/wakeups.test.ts': ['posix', 'linux', 'program:python3'],
  'daemon/job-peers.test.ts': ['posix', 'linux', 'landlock:1', 'program:python3', 'program:socat'],
  'remote/deploy.test.ts': ['posix'],
  'remote/mcp-http.test.ts': ['posix'],
  'remote/gemini-http.test.ts': ['posix'],
  'remote/tcp-client.test.ts': ['posix'],
  'remote/browser-doors.test.ts': ['posix', 'linux', 'program:chromium'],
  'scripts/platform-pack.test.ts': ['posix'],
  'sandbox-caches.test.ts': ['posix', 'linux'],
  'sandbox-escapes.test.ts': [
    'posix',
    'linux',
    'landlock:1',
    'program:python3',
    'program:git',
    'program:prlimit',
    'program:ionice',
    'program:taskset',
    'program:chrt',
    'program:setcap',
    'program:chattr',
  ],
  'sandbox.test.ts': ['posix', 'linux', 'program:gdb', 'program:python3', 'program:ed', 'program:sqlite3', 'landlock:1'],
  // Each escape needs its server program too (dbus-daemon, ssh-agent): gated test by test.
  'sandbox-unix.test.ts': ['posix', 'linux', 'landlock:1', 'program:python3'],
  'sandbox-integrity.test.ts': ['posix', 'linux', 'program:dd', 'program:python3', 'landlock:1'],
  'sandbox-secrets.test.ts': ['posix', 'linux', 'program:python3', 'landlock:1'],
  'security.test.ts': ['posix', 'linux'],
  'spawn.test.ts': ['posix', 'linux'],
  // The terminal opened ahead is Linux's (SparePty); the sizes are read back with tput.
  'spawn-fast-paths.test.ts': ['posix', 'linux', 'program:tput'],
  'compat/differential.test.ts': ['posix'],
  'compat/methods.test.ts': ['posix'],
  'compat/parity.test.ts': ['posix'],
  'compat/daemon.test.ts': ['posix'],
  'e2e/gemini.test.ts': ['posix', 'program:python3', 'program:ed'],
  'e2e/gemini-dropin.test.ts': ['posix'],
  'e2e/model-clients.test.ts': ['posix', 'program:python3'],
  'e2e/model-transports.test.ts': ['posix', 'program:python3'],
  'mcp/cli.test.ts': ['posix'],
  'mcp/data.test.ts': ['posix', 'linux'],
  'mcp/errors.test.ts': ['posix'],
  'mcp/extension-archive.test.ts': ['posix', 'program:python3', 'gnu-tar', 'sandbox'],
  'mcp/gemini-extension.test.ts': ['posix', 'program:python3', 'sandbox'],
  'mcp/install.test.ts': ['posix'],
  'mcp/mcp.test.ts': ['posix'],
  'mcp/package.test.ts': ['posix'],
  'mcp/python-client.test.ts': ['posix', 'program:python3'],
  // The daemon's envd face driven by E2B's SDKs (npm's, a devDependency; PyPI's, installed
  // as the MCP suite's `mcp` is); alive() reads /proc.
  'remote/e2b-sdk.test.ts': ['posix', 'linux'],
  'remote/e2b-python.test.ts': ['posix', 'linux', 'program:python3'],
  'tools/confirmation.test.ts': ['posix'],
  'tools/gemini-cli.test.ts': ['posix'],
  'tools/jobs-kill.test.ts': ['posix', 'linux'],
  'tools/live-output.test.ts': ['posix'],
  'tools/run-shell-command.test.ts': ['posix'],
  'tools/send-input-policy.test.ts': ['posix', 'program:gdb'],
  'tools/send-input.test.ts': ['posix'],
  'tools/shell-cmd.test.ts': ['posix'],
  'tools/workflows.test.ts': ['posix', 'program:python3', 'program:ed'],
  // The fault suite (vitest.faults.config.mts): /proc descriptors, tmpfs, ulimit, workers.
  'faults/bounds.test.ts': ['posix', 'linux'],
  'faults/descriptors.test.ts': ['posix', 'linux'],
  'faults/persist-disk.test.ts': ['posix', 'linux'],
  'faults/persist-sessions.test.ts': ['posix'],
  'faults/persist-tools.test.ts': ['posix'],
  'faults/workers.test.ts': ['posix', 'linux'],
  // The torture suites (vitest.stress.config.mts) count descriptors, threads and PTYs
  // through /proc.
  'stress/concurrency.test.ts': ['posix', 'linux'],
  'stress/flood.test.ts': ['posix', 'linux'],
  'stress/node-sigkill.test.ts': ['posix', 'linux'],
  'stress/output.test.ts': ['posix', 'linux'],
  'stress/spawn-kill.test.ts': ['posix', 'linux'],
  'stress/trees.test.ts': ['posix', 'linux'],
};

function onPath(program: string): boolean {
  const finder = process.platform === 'win32' ? 'where' : 'which';
  return spawnSync(finder, [program], { stdio: 'ignore' }).status === 0;
}

/**
 * How this machine's jobs are contained: the addon's own word (`containment` of a
 * service, or of the class) where it has one, else whether a job's process
 * lands in a cgroup of its own (`/native-shell-` in its /proc/<pid>/cgroup): 'cgroup'
 * or 'process-tree'. Probed in a Node process of its own (a service and a job), once.
 */
export function containment(): string {
  const found = process.env.NSS_TEST_CONTAINMENT || probeContainment();
  process.env.NSS_TEST_CONTAINMENT = found;
  // Where a mode is promised (.ci/run as root, a delegated cgroup), a probe that finds
  // another must fail the run: skipping the tests the mode holds would hide the loss.
  const expected = process.env.NSS_EXPECT_CONTAINMENT;
  if (expected && found !== expected) {
    throw new Error(`jobs are contained by '${found}' here, and NSS_EXPECT_CONTAINMENT says '${expected}' (unset it where that mode cannot be had)`);
  }
  return found;
}

function probeContainment(): string {
  const addon = join(__dirname, '..', 'index.js');
  if (process.platform === 'win32') return 'job-object';
  if (!existsSync(addon)) return 'process-tree';
  const script = `
    const { readFileSync } = require('node:fs');
    const { ShellExecutionService } = require(${JSON.stringify(addon)});
    const s = new ShellExecutionService({ persistOutput: false });
    (async () => {
      let mode = s.containment ?? ShellExecutionService.containment;
      if (typeof mode !== 'string') {
        const r = await s.run('sleep 60', { mode: 'pipes', callbackDelayMs: 0 });
        let cgroup = '';
        try { cgroup = readFileSync('/proc/' + r.pid + '/cgroup', 'utf8'); } catch {}
        mode = /^0::.*\\/native-shell-/m.test(cgroup) ? 'cgroup' : 'process-tree';
      }
      await s.shutdown();
      process.stdout.write(mode);
    })();`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  if (r.status === 0 && r.stdout) return r.stdout.trim();
  return `unknown (the probe failed: ${(r.stderr || String(r.error)).trim().split('\n')[0]})`;
}

/**
 * The one gate for the guarantees only a cgroup gives today: that a job's escapees
 * (setsid -f with env -i, a double fork, daemon(3)) orphaned after the job's own process
 * ended are found, listed and ended with the job. (While it runs, the process-tree mode
 * holds them too: the job's shell is a subreaper.) A mode that comes to hold them is
 * added here, and only here.
 */
export function escapesHeld(): boolean {
  return containment() === 'cgroup';
}

/** The kernel's Landlock ABI (landlock_create_ruleset's version query), 0 without Landlock. */
export function landlockAbi(): number {
  const cached = process.env.NSS_TEST_LANDLOCK_ABI;
  if (cached) return Number(cached);
  let abi = 0;
  if (process.platform === 'linux') {
    // System call 444 on every Linux architecture; flag 1: LANDLOCK_CREATE_RULESET_VERSION.
    const r = spawnSync('python3', ['-c', 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    abi = Math.max(0, Number.parseInt(r.stdout ?? '', 10) || 0);
  }
  process.env.NSS_TEST_LANDLOCK_ABI = String(abi);
  return abi;
}

/** CAP_SYS_ADMIN (bit 21) in this process's effective capabilities: what mount(2) asks. */
function mayMount(): boolean {
  const line = /^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return line !== null && (BigInt(`0x${line[1]}`) & (1n << 21n)) !== 0n;
}

/** Whether a thread's asked-for slice (100 µs, sched_setattr's sched_runtime) shows in its /proc/<pid>/sched. */
function slicesTaken(): boolean {
  if (process.platform !== 'linux') return false;
  const script = [
    'import ctypes, struct',
    "a = struct.pack('IIQiIQQQ', 48, 0, 0, 0, 0, 100000, 0, 0)",
    'ctypes.CDLL(None).syscall(314, 0, ctypes.create_string_buffer(a), 0)',
    "print(open('/proc/self/sched').read())",
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
  return /^se\.slice\s*:\s*100000$/m.test(r.stdout ?? '');
}

function usernsAllowed(): boolean {
  return process.platform === 'linux' && spawnSync('unshare', ['-r', 'true'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

const has: Record<string, boolean> = {};

function probe(need: Need): boolean {
  switch (need) {
    case 'posix':
      return process.platform !== 'win32' && onPath('bash');
    case 'linux':
      return process.platform === 'linux' && existsSync('/proc/self/stat');
    case 'gnu-tar':
      return /GNU tar/.test(spawnSync('tar', ['--version'], { encoding: 'utf8' }).stdout ?? '');
    case 'root':
      return process.getuid?.() === 0 && (process.platform !== 'linux' || mayMount());
    case 'userns':
      return usernsAllowed();
    case 'escapes-held':
      return escapesHeld();
    case 'slices':
      return slicesTaken();
    case 'unix-supervised':
      return process.platform === 'linux' && landlockAbi() >= 1 && landlockAbi() < 9;
    case 'sandbox':
      if (process.platform === 'linux') return landlockAbi() >= 1;
      return process.platform === 'darwin' && existsSync('/usr/bin/sandbox-exec');
  }
  if (need.startsWith('landlock:')) return landlockAbi() >= Number(need.slice('landlock:'.length));
  return onPath(need.slice('program:'.length));
}

/** Whether this machine meets the need. */
export function met(need: Need): boolean {
  has[need] ??= probe(need);
  return has[need] as boolean;
}

/** Why a need is not met here, in words. */
export function why(need: Need): string {
  if (WHY[need]) return WHY[need];
  if (need === 'root') {
    const uid = process.getuid?.();
    return uid === 0
      ? 'it mounts a tmpfs, and this root may not mount (no CAP_SYS_ADMIN: a container?)'
      : `it needs root (it mounts a tmpfs), and this runs as uid ${uid}`;
  }
  if (need === 'userns') {
    return 'unprivileged user namespaces are refused here (`unshare -r true` fails: a sysctl, or AppArmor as on Ubuntu 24.04, restricts them)';
  }
  if (need === 'escapes-held') {
    return (
      `jobs are contained here by '${containment()}', not by a cgroup each: a process that left the job's ` +
      "session and environment and was orphaned after the job's shell ended is out of the service's reach (the Node process's cgroup is not " +
      'writable: run as root or inside a cgroup subtree delegated to this user; docs/reliability.md)'
    );
  }
  if (need === 'unix-supervised') {
    return `it checks the seccomp supervisor of unix sockets, which runs below Landlock ABI 9; this kernel has ABI ${landlockAbi()}, where Landlock judges the sockets itself (docs/sandbox.md, "Unix sockets")`;
  }
  if (need.startsWith('landlock:')) {
    const abi = landlockAbi();
    return `it needs Landlock ABI ${need.slice('landlock:'.length)} or later (docs/sandbox.md), and ${abi ? `this kernel has ABI ${abi}` : 'this kernel has no Landlock (or it is not enabled, or python3 is missing to ask)'}`;
  }
  return `it drives ${need.slice('program:'.length)}, which is not installed here`;
}

/** One line saying what this machine can do, printed by the configs (and probing it once for the workers). */
export function summary(): string {
  if (process.platform !== 'linux') return `capabilities: Node ${process.version}, containment ${containment()}`;
  return [
    `capabilities: Node ${process.version}, uid ${process.getuid?.()}`,
    `containment ${containment()}`,
    `Landlock ABI ${landlockAbi() || 'none'}`,
    `unprivileged user namespaces ${met('userns') ? 'allowed' : 'refused'}`,
  ].join(', ');
}

/**
 * The files (as vitest globs under __test__/) this machine cannot run, each with its
 * reason; printed by the configs, so a run says what it left out and why.
 */
export function unmet(which: (file: string) => boolean = () => true): Array<{ file: string; reason: string }> {
  const out: Array<{ file: string; reason: string }> = [];
  for (const [file, needs] of Object.entries(NEEDS)) {
    if (!which(file)) continue;
    const missing = needs.find((n) => !met(n));
    if (missing) out.push({ file: `__test__/${file}`, reason: why(missing) });
  }
  return out;
}

/** Prints what is left out and returns the globs for vitest's `exclude`. */
export function excluded(which: (file: string) => boolean = () => true): string[] {
  console.log(summary());
  const skipped = unmet(which);
  for (const { file, reason } of skipped) console.log(`skipped ${file}: ${reason}`);
  return skipped.map((s) => s.file);
}
