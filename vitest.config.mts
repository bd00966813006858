import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    exclude: ['__test__/stress/**', '__test__/faults/**', 'node_modules/**'],
    // Real processes in real PTYs: generous per-test budgets, no wall-clock assertions.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
