import { defineConfig } from 'vitest/config';

import { excluded } from './__test__/capabilities';

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
