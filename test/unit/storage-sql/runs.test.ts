import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import { describeSqlBackends } from './backends.js';
import { runRecord } from './fixtures.js';

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (!isFlowError(err)) throw err;
    return err.code;
  }
}

describeSqlBackends('sql storage: runs', (backend) => {
  it('round-trips a run record exactly, optional fields absent or present', async () => {
    const storage = await backend.create();
    const bare = runRecord();
    const full = runRecord({
      status: 'failed',
      started_at: '2026-11-05T10:00:00.123Z',
      finished_at: '2026-11-05T10:00:01.999Z',
      output: { list: [1, 'two', { three: null }], nested: { a: [] } },
      error: { code: 'step_failed', message: 'boom "quoted" \u00e9', retryable: false, step: 's1' },
      replay_of: bare.id,
    });
    await storage.runs.create(bare);
    await storage.runs.create(full);
    expect(await storage.runs.get(bare.id)).toStrictEqual(bare);
    expect(await storage.runs.get(full.id)).toStrictEqual(full);
    expect(await storage.runs.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(await storage.runs.get('not-a-uuid')).toBeUndefined();
  });

  it('keeps a JSON null output distinct from no output, and arrays as JSON arrays', async () => {
    const storage = await backend.create();
    const nullOut = runRecord({ status: 'succeeded', output: null });
    const arrayOut = runRecord({ status: 'succeeded', output: [1, [2, 3], 'x'] });
    const scalar = runRecord({ status: 'succeeded', output: 'just text' });
    for (const r of [nullOut, arrayOut, scalar]) await storage.runs.create(r);
    const back = await storage.runs.get(nullOut.id);
    expect(back).toHaveProperty('output', null);
    expect((await storage.runs.get(arrayOut.id))?.output).toStrictEqual([1, [2, 3], 'x']);
    expect((await storage.runs.get(scalar.id))?.output).toBe('just text');
  });

  it('returns timestamps byte for byte whatever the session time zone', async () => {
    const storage = await backend.create({ poolSize: 1 }); // one pg connection: the `set` below applies to every query
    // A session zone far from UTC, with a half-hour offset: a Date-based read would shift these.
    await sql`set time zone 'Asia/Kolkata'`.execute(storage.db);
    const stamps = ['2026-11-05T23:59:59.999Z', '2000-01-01T00:00:00.000Z', '1999-12-31T18:30:00.500Z', '2026-03-29T01:30:00.001Z'];
    for (const started_at of stamps) {
      const run = runRecord({ started_at, finished_at: started_at });
      await storage.runs.create(run);
      const back = await storage.runs.get(run.id);
      expect(back?.started_at).toBe(started_at);
      expect(back?.finished_at).toBe(started_at);
    }
  });

  it('refuses timestamps it could not return exactly, and other invalid fields, with invalid_record', async () => {
    const storage = await backend.create();
    for (const started_at of [
      '2026-11-05T10:00:00Z',
      '2026-11-05T10:00:00.123456Z',
      '2026-11-05T12:00:00.000+02:00',
      '2026-02-30T00:00:00.000Z',
      'yesterday',
    ]) {
      expect(await codeOf(storage.runs.create(runRecord({ started_at })))).toBe('invalid_record');
    }
    expect(await codeOf(storage.runs.create(runRecord({ id: 'run-1' })))).toBe('invalid_record');
    expect(await codeOf(storage.runs.create(runRecord({ id: 'ABCDEF00-0000-4000-8000-000000000000' })))).toBe('invalid_record');
    expect(await codeOf(storage.runs.create(runRecord({ flow_digest: 'sha256:xyz' as never })))).toBe('invalid_record');
    expect(await codeOf(storage.runs.create(runRecord({ status: 'done' as never })))).toBe('invalid_record');
    expect(await storage.runs.list()).toEqual([]);
  });

  it('refuses a second run with the same id (run_exists) and keeps the first', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    expect(await codeOf(storage.runs.create({ ...run, flow_name: 'other' }))).toBe('run_exists');
    expect((await storage.runs.get(run.id))?.flow_name).toBe('hello');
  });

  it('lists newest first by started_at then id, with limit, flow_name and a before cursor', async () => {
    const storage = await backend.create();
    const ids = ['10000000-0000-4000-8000-000000000000', '20000000-0000-4000-8000-000000000000', '30000000-0000-4000-8000-000000000000'];
    const runs = [
      runRecord({ id: ids[0], started_at: '2026-01-01T00:00:02.000Z', flow_name: 'a' }),
      runRecord({ id: ids[1], started_at: '2026-01-01T00:00:02.000Z', flow_name: 'b' }),
      runRecord({ id: ids[2], started_at: '2026-01-01T00:00:01.000Z', flow_name: 'a' }),
      runRecord({ started_at: '2026-01-01T00:00:03.000Z', flow_name: 'b' }),
    ];
    for (const r of runs) await storage.runs.create(r);
    const order = [runs[3].id, ids[1], ids[0], ids[2]];
    expect((await storage.runs.list()).map((r) => r.id)).toEqual(order);
    expect((await storage.runs.list({ limit: 2 })).map((r) => r.id)).toEqual(order.slice(0, 2));
    expect((await storage.runs.list({ before: ids[1] })).map((r) => r.id)).toEqual([ids[0], ids[2]]);
    expect((await storage.runs.list({ before: ids[1], limit: 1 })).map((r) => r.id)).toEqual([ids[0]]);
    expect((await storage.runs.list({ flow_name: 'a' })).map((r) => r.id)).toEqual([ids[0], ids[2]]);
    expect((await storage.runs.list({ flow_name: 'b', before: runs[3].id })).map((r) => r.id)).toEqual([ids[1]]);
    expect(await storage.runs.list({ before: '90000000-0000-4000-8000-000000000000' })).toEqual([]);
    expect(await codeOf(storage.runs.list({ limit: -1 }))).toBe('invalid_query');
  });

  it('updates status, finished_at, output and error; unknown ids are not_found', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    await storage.runs.update(run.id, { status: 'succeeded', finished_at: '2026-11-05T10:00:05.250Z', output: { ok: true } });
    expect(await storage.runs.get(run.id)).toStrictEqual({ ...run, status: 'succeeded', finished_at: '2026-11-05T10:00:05.250Z', output: { ok: true } });
    await storage.runs.update(run.id, { error: { code: 'x', message: 'y', retryable: true } });
    expect((await storage.runs.get(run.id))?.error).toStrictEqual({ code: 'x', message: 'y', retryable: true });
    await storage.runs.update(run.id, {});
    expect(await codeOf(storage.runs.update('00000000-0000-4000-8000-000000000001', { status: 'failed' }))).toBe('not_found');
    expect(await codeOf(storage.runs.update('00000000-0000-4000-8000-000000000001', {}))).toBe('not_found');
    expect(await codeOf(storage.runs.update(run.id, { status: 'exploded' as never }))).toBe('invalid_record');
  });

  it('writes through to the tables an independent reader sees', async () => {
    const storage = await backend.create();
    const run = runRecord({ output: { a: 1 } });
    await storage.runs.create(run);
    const rows = await sql<{ id: string; status: string; started: string; output_type: string }>`
      select id, status, extract(epoch from started_at)::text as started, jsonb_typeof(output) as output_type
      from ${sql.table(`${storage.schema}.runs`)}`.execute(storage.db);
    expect(rows.rows).toEqual([{ id: run.id, status: 'running', started: '1793872800.000000', output_type: 'object' }]);
  });
});
