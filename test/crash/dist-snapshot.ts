import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');
const NEEDED = ['dist/index.js', 'dist/adapters/storage-fs.js', 'dist/adapters/secrets-env.js', 'dist/cli/cli.js'];
const run = promisify(execFile);

/**
 * A private copy of the built package for child processes (FLOWCTL_DIST), so a rebuild of the shared
 * dist/ by someone else while a test runs (tsup cleans dist/ first) cannot break the children.
 * The copy has the package's layout (dist/, bin/, package.json, node_modules linked), so `bin` runs
 * the CLI from it. Waits, bounded, for a complete build and checks that the copy imports.
 */
export async function snapshotDist(): Promise<{ dist: string; bin: string; cleanup: () => Promise<void> }> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-dist-'));
    try {
      for (const f of NEEDED) await stat(join(ROOT, f));
      await cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
      await cp(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
      await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
      await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
      const dist = join(dir, 'dist');
      const probe = NEEDED.map((f) => `await import(${JSON.stringify(join(dir, f))});`).join('');
      await run(process.execPath, ['--input-type=module', '-e', probe], { timeout: 60_000 });
      return { dist, bin: join(dir, 'bin', 'flowctl.mjs'), cleanup: () => rm(dir, { recursive: true, force: true }) };
    } catch {
      await rm(dir, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  throw new Error('[test] no complete build in dist/ to snapshot');
}
