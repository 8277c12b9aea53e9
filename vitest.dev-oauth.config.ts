import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { root: '/work/wt/oauth', include: ['test/**/*.test.ts'], setupFiles: ['test/helpers/setup-seed.ts'], testTimeout: 120_000, hookTimeout: 180_000, pool: 'forks', maxWorkers: 1 } });
