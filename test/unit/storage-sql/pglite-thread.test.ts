import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlStorage } from '../../../adapters/storage-sql/index.js';
import { PGliteThread } from '../../../adapters/storage-sql/pglite-thread.js';
import { isConnectionError } from '../../../src/util/connection-errors.js';

/**
 * PGlite in a worker thread (adapters/storage-sql/pglite-thread.ts), the proxy's own promises: errors
 * keep their SQLSTATE fields, a transaction holds PGlite until it commits or rolls back, LISTEN
 * delivers, a thread that cannot open says why, and a program that never disposes its storage still
 * exits. The storage suites run on it too (backends.ts, "[pglite thread]").
 */

const repo = fileURLToPath(new URL('../../../', import.meta.url));

describe('PGlite thread', () => {
  let db: PGliteThread;
  beforeAll(async () => {
    db = new PGliteThread(undefined);
    await db.waitReady;
    await db.exec('create table t (id int primary key, v text not null)');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('answers queries with rows, fields and affected rows; parameters and types cross as they are', async () => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const r = await db.query('select $1::int + 1 as n, $2::bytea as b, $3::jsonb as j, now() as at', [41, bytes, JSON.stringify({ a: [1] })]);
    const row = r.rows[0] as { n: number; b: Uint8Array; j: unknown; at: Date };
    expect(row.n).toBe(42);
    expect([...row.b]).toEqual([...bytes]);
    expect(row.j).toEqual({ a: [1] });
    expect(row.at).toBeInstanceOf(Date);
    const ins = await db.query('insert into t values ($1, $2), ($3, $4)', [1, 'a', 2, 'b']);
    expect(ins.affectedRows).toBe(2);
    const many = await db.exec('select 1 as x; select 2 as y');
    expect(many.map((m) => m.rows)).toEqual([[{ x: 1 }], [{ y: 2 }]]);
  });

  it("keeps an error's SQLSTATE code, constraint and detail", async () => {
    const err = (await db.query('insert into t values (1, $1)', ['again']).catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('23505');
    expect(err.constraint).toBe('t_pkey');
    expect(String(err.detail)).toContain('(id)=(1)');
    expect(isConnectionError(err)).toBe(false);
    const div = (await db.query('select 1/0').catch((e: unknown) => e)) as Record<string, unknown>;
    expect(div.code).toBe('22012');
  });

  it('commits a transaction whose callback resolves; rolls back and rethrows when it throws', async () => {
    const value = await db.transaction(async (tx) => {
      await tx.query('insert into t values (10, $1)', ['kept']);
      return 'done';
    });
    expect(value).toBe('done');
    const mine = new Error('changed my mind');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into t values (11, $1)', ['dropped']);
        throw mine;
      }),
    ).rejects.toBe(mine);
    const rows = (await db.query('select id from t where id >= 10 order by id')).rows;
    expect(rows).toEqual([{ id: 10 }]);
  });

  it('a statement outside a transaction waits until it ends (one connection, as PGlite)', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let begun!: () => void;
    const inside = new Promise<void>((r) => (begun = r));
    const tx = db.transaction(async (t) => {
      await t.query('insert into t values (20, $1)', ['in tx']);
      begun();
      await held;
      order.push('commit');
    });
    await inside;
    const outside = db.query('select count(*)::int as n from t where id = 20').then((r) => {
      order.push('outside');
      return r.rows[0];
    });
    // The outside statement is sent while the transaction holds PGlite; the transaction ends after.
    await new Promise((r) => setImmediate(r));
    release();
    await tx;
    expect(await outside).toEqual({ n: 1 });
    expect(order).toEqual(['commit', 'outside']);
  });

  it('a failed statement inside a transaction fails the commit with its code', async () => {
    const err = (await db
      .transaction(async (tx) => {
        await tx.query('select 1/0').catch(() => {});
      })
      .catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('25P02');
  });

  it('delivers NOTIFY to a listener until it unlistens', async () => {
    const got: string[] = [];
    const unlisten = await db.listen('flowctl_test', (payload) => got.push(payload));
    await db.query("select pg_notify('flowctl_test', 'one')");
    await unlisten();
    await db.query("select pg_notify('flowctl_test', 'two')");
    await db.query('select 1');
    expect(got).toEqual(['one']);
  });

  it('refuses a parameter structured clone cannot send, and stays usable', async () => {
    await expect(db.query('select $1', [() => 1])).rejects.toThrow(/could not be cloned/);
    expect((await db.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('PGlite thread: opening and ending', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'flowctl-pglite-thread-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a data folder that cannot be opened fails waitReady and every call', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a folder');
    const db = new PGliteThread(file);
    await expect(db.waitReady).rejects.toThrow();
    await expect(db.query('select 1')).rejects.toThrow();
    await db.close().catch(() => {});
  });

  it('keeps a data folder across close and reopen; a closed thread is a lost connection', async () => {
    const dataDir = join(dir, 'db');
    const first = createSqlStorage({ pglite: { dataDir } });
    await first.init();
    await first.artifacts?.put(`sha256:${'a'.repeat(64)}`, new Uint8Array([1, 2, 3]), 'application/octet-stream');
    await first.dispose();
    const again = new PGliteThread(dataDir);
    await again.waitReady;
    const kept = await again.query('select length(bytes) as n from artifacts');
    expect(kept.rows).toEqual([{ n: 3 }]);
    await again.close();
    const err = await again.query('select 1').catch((e: unknown) => e);
    expect(isConnectionError(err)).toBe(true);
  });

  it('a program that never disposes its storage still exits when its work is done', async () => {
    const script = join(dir, 'forgets.mjs');
    await writeFile(
      script,
      `import { createSqlStorage } from ${JSON.stringify(join(repo, 'dist/adapters/storage-sql.js'))};
const storage = createSqlStorage({ pglite: {} });
await storage.init();
const digest = 'sha256:' + 'b'.repeat(64);
await storage.artifacts.put(digest, new Uint8Array([7]), 'application/octet-stream');
const got = await storage.artifacts.get(digest);
process.stdout.write(JSON.stringify([...got.bytes]));
`,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual([7]);
  });
});
