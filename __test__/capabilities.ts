// Which test files can run on this machine, by what the machine can do, not by its
// name: the vitest configs leave out a file whose needs are not met and print the file
// with the reason (CI on macOS and Windows: .github/workflows/ci.yml). A file not listed
// here needs nothing but the addon and Node, and runs everywhere.
//
// Leaving out whole files keeps the test files themselves as they are; a need listed here
// is what the file's tests check, not a convenience: a suite about /proc is about Linux.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export type Need =
  /** Jobs run `bash -c` with POSIX tools (ed, python3, sleep, kill...). */
  | 'posix'
  /** Linux's kernel interfaces: /proc, cgroups, the wait channel behind `awaiting_input`. */
  | 'linux'
  /** GNU tar: scripts/build-extension.mjs makes reproducible archives with its options. */
  | 'gnu-tar'
  /** A program the tests drive. */
  | `program:${string}`;

const WHY: Record<string, string> = {
  posix: 'its jobs run `bash -c` and POSIX tools; on Windows jobs run cmd.exe (covered by __test__/windows)',
  'gnu-tar': 'scripts/build-extension.mjs packs with GNU tar (sorted names, no owner, a fixed time), and this tar is not GNU tar',
  linux: "it checks Linux's /proc, cgroups or the kernel's wait channel (awaiting_input), which this OS does not have (docs/platforms.md)",
};

/** Every test file (relative to __test__/) with what it needs. */
export const NEEDS: Record<string, Need[]> = {
  'bad-input.test.ts': ['posix', 'linux'],
  'contract.test.ts': ['posix', 'linux'],
  'events.test.ts': ['posix'],
  'input-wait.test.ts': ['posix', 'linux', 'program:gdb'],
  'interaction.test.ts': ['posix', 'linux', 'program:gdb'],
  'lifecycle.test.ts': ['posix', 'linux'],
  'output.test.ts': ['posix', 'linux', 'program:vim'],
  'output-limit.test.ts': ['posix', 'program:python3'],
  'persistence-registry.test.ts': ['posix'],
  'run.test.ts': ['posix'],
  'screen.test.ts': ['posix'],
  'sandbox.test.ts': ['posix', 'linux', 'program:gdb', 'program:python3', 'program:ed', 'program:sqlite3'],
  'sandbox-integrity.test.ts': ['posix', 'linux', 'program:dd'],
  'security.test.ts': ['posix', 'linux'],
  'spawn.test.ts': ['posix', 'linux'],
  'compat/differential.test.ts': ['posix'],
  'compat/methods.test.ts': ['posix'],
  'e2e/gemini.test.ts': ['posix', 'program:python3', 'program:ed'],
  'mcp/cli.test.ts': ['posix'],
  'mcp/data.test.ts': ['posix', 'linux'],
  'mcp/errors.test.ts': ['posix'],
  'mcp/extension-archive.test.ts': ['posix', 'program:python3', 'gnu-tar'],
  'mcp/gemini-extension.test.ts': ['posix', 'program:python3'],
  'mcp/install.test.ts': ['posix'],
  'mcp/mcp.test.ts': ['posix'],
  'mcp/package.test.ts': ['posix'],
  'mcp/python-client.test.ts': ['posix', 'program:python3'],
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

const has: Record<string, boolean> = {};

/** Whether this machine meets the need. */
export function met(need: Need): boolean {
  has[need] ??=
    need === 'posix'
      ? process.platform !== 'win32' && onPath('bash')
      : need === 'linux'
        ? process.platform === 'linux' && existsSync('/proc/self/stat')
        : need === 'gnu-tar'
          ? /GNU tar/.test(spawnSync('tar', ['--version'], { encoding: 'utf8' }).stdout ?? '')
          : onPath(need.slice('program:'.length));
  return has[need] as boolean;
}

/** Why a need is not met here, in words. */
export function why(need: Need): string {
  return WHY[need] ?? `it drives ${need.slice('program:'.length)}, which is not installed here`;
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
  const skipped = unmet(which);
  for (const { file, reason } of skipped) console.log(`skipped ${file}: ${reason}`);
  return skipped.map((s) => s.file);
}
