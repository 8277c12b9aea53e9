// `npm run bench`: build, then run every bench/*.bench.mjs in turn. Each writes its own section of
// bench/RESULTS.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` (see bench/results.mjs).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const only = process.argv.slice(2);
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
let failed = 0;
for (const file of readdirSync('bench')
  .filter((f) => f.endsWith('.bench.mjs'))
  .sort()) {
  if (only.length && !only.some((o) => file.includes(o))) continue;
  process.stderr.write(`\n[bench] ${file}\n`);
  const r = spawnSync(process.execPath, ['--expose-gc', `bench/${file}`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
