// `npm install` in the repo root builds the package so the `flowctl` bin works right away.
// Skipped when installed as a dependency from the registry (dist/ is already in the tarball).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

if (!existsSync('tsup.config.ts')) process.exit(0);
const r = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
