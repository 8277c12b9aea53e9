import { defineConfig } from 'vitest/config';

// The suite must pass on a loaded machine (two workers on two cores, or under stress-ng): tests wait
// for events, never for time (test/helpers/wait.ts), and randomness is seeded (test/helpers/seeded.ts,
// and fast-check through the setup file). The timeouts below only end a hang.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'adapters/**/*.test.ts', 'examples/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/helpers/setup-seed.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
