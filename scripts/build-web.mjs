// Build the hosted service's web app (web/, Vite + React) into dist/web, which createHostedService
// serves at `/` (src/service/web-app.ts). scripts/build.mjs runs it after tsup; test/global-setup.ts
// runs it alone when web/ changed since the last build.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
const r = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts'], { cwd: root, stdio: 'inherit' });
if (r.status === 0) process.stdout.write(`[web] dist/web built in ${Date.now() - started} ms\n`);
process.exit(r.status ?? 1);
