import { defineConfig } from 'vitest/config';

import { excluded } from './__test__/capabilities';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // What this machine cannot run is left out, each file printed with the reason.
    exclude: ['__test__/stress/**', '__test__/faults/**', 'node_modules/**', ...excluded((file) => !file.startsWith('stress/'))],
    // Real processes in real PTYs: generous per-test budgets, no wall-clock assertions.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
