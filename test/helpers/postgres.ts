import { randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { build } from 'tsup';
import { describe, inject, it } from 'vitest';

/**
 * Postgres for tests, through one variable: TEST_DATABASE_URL (on these machines
 * postgres://postgres@127.0.0.1:5432/test). Unset outside CI: Postgres tests are skipped with a
 * printed reason. Unset in CI: they fail, because CI must cover them.
 */
export const TEST_DATABASE_URL: string | undefined = process.env.TEST_DATABASE_URL || undefined;

export function inCi(env: Record<string, string | undefined> = process.env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/**
 * `describe` for tests that need Postgres: the body gets the URL. Without a URL it registers a
 * skipped suite and prints why, or (in CI) a failing test.
 */
export function describePostgres(title: string, body: (url: string) => void): void {
  if (TEST_DATABASE_URL) {
    describe(title, () => body(TEST_DATABASE_URL as string));
  } else if (inCi()) {
    describe(title, () => {
      it('needs TEST_DATABASE_URL', () => {
        throw new Error('CI is set but TEST_DATABASE_URL is not: the Postgres tests must run in CI (see .ci/run)');
      });
    });
  } else {
    process.stderr.write(`[test] skipping "${title}": TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)\n`);
    describe.skip(title, () => body(''));
  }
}

/** A fresh, unique schema name for one test run: `flowctl_t_<pid>_<hex>`. */
export function uniqueSchemaName(prefix = 'flowctl_t'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/**
 * Drop a test schema and everything in it, once every test file of the run has finished (the drop is
 * noted in the run's ledger, test/global-setup.ts drops them all at teardown). Dropping at once races
 * with other test files: kysely's Migrator (every SQL storage's init) lists the tables of all schemas
 * and checks each schema's privileges by name, and a schema dropped between the two fails that init
 * with `schema "..." does not exist`. Outside a vitest run (no ledger) the drop is immediate.
 */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const ledger = schemaLedger();
  if (ledger) {
    appendFileSync(join(ledger, `${process.pid}.tsv`), `${url}\t${schema}\n`);
    return;
  }
  await dropSchemaNow(url, schema);
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Directory where test files note the schemas to drop at the end of the run. */
    schemaLedger: string;
  }
}

function schemaLedger(): string | undefined {
  try {
    return inject('schemaLedger') || undefined;
  } catch {
    return undefined; // not inside a vitest worker
  }
}

/** Drop a schema now. */
export async function dropSchemaNow(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema.replaceAll('"', '""')}" cascade`);
  } finally {
    await client.end();
  }
}

/** Drop every schema noted in `ledger` (test/global-setup.ts, at the end of the run), then the ledger itself. */
export async function dropLedgerSchemas(ledger: string): Promise<void> {
  const noted = new Set<string>();
  for (const file of readdirSync(ledger)) {
    for (const line of readFileSync(join(ledger, file), 'utf8').split('\n')) if (line) noted.add(line);
  }
  const failures: string[] = [];
  for (const line of noted) {
    const [url, schema] = line.split('\t') as [string, string];
    await dropSchemaNow(url, schema).catch((err: unknown) => failures.push(`${schema}: ${err instanceof Error ? err.message : String(err)}`));
  }
  rmSync(ledger, { recursive: true, force: true });
  if (failures.length > 0) process.stderr.write(`[test] could not drop ${failures.length} test schema(s): ${failures.join('; ')}\n`);
}

/** Run one SQL statement on the test database (for independent reads and for setting up odd states). */
export async function pgQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Bundle a child-process script (TypeScript that imports the sources with `@root/...` paths, e.g.
 * `@root/adapters/storage-sql/index.ts`) into node_modules/.cache, so SQL tests spawn processes that
 * run the current sources. The shared dist/ is not used: other builds clean it at any moment.
 * Packages stay external and resolve from the repo's node_modules. Returns the path to run with node.
 */
export async function bundleChildScript(name: string, source: string): Promise<string> {
  const outDir = join(ROOT, 'node_modules/.cache/flowctl-sql-tests');
  const id = `${name}-${process.pid}-${randomBytes(3).toString('hex')}`;
  await mkdir(outDir, { recursive: true });
  const entry = join(outDir, `${id}.src.ts`);
  await writeFile(entry, source.replaceAll("'@root/", `'${ROOT}/`));
  try {
    await build({
      config: false,
      entry: { [id]: entry },
      outDir,
      format: ['esm'],
      platform: 'node',
      target: 'node22',
      bundle: true,
      splitting: false,
      dts: false,
      clean: false,
      silent: true,
      external: [/^[^./]/],
      outExtension: () => ({ js: '.mjs' }),
    });
  } finally {
    await rm(entry, { force: true });
  }
  return join(outDir, `${id}.mjs`);
}
