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

for (const [name, args] of steps) {
  process.stderr.write(`\n[test] ${name}\n`);
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, CI: process.env.CI ?? '' } });
  if (r.status !== 0) {
    process.stderr.write(`[test] ${name} failed (exit ${r.status})\n`);
    process.exit(r.status ?? 1);
  }
}
