import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

/** Build dist/ once before the tests when any source is newer than the built CLI. */
function newestMtime(dir: string, ext: RegExp = /\.ts$/): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p, ext));
    else if (ext.test(p)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

export default function setup(project: TestProject): () => Promise<void> {
  buildIfStale();
  buildWebIfStale();
  // Test schemas on Postgres are dropped when the whole run is over, never while other test files
  // may be initialising storage (see dropSchema in test/helpers/postgres.ts).
  const ledger = mkdtempSync(join(tmpdir(), 'flowctl-test-schemas-'));
  project.provide('schemaLedger', ledger);
  return async () => {
    const { dropLedgerSchemas } = await import('./helpers/postgres.js');
    await dropLedgerSchemas(ledger);
  };
}

function buildIfStale(): void {
  const root = resolve(import.meta.dirname, '..');
  const cli = join(root, 'dist/cli/cli.js');
  const sources = Math.max(...['src', 'adapters', 'cli', 'testing', 'examples'].map((d) => newestMtime(join(root, d))));
  if (existsSync(cli) && statSync(cli).mtimeMs >= sources) return;
  const r = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  // A broken build fails the tests that spawn the CLI, with the build's own errors printed above;
  // unit tests still run.
  if (r.status !== 0) process.stderr.write('[test] build failed: tests that spawn the CLI will fail\n');
}

/** The web app (web/ -> dist/web) alone, when its sources are newer than the built index.html. */
function buildWebIfStale(): void {
  const root = resolve(import.meta.dirname, '..');
  const index = join(root, 'dist/web/index.html');
  const sources = newestMtime(join(root, 'web'), /\.(tsx?|css|html|svg)$/);
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const r = spawnSync(process.execPath, [join(root, 'scripts/build-web.mjs')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.stderr.write('[test] web app build failed: tests of the web app will fail\n');
}
