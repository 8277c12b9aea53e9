import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Build dist/ once before the tests when any source is newer than the built CLI. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (p.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  const root = resolve(import.meta.dirname, '..');
  const cli = join(root, 'dist/cli/cli.js');
  const sources = Math.max(...['src', 'adapters', 'examples'].map((d) => newestMtime(join(root, d))));
  if (existsSync(cli) && statSync(cli).mtimeMs >= sources) return;
  const r = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  // A broken build fails the tests that spawn the CLI, with the build's own errors printed above;
  // unit tests still run.
  if (r.status !== 0) process.stderr.write('[test] build failed: tests that spawn the CLI will fail\n');
}
