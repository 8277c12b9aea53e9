import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
// A hang cap, not a timing assertion: PGlite's first open and the service's migrations are slow under load.
const CAP_MS = 240_000;

/**
 * docs/library.md as a reader follows it: every code block starting with `// file: <name>` is written
 * into a fresh app whose node_modules has `flowctl` (this checkout's built dist/, so `npm run build`
 * first) and the packages the snippets import themselves (hono, express, vitest: linked from this
 * checkout). Each file runs, and what it prints must be what its `console.log(...); // <text>` lines
 * say it prints. The packed tarball and its peers are test/e2e/package-install.test.ts's job.
 */
const DOC = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
const BLOCKS = [...DOC.matchAll(/```(?:js|ts)\n\/\/ file: (\S+)\n([\s\S]*?)```/g)].map((m) => ({ name: m[1] as string, code: m[2] as string }));
const LINKED = ['hono', 'express', 'vitest'];

/** The printed lines a block promises: the trailing comment of each console.log line, in order. */
function promised(code: string): string[] {
  return [...code.matchAll(/console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => (m[1] as string).trim());
}

describe('docs/library.md code blocks run against the built package', () => {
  let app: string;

  beforeAll(async () => {
    app = await mkdtemp(join(tmpdir(), 'flowctl-library-docs-'));
    await mkdir(join(app, 'node_modules'));
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'docs-app', private: true }));
    await symlink(ROOT, join(app, 'node_modules', 'flowctl'), 'dir');
    for (const name of LINKED) await symlink(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), 'dir');
    for (const block of BLOCKS) await writeFile(join(app, block.name), block.code);
  });
  afterAll(async () => {
    if (app) await rm(app, { recursive: true, force: true });
  });

  it('has the blocks the guide promises', () => {
    expect(BLOCKS.map((b) => b.name)).toEqual(
      expect.arrayContaining([
        'quickstart.mjs',
        'quickstart.cjs',
        'custom-tool.mjs',
        'storage-fs.mjs',
        'storage-sql.mjs',
        'hosted-node-http.mjs',
        'hosted-hono.mjs',
        'hosted-express.mjs',
        'my-storage.test.mjs',
      ]),
    );
    for (const block of BLOCKS.filter((b) => !b.name.endsWith('.test.mjs'))) expect(promised(block.code), block.name).not.toEqual([]);
  });

  it('lists, in its install command for the hosted service, every peer the built entries check', () => {
    // The peers each wrapped entry checks (scripts/peer-entries.mjs writes them into dist/).
    const peersOf = (file: string) => {
      const found = /checkPeers\([^,]+, (\{.*?\}), /.exec(readFileSync(join(ROOT, 'dist', file), 'utf8'));
      return found?.[1] ? Object.keys(JSON.parse(found[1]) as object) : [];
    };
    const needed = new Set([...peersOf('index.js'), ...peersOf('adapters/node-http.js'), ...peersOf('adapters/storage-sql.js')]);
    const command = /^npm install flowctl (.+)$/m.exec(DOC)?.[1]?.split(' ') ?? [];
    expect([...needed].filter((name) => !command.includes(name))).toEqual([]);
    expect(peersOf('adapters/storage-sql.js').sort()).toEqual(['@electric-sql/pglite', 'kysely', 'pg']);
  });

  const env = { ...process.env, DATABASE_URL: '' };
  for (const block of BLOCKS.filter((b) => !b.name.endsWith('.test.mjs'))) {
    it(`${block.name} prints what the guide says`, { timeout: CAP_MS }, async () => {
      const { stdout } = await exec(process.execPath, [block.name], { cwd: app, env, timeout: CAP_MS });
      expect(stdout.trim().split('\n')).toEqual(promised(block.code));
    });
  }

  it.runIf(process.env.TEST_DATABASE_URL)('storage-sql.mjs runs on PostgreSQL with DATABASE_URL', { timeout: CAP_MS }, async () => {
    const { stdout } = await exec(process.execPath, ['storage-sql.mjs'], {
      cwd: app,
      env: { ...env, DATABASE_URL: process.env.TEST_DATABASE_URL },
      timeout: CAP_MS,
    });
    expect(stdout.trim()).toBe('succeeded pong');
  });

  it('my-storage.test.mjs passes under vitest, as the guide runs it', { timeout: CAP_MS }, async () => {
    const { stdout } = await exec(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'my-storage.test.mjs', '--root', app], {
      cwd: app,
      env: { ...env, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      timeout: CAP_MS,
    });
    expect(stdout).toMatch(/Tests\s+\d+ passed/);
    expect(stdout).not.toMatch(/failed/);
  });
});
