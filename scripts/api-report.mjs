// The API reports: one per public entry. flowctl.api.md is the main entry (api-extractor.json);
// api/<entry>.api.md the subpath entries (api/<entry>.json). `--local` updates them (npm run
// api:update); without it a changed report fails (npm run api:check, npm test). Needs a built dist/.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const configs = [
  'api-extractor.json',
  ...readdirSync(new URL('../api', import.meta.url))
    .filter((f) => f.endsWith('.json'))
    .map((f) => `api/${f}`),
];
const local = process.argv.includes('--local') ? ['--local'] : [];
for (const config of configs) {
  const r = spawnSync(process.execPath, ['node_modules/@microsoft/api-extractor/bin/api-extractor', 'run', '-c', config, ...local], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
