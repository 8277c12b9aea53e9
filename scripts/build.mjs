// Build dist/ from scratch: empty it, regenerate src/tools/schema-meta.generated.ts and src/tools/tool-validators.generated.ts, then run tsup (library and CLI configs in parallel, separate
// folders), then the optional-peer wrappers (scripts/peer-entries.mjs), then the web app (scripts/build-web.mjs: Vite, into dist/web).
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
// The validators contract.ts imports, regenerated before bundling: the JSON Schema meta-schema's (scripts/build-schema-meta.mjs),
// then the built-in and browser tools' contract schemas' (scripts/build-tool-validators.mjs, which loads contract.ts and so the first).
for (const script of ['scripts/build-schema-meta.mjs', 'scripts/build-tool-validators.mjs']) {
  const gen = spawnSync(process.execPath, [script], { cwd: root, stdio: 'inherit' });
  if (gen.status !== 0) process.exit(gen.status ?? 1);
}
const r = spawnSync(process.execPath, ['node_modules/tsup/dist/cli-default.js', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
// Entries that need optional peers check them before loading (scripts/peer-entries.mjs).
const peers = spawnSync(process.execPath, ['scripts/peer-entries.mjs'], { cwd: root, stdio: 'inherit' });
if (peers.status !== 0) process.exit(peers.status ?? 1);
// CommonJS declarations import ES-module-only packages' types in import mode (scripts/dts-resolution-mode.mjs).
const dts = spawnSync(process.execPath, ['scripts/dts-resolution-mode.mjs'], { cwd: root, stdio: 'inherit' });
if (dts.status !== 0) process.exit(dts.status ?? 1);
const web = spawnSync(process.execPath, ['scripts/build-web.mjs'], { cwd: root, stdio: 'inherit' });
process.exit(web.status ?? 1);
