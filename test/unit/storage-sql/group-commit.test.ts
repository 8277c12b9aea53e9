import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createSqlStorage, type SqlStorage } from '../../../adapters/storage-sql/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { isFlowError } from '../../../src/errors.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../helpers/postgres.js';
import { makeSpec, testTools } from '../engine/helpers.js';
import { describeSqlBackends } from './backends.js';
import { chainProblems, journal, journalEntry, runRecord } from './fixtures.js';

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    if (!isFlowError(err)) throw err;
    return err.code;
  }
}

describeSqlBackends('sql storage: group commit', (backend) => {
  for (const options of [{}, { groupCommit: false }, { preparedStatements: false }]) {
    it(`appends of many runs made at once each get their own outcome (${JSON.stringify(options)})`, async () => {
      const storage = await backend.create(options);
      const runs = Array.from({ length: 8 }, () => runRecord());
      await Promise.all(runs.map((r) => storage.runs.create(r)));
      const entries = journal(3);
      for (const r of runs.slice(0, 4)) await storage.journal.append(r.id, entries[0]!);
      // All in one tick, so (with group commit) in as few statements as the rules allow:
      const results = await Promise.all([
        // the next entry of runs 0-2: stored
        ...runs.slice(0, 3).map((r) => outcome(storage.journal.append(r.id, entries[1]!))),
        // run 3 at seq 2 while it has 1 entry: journal_conflict with the length
        outcome(storage.journal.append(runs[3]!.id, entries[2]!)),
        // an unknown run: not_found
        outcome(storage.journal.append('00000000-0000-4000-8000-00000000abcd', entries[0]!)),
        // two writers of run 4's first entry: exactly one wins
        outcome(storage.journal.append(runs[4]!.id, entries[0]!)),
        outcome(storage.journal.append(runs[4]!.id, journalEntry(0, null, false, { flow_name: 'rival' }))),
      ]);
      expect(results.slice(0, 5)).toEqual(['ok', 'ok', 'ok', 'journal_conflict', 'not_found']);
      expect(results.slice(5).sort()).toEqual(['journal_conflict', 'ok']);
      const conflict = await storage.journal.append(runs[3]!.id, entries[2]!).catch((err: unknown) => err);
      expect(conflict).toMatchObject({ code: 'journal_conflict', data: { run_id: runs[3]!.id, seq: 2, length: 1 } });
      for (const r of runs.slice(0, 3)) {
        const back = await storage.journal.read(r.id);
        expect(back).toStrictEqual(entries.slice(0, 2));
        expect(chainProblems(back)).toEqual([]);
      }
      expect(await storage.journal.read(runs[4]!.id)).toHaveLength(1);
    });
  }

  it('a run patch goes with its append: both or neither', async () => {
    const storage = await backend.create();
    const run = runRecord({ status: 'pending' });
    await storage.runs.create(run);
    const [first, last] = [journalEntry(0, null, false), journalEntry(1, null, true)];
    await storage.journal.append(run.id, first, undefined, { status: 'running' });
    expect((await storage.runs.get(run.id))?.status).toBe('running');
    // A refused append (wrong seq) leaves the record as it was.
    expect(await outcome(storage.journal.append(run.id, journalEntry(5, null, true), undefined, { status: 'failed' }))).toBe('journal_conflict');
    expect((await storage.runs.get(run.id))?.status).toBe('running');
    const finished_at = '2026-11-05T10:00:01.000Z';
    await storage.journal.append(run.id, last, undefined, { status: 'succeeded', finished_at, output: null, error: undefined });
    const record = await storage.runs.get(run.id);
    expect(record).toMatchObject({ status: 'succeeded', finished_at, output: null });
    expect(record && 'error' in record).toBe(false);
  });

  it('a batch the database refuses as a whole is retried item by item: only the bad item fails, nothing is half-applied', async () => {
    const storage = await backend.create();
    const runs = Array.from({ length: 5 }, () => runRecord({ status: 'pending' }));
    await Promise.all(runs.map((r) => storage.runs.create(r)));
    const first = journalEntry(0, null, false);
    const results = await Promise.all(
      // Run 2's patch breaks the status check: the whole statement fails, then each append goes alone.
      runs.map((r, i) => outcome(storage.journal.append(r.id, first, undefined, { status: i === 2 ? ('bogus' as 'running') : 'running' }))),
    );
    expect(results).toEqual(['ok', 'ok', 'invalid_record', 'ok', 'ok']);
    for (const [i, r] of runs.entries()) {
      expect((await storage.runs.get(r.id))?.status).toBe(i === 2 ? 'pending' : 'running');
      expect(await storage.journal.read(r.id)).toHaveLength(i === 2 ? 0 : 1);
    }
  });

  it('creates made at once: a taken id is run_exists, an invalid one invalid_record, the others are stored', async () => {
    const storage = await backend.create();
    const taken = runRecord();
    await storage.runs.create(taken);
    const fresh = Array.from({ length: 4 }, (_, i) => runRecord({ output: i === 0 ? null : { i }, inputs: { s: 'a\u0000b' } }));
    const results = await Promise.all([
      ...fresh.map((r) => outcome(storage.runs.create(r))),
      outcome(storage.runs.create({ ...taken, flow_name: 'again' })),
      outcome(storage.runs.create(runRecord({ id: 'not-a-uuid' }))),
    ]);
    expect(results).toEqual(['ok', 'ok', 'ok', 'ok', 'run_exists', 'invalid_record']);
    for (const r of fresh) expect(await storage.runs.get(r.id)).toStrictEqual(r);
    expect((await storage.runs.get(taken.id))?.flow_name).toBe(taken.flow_name);
  });
});

