// `npm test`: format and lint (Biome), the structure rules (docs/architecture.md), build, check the public API report and the exports map, type-check, then vitest.
import { spawnSync } from 'node:child_process';

const steps = [
  ['format', ['node_modules/@biomejs/biome/bin/biome', 'format', '.']],
  ['lint', ['node_modules/@biomejs/biome/bin/biome', 'lint', '--error-on-warnings', '.']],
  ['structure', ['scripts/check-structure.mjs']],
  ['build', ['scripts/build.mjs']],
  ['typecheck', ['node_modules/typescript/bin/tsc', '--noEmit']],
  ['typecheck web', ['node_modules/typescript/bin/tsc', '-p', 'web', '--noEmit']],
  ['api reports', ['scripts/api-report.mjs']],
  ['publint', ['node_modules/publint/src/cli.js', '--strict']],
  ['are the types wrong', ['node_modules/@arethetypeswrong/cli/dist/index.js', '--pack', '.', '--profile', 'node16']],
  ['vitest', ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)]],
];

// attw packs the package (`npm pack`), which would run `prepack`, a second whole build: dist/ is built above.
const IGNORE_SCRIPTS = new Set(['are the types wrong']);

for (const [name, args] of steps) {
  process.stderr.write(`\n[test] ${name}\n`);
  const env = { ...process.env, CI: process.env.CI ?? '', ...(IGNORE_SCRIPTS.has(name) ? { npm_config_ignore_scripts: 'true' } : {}) };
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', env });
  if (r.status !== 0) {
    process.stderr.write(`[test] ${name} failed (exit ${r.status})\n`);
    process.exit(r.status ?? 1);
  }
}
