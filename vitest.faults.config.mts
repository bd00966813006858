import { defineConfig } from 'vitest/config';

import { excluded } from './__test__/capabilities';

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