/** A pg pool that counts the statements sent through it, by kind. */
function countingPool(url: string): { pool: pg.Pool; counts: Map<string, number>; reset(): void; total(): number } {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const counts = new Map<string, number>();
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
      const kind = /^\s*with (input|ins) as/.test(text)
        ? 'journal append'
        : /^\s*insert into \S*runs/.test(text)
          ? 'run create'
          : /^\s*update \S*runs/.test(text)
            ? 'run update'
            : /^\s*insert into \S*specs/.test(text)
              ? 'spec put'
              : 'other';
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      return query(...args);
    };
  });
  return { pool, counts, reset: () => counts.clear(), total: () => [...counts.values()].reduce((a, b) => a + b, 0) };
}

describePostgres('sql storage: statements per run [postgres]', (url) => {
  const schemas: string[] = [];
  const open: { storage: SqlStorage; pool: pg.Pool }[] = [];
  afterEach(async () => {
    for (const { storage, pool } of open.splice(0)) {
      await storage.dispose();
      await pool.end();
    }
  });
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });

  async function setup() {
    const counting = countingPool(url);
    const schema = uniqueSchemaName();
    schemas.push(schema);
    const storage = createSqlStorage({ pool: counting.pool, schema });
    open.push({ storage, pool: counting.pool });
    const { registry } = testTools();
    const spec = makeSpec(
      registry,
      [
        { id: 'a', tool: 'test/echo', args: { s: '${inputs.word}' } },
        { id: 'b', tool: 'test/echo', args: { s: '${steps.a.output.s}' } },
        { id: 'c', tool: 'test/echo', args: { s: '${steps.b.output.s}' } },
      ],
      { inputs: { word: { type: 'string' } }, output: { s: '${steps.c.output.s}' } },
    );
    const engine = createEngine({ storage, tools: registry, sweepMs: 0 });
    await engine.run({ spec }, { word: 'warm' }); // migrations, the spec's one insert
    counting.reset();
    return { ...counting, storage, engine, spec };
  }

  it('a 3-step run one at a time: its record and its 8 entries, 9 statements; the status rides on run_started and run_finished', async () => {
    const { engine, spec, storage, counts, total } = await setup();
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push(await engine.run({ spec }, { word: `w${i}` }));
    expect(Object.fromEntries(counts)).toEqual({ 'run create': 5, 'journal append': 40 });
    expect(total()).toBe(5 * 9);
    for (const run of runs) {
      expect(run.status).toBe('succeeded');
      const record = await storage.runs.get(run.id);
      expect(record).toMatchObject({ status: 'succeeded', finished_at: run.finished_at, output: run.output });
      expect(await storage.journal.read(run.id)).toStrictEqual(run.journal);
    }
  });

  it('concurrent runs share statements: 24 at once take under half the statements they take one at a time', async () => {
    const { engine, spec, storage, total } = await setup();
    const runs = await Promise.all(Array.from({ length: 24 }, (_, i) => engine.run({ spec }, { word: `c${i}` })));
    expect(total()).toBeLessThan((24 * 9) / 2);
    for (const run of runs) {
      expect(run.status).toBe('succeeded');
      const stored = await storage.journal.read(run.id);
      expect(stored).toHaveLength(8);
      expect(chainProblems(stored)).toEqual([]);
      expect((await storage.runs.get(run.id))?.status).toBe('succeeded');
    }
  });
});
