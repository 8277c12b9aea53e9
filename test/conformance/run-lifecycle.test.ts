import { PGlite } from '@electric-sql/pglite';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import { createMemoryStorage } from '../../adapters/storage-memory/index.js';
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { describeRunLifecycleConformance } from '../../testing/index.js';
import type { Storage } from '../../src/ports/storage.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';

// The run-lifecycle suite (flowctl/testing) on every store engine instances can share: one memory
// storage (two engine instances in one process), a PGlite instance in memory and one on a data
// folder (two storages over it, as one process would: the folder lock allows one process), an fs
// directory, and Postgres with a pool per storage.

const opened: Storage[] = [];
const track = <S extends Storage>(s: S): S => (opened.push(s), s);
let pglite: Promise<PGlite> | undefined;
let filePglite: Promise<PGlite> | undefined;
const dirs: string[] = [];
afterAll(async () => {
  for (const s of opened) await s.dispose?.();
  await (await pglite)?.close();
  await (await filePglite)?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

{
  // Memory storage belongs to one process: its watch sees the appends made through the instance,
  // so the two engines share the one instance.
  const shared = createMemoryStorage();
  describeRunLifecycleConformance({ name: 'memory', open: async () => shared });
}

{
  const schema = uniqueSchemaName();
  describeRunLifecycleConformance({ name: 'PGlite', open: async () => track(createSqlStorage({ pglite: await (pglite ??= PGlite.create()), schema })) });
}

{
  // A PGlite data folder (durable), opened once; each storage over it has its own kysely.
  const openFile = () =>
    (filePglite ??= mkdtemp(join(tmpdir(), 'flowctl-lifecycle-pglite-')).then((d) => {
      dirs.push(d);
      return PGlite.create(join(d, 'data'));
    }));
  describeRunLifecycleConformance({ name: 'PGlite data folder', open: async () => track(createSqlStorage({ pglite: await openFile() })) });
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
