import { PGlite } from '@electric-sql/pglite';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { describeRunLifecycleConformance } from '../../adapters/testing/index.js';
import type { Storage } from '../../src/ports/storage.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';

// The run-lifecycle suite (flowctl/testing) on every store engine instances can share: a PGlite
// instance opened once (two storages over it, as one process would), a PGlite data folder, an fs
// directory, and Postgres with a pool per storage. Memory storage is one process's own and is not shared.

const opened: Storage[] = [];
const track = <S extends Storage>(s: S): S => (opened.push(s), s);
let pglite: Promise<PGlite> | undefined;
const dirs: string[] = [];
afterAll(async () => {
  for (const s of opened) await s.dispose?.();
  await (await pglite)?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

{
  const schema = uniqueSchemaName();
  describeRunLifecycleConformance({ name: 'PGlite', open: async () => track(createSqlStorage({ pglite: await (pglite ??= PGlite.create()), schema })) });
}

{
  let dir: Promise<string> | undefined;
  describeRunLifecycleConformance({
    name: 'fs',
    open: async () => {
      dir ??= mkdtemp(join(tmpdir(), 'flowctl-lifecycle-fs-')).then((d) => (dirs.push(d), d));
      return track(createFsStorage({ dir: await dir }));
    },
  });
}

describePostgres('Postgres', (url) => {
  const schema = uniqueSchemaName();
  afterAll(async () => {
    await dropSchema(url, schema);
  });
  describeRunLifecycleConformance({ name: 'Postgres', open: async () => track(createSqlStorage({ databaseUrl: url, schema, poolSize: 2 })) });
});
