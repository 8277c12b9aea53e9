import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

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

export default function setup(project: TestProject): () => Promise<void> {
  buildIfStale();
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
  const sources = Math.max(...['src', 'adapters', 'examples'].map((d) => newestMtime(join(root, d))));
  if (existsSync(cli) && statSync(cli).mtimeMs >= sources) return;
  const r = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  // A broken build fails the tests that spawn the CLI, with the build's own errors printed above;
  // unit tests still run.
  if (r.status !== 0) process.stderr.write('[test] build failed: tests that spawn the CLI will fail\n');
}
