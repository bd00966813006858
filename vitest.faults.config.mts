import { defineConfig } from 'vitest/config';

import { excluded } from './__test__/capabilities';

// The Gemini drop-in's default places pipes-mode jobs in the user's daemon
// (docs/gemini-compat.md): the suites run it in process unless the run says otherwise
// (NATIVE_SHELL_GEMINI_DAEMON=<socket> for the daemon), so no test reaches the user's
// daemon; the tests of the default set their own socket place (XDG_RUNTIME_DIR).
process.env.NATIVE_SHELL_GEMINI_DAEMON ??= '0';

// The fault-injection suite (`npm run test:faults`; docs/reliability.md): full and
// vanished disks, services of several processes on one ioDir, worker terminations,
// floods, long sessions. Each test injects a fault the default suite does not.
export default defineConfig({
  test: {
    include: ['__test__/faults/**/*.test.ts'],
    // What this machine cannot run is left out, each file printed with the reason.
    exclude: ['node_modules/**', ...excluded((file) => file.startsWith('faults/'))],
    // Real processes in real PTYs, megabytes of output: generous budgets, no wall-clock assertions.
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
