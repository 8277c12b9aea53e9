import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { SqlStorageOptions } from '../../adapters/storage-sql/index.js';
import { dropSchema, pgQuery, TEST_DATABASE_URL, uniqueSchemaName } from './postgres.js';

/**
 * The database of the hosted secret canary: Postgres (a schema of its own) when TEST_DATABASE_URL is
 * set, else PGlite in a folder. Either is searched afterwards: `logicalDump` reads every row, and the
 * PGlite folder's files are read as bytes (`filesUnder`).
 */
export interface Stack {
  database: SqlStorageOptions;
  pglite?: PGlite;
  dataDir?: string;
  schema?: string;
}

export async function startStack(): Promise<Stack> {
  if (TEST_DATABASE_URL) {
    const schema = uniqueSchemaName('svc_canary');
    return { database: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 }, schema };
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'flowctl-canary-'));
  // An instance the test opens (and the assemblies leave open): the files are searched after they close.
  const pglite = await PGlite.create(join(dataDir, 'db'));
  return { database: { pglite }, pglite, dataDir };
}

/** Closes the PGlite instance the test opened and removes its folder, or drops the Postgres schemas. */
export async function closeStack(stack: Stack | undefined): Promise<void> {
  await stack?.pglite?.close().catch(() => undefined);
  if (stack?.dataDir) await rm(stack.dataDir, { recursive: true, force: true });
  if (stack?.schema && TEST_DATABASE_URL) {
    await dropSchema(TEST_DATABASE_URL, stack.schema);
    await dropSchema(TEST_DATABASE_URL, `${stack.schema}_pgboss`);
  }
}

/** Rows of every table of the service's database, one JSON text per row (no compression, no COPY escapes). */
export async function logicalDump(stack: Stack): Promise<string> {
  const query = async (sql: string): Promise<Record<string, unknown>[]> =>
    stack.pglite ? ((await stack.pglite.query(sql)).rows as Record<string, unknown>[]) : await pgQuery(TEST_DATABASE_URL!, sql);
  const schemas = stack.schema ? [stack.schema, `${stack.schema}_pgboss`] : undefined;
  const tables = await query(
    `select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE' and ${
      schemas ? `table_schema in (${schemas.map((s) => `'${s}'`).join(', ')})` : `table_schema not in ('pg_catalog', 'information_schema')`
    } order by 1, 2`,
  );
  const out: string[] = [];
  for (const t of tables) {
    const name = `"${String(t.table_schema)}"."${String(t.table_name)}"`;
    for (const row of await query(`select row_to_json(t)::text as j from ${name} t`)) out.push(`${name} ${String(row.j)}`);
  }
  return out.join('\n');
}

export async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true, recursive: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
