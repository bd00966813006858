import { defineConfig } from 'vitest/config';

import { excluded } from './__test__/capabilities';

// The Gemini drop-in's default places pipes-mode jobs in the user's daemon
// (docs/gemini-compat.md): the suites run it in process unless the run says otherwise
// (NATIVE_SHELL_GEMINI_DAEMON=<socket> for the daemon), so no test reaches the user's
// daemon; the tests of the default set their own socket place (XDG_RUNTIME_DIR).
process.env.NATIVE_SHELL_GEMINI_DAEMON ??= '0';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // What this machine cannot run is left out, each file printed with the reason.
    exclude: ['__test__/stress/**', '__test__/faults/**', 'node_modules/**', ...excluded((file) => !file.startsWith('stress/'))],
    // Real processes in real PTYs: generous per-test budgets, no wall-clock assertions.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three files at a time on this project's 2-core machine: the tests mostly wait on the
    // programs they drive, so two workers kept 1.2 cores busy (the suite alone: 260 s
    // wall, 320 CPU seconds); three took 189 s (303), four 185 s (326). Every test holds
    // with both cores busy, as it must.
    maxWorkers: 3,
  },
});
