import { defineConfig } from 'vitest/config';

import { excluded } from './__test__/capabilities';

// The Gemini drop-in's default places pipes-mode jobs in the user's daemon
// (docs/gemini-compat.md): the suites run it in process unless the run says otherwise
// (NATIVE_SHELL_GEMINI_DAEMON=<socket> for the daemon), so no test reaches the user's
// daemon; the tests of the default set their own socket place (XDG_RUNTIME_DIR).
process.env.NATIVE_SHELL_GEMINI_DAEMON ??= '0';

// The torture suites (`npm run test:stress`): one file at a time, each in its own
// worker process, so the fd/thread/PTY/zombie figures of one file are not disturbed
// by another. Sizes: STRESS_SCALE (see __test__/stress/common.ts, docs/reliability.md).
export default defineConfig({
  test: {
    include: ['__test__/stress/**/*.test.ts'],
    exclude: ['node_modules/**', ...excluded((file) => file.startsWith('stress/'))],
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
