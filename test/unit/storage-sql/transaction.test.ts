import { PGlite } from '@electric-sql/pglite';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsStorage } from '../../../adapters/storage-fs/index.js';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createSqlStorage, type SqlStorage } from '../../../adapters/storage-sql/index.js';
import { conformanceId, sampleJournal, sampleRun } from '../../../testing/conformance-fixtures.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../helpers/postgres.js';

// SqlStorage.transaction(fn) (docs/storage-sql.md, "Transactions") on both drivers: all or nothing,
// invisible to others until the commit, and clear errors for the misuses that would otherwise
// deadlock (PGlite has one connection) or silently run outside the transaction.

const AT = '2026-01-01T00:00:00.000Z';

class Boom extends Error {}

function describeTransactions(name: string, open: () => Promise<{ storage: SqlStorage; other: SqlStorage }>) {
  describe(`SqlStorage.transaction: ${name}`, () => {
    it('commits a run record and its journal together, and returns what fn returns', async () => {
      const { storage, other } = await open();
      const id = conformanceId(101);
      const entries = sampleJournal(3);
      const out = await storage.transaction(async (tx) => {
        await tx.runs.create(sampleRun(id, AT));
        for (const e of entries) await tx.journal.append(id, e);
        return 'done';
      });
      expect(out).toBe('done');
      expect((await other.runs.get(id))?.id).toBe(id);
      expect(await other.journal.read(id)).toHaveLength(3);
    });

    it("rolls back every write when fn throws, and rethrows fn's own error", async () => {
      const { storage, other } = await open();
      const id = conformanceId(102);
      const err = await storage
        .transaction(async (tx) => {
          await tx.runs.create(sampleRun(id, AT));
          await tx.journal.append(id, sampleJournal(1)[0]!);
          throw new Boom('fn failed');
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Boom);
      expect(await storage.runs.get(id)).toBeUndefined();
      expect(await other.journal.read(id)).toEqual([]);
    });

    it('a store error inside fn rolls back the earlier writes (a duplicate run id)', async () => {
      const { storage } = await open();
      const first = conformanceId(103);
      const dup = conformanceId(104);
      await storage.runs.create(sampleRun(dup, AT));
      const err = await storage
        .transaction(async (tx) => {
          await tx.runs.create(sampleRun(first, AT));
          await tx.runs.create(sampleRun(dup, AT));
        })
        .then(
          () => undefined,
          (e: unknown) => e as { code?: string },
        );
      expect(err?.code).toBeTruthy();
      expect(await storage.runs.get(first)).toBeUndefined();
    });

    it("keeps a consumer's own table (through tx.db) in the same transaction", async () => {
      const { storage } = await open();
      await storage.init();
      const table = storage.schema === undefined ? sql.id('tx_consumer') : sql.id(storage.schema, 'tx_consumer');
      await sql`create table if not exists ${table} (k text primary key)`.execute(storage.db);
      const id = conformanceId(105);
      await storage
        .transaction(async (tx) => {
          await sql`insert into ${table} (k) values ('rolled-back')`.execute(tx.db);
          await tx.runs.create(sampleRun(id, AT));
          throw new Boom('undo both');
        })
        .catch(() => {});
      const rows = await sql<{ k: string }>`select k from ${table}`.execute(storage.db);
      expect(rows.rows).toEqual([]);
      expect(await storage.runs.get(id)).toBeUndefined();
    });

    it('refuses calls on the storage itself from inside fn, nesting, a view used after fn, and watch in a transaction', async () => {
      const { storage } = await open();
      let kept: Parameters<Parameters<SqlStorage['transaction']>[0]>[0] | undefined;
      const inside = await storage
        .transaction(async (tx) => {
          kept = tx;
          await tx.runs.get(conformanceId(106));
          return storage.runs.get(conformanceId(106));
        })
        .then(
          () => undefined,
          (e: unknown) => e as { code?: string },
        );
      expect(inside?.code).toBe('transaction_in_progress');
      const nested = await storage.transaction((tx) => tx.transaction()).catch((e: unknown) => e as { code?: string });
      expect(nested.code).toBe('nested_transaction');
      const after = await kept!.runs.get(conformanceId(106)).catch((e: unknown) => e as { code?: string });
      expect((after as { code?: string }).code).toBe('transaction_closed');
      const watched = await storage
        .transaction(async (tx) => {
          for await (const _ of tx.journal.watch(conformanceId(106))) break;
        })
        .then(
          () => undefined,
          (e: unknown) => e as { code?: string },
        );
      expect(watched?.code).toBe('unsupported_in_transaction');
      // The storage is usable afterwards.
      expect(await storage.runs.get(conformanceId(106))).toBeUndefined();
    });

    it('a reader outside sees nothing of an open transaction; calls from elsewhere complete', async () => {
      const { storage, other } = await open();
      const id = conformanceId(107);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const wrote = new Promise<void>((r) => (written = r));
      const tx = storage.transaction(async (t) => {
        await t.runs.create(sampleRun(id, AT));
        written();
        await gate;
      });
      await wrote;
      // Outside fn's async context: on Postgres another connection answers at once without the
      // uncommitted row; on PGlite (one connection) the read queues behind the transaction.
      const seen = other.runs.get(id);
      const outside = storage.runs.list();
      if (storage.driver === 'postgres') expect(await seen).toBeUndefined();
      release();
      await tx;
      if (storage.driver === 'pglite') {
        expect((await seen)?.id).toBe(id);
        expect((await outside).map((r) => r.id)).toContain(id);
      } else {
        expect((await outside).map((r) => r.id)).not.toContain(id);
        expect((await other.runs.get(id))?.id).toBe(id);
      }
    });

    it('a read from another storage while a transaction is open never sees its writes, also when it rolls back', async () => {
      const { storage, other } = await open();
      await other.init();
      const id = conformanceId(108);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const wrote = new Promise<void>((r) => (written = r));
      const tx = storage.transaction(async (t) => {
        await t.runs.create(sampleRun(id, AT));
        written();
        await gate;
        throw new Boom('roll it back');
      });
      await wrote;
      // On PGlite the other storage's query waits for the transaction (it must not run inside it,
      // where it would see the row that is then rolled back); on Postgres it reads committed state.
      const seen = other.runs.get(id);
      release();
      await expect(tx).rejects.toBeInstanceOf(Boom);
      expect(await seen).toBeUndefined();
      expect(await other.runs.get(id)).toBeUndefined();
    });

    it('two transactions appending the same seq: the second fails journal_conflict and keeps none of its writes', async () => {
      const { storage } = await open();
      const shared = conformanceId(300);
      const onlyB = conformanceId(301);
      await storage.runs.create(sampleRun(shared, AT));
      let appended!: () => void;
      const aAppended = new Promise<void>((r) => (appended = r));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const a = storage.transaction(async (tx) => {
        await tx.journal.append(shared, sampleJournal(1)[0]!);
        appended();
        await gate;
        return 'a';
      });
      await aAppended;
      // B begins while A holds its append uncommitted (Postgres: B's insert waits for A's commit;
      // PGlite: B waits for the connection). Either way B finds seq 0 taken.
      const b = storage.transaction(async (tx) => {
        await tx.runs.create(sampleRun(onlyB, AT));
        await tx.journal.append(shared, sampleJournal(1)[0]!);
        return 'b';
      });
      const bOutcome = b.then(
        () => 'committed',
        (err: unknown) => (err as { code?: string }).code,
      );
      release();
      expect(await a).toBe('a');
      expect(await bOutcome).toBe('journal_conflict');
      expect(await storage.journal.read(shared)).toHaveLength(1);
      expect(await storage.runs.get(onlyB)).toBeUndefined();
    });

    if (name === 'PGlite') {
      it('PGlite: concurrent transactions are serialised in the order they began, never interleaved', async () => {
        const { storage } = await open();
        const log: string[] = [];
        let began!: () => void;
        const firstBegan = new Promise<void>((r) => (began = r));
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        const body = (i: number) => async (tx: Parameters<Parameters<SqlStorage['transaction']>[0]>[0]) => {
          log.push(`${i} begin`);
          if (i === 0) {
            began();
            await gate;
          }
          // Several round trips: an interleaved transaction would get its turn between them.
          for (let k = 0; k < 3; k++) await tx.runs.create(sampleRun(conformanceId(400 + i * 10 + k), AT));
          log.push(`${i} end`);
        };
        const first = storage.transaction(body(0));
        await firstBegan;
        const rest = [1, 2, 3].map((i) => storage.transaction(body(i)));
        // Let the later ones reach the connection's queue before the first goes on.
        for (let k = 0; k < 20; k++) await new Promise((r) => setImmediate(r));
        expect(log).toEqual(['0 begin']);
        release();
        await Promise.all([first, ...rest]);
        expect(log).toEqual(['0 begin', '0 end', '1 begin', '1 end', '2 begin', '2 end', '3 begin', '3 end']);
      });
    }

    it('many concurrent transactions each commit or roll back whole', async () => {
      const { storage } = await open();
      const n = 12;
      const results = await Promise.allSettled(
        Array.from({ length: n }, (_, i) =>
          storage.transaction(async (tx) => {
            const id = conformanceId(200 + i);
            await tx.runs.create(sampleRun(id, AT));
            await tx.journal.append(id, sampleJournal(1)[0]!);
            if (i % 3 === 0) throw new Boom(`tx ${i}`);
          }),
        ),
      );
      for (let i = 0; i < n; i++) {
        const id = conformanceId(200 + i);
        const run = await storage.runs.get(id);
        const journal = await storage.journal.read(id);
        if (i % 3 === 0) {
          expect(results[i]!.status).toBe('rejected');
          expect(run).toBeUndefined();
          expect(journal).toEqual([]);
        } else {
          expect(results[i]!.status).toBe('fulfilled');
          expect(run?.id).toBe(id);
          expect(journal).toHaveLength(1);
        }
      }
    });
  });
}

let pglite: Promise<PGlite> | undefined;
const opened: SqlStorage[] = [];
afterAll(async () => {
  for (const s of opened) await s.dispose();
  await (await pglite)?.close();
});

describeTransactions('PGlite', async () => {
  const schema = uniqueSchemaName();
  // `other` is a second storage (its own kysely) over the same PGlite instance, as two parts of one
  // process would have.
  const storage = createSqlStorage({ pglite: await (pglite ??= PGlite.create()), schema });
  const other = createSqlStorage({ pglite: await pglite, schema });
  opened.push(storage, other);
  await storage.init();
  return { storage, other };
});

describePostgres('Postgres', (url) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  describeTransactions('Postgres', async () => {
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const storage = createSqlStorage({ databaseUrl: url, schema, poolSize: 2 });
    const other = createSqlStorage({ databaseUrl: url, schema, poolSize: 2 });
    opened.push(storage, other);
    await storage.init();
    return { storage, other };
  });
});

// Memory and fs storage have no transaction (docs/storage-sql.md, "Transactions"; docs/journal.md,
// "Storage"): no method at all, rather than one that would pretend to be atomic, so code that needs
// several writes to agree can tell by `'transaction' in storage` and refuse to run there.
describe('transaction on memory and fs storage', () => {
  it('is absent: no method that would look atomic and is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-tx-fs-'));
    try {
      for (const storage of [createMemoryStorage(), createFsStorage({ dir })]) {
        expect('transaction' in storage, storage.name).toBe(false);
        await storage.dispose?.();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
