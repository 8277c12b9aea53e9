import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { isFlowError } from '../../../src/errors.js';
import type { Storage } from '../../../src/ports/storage.js';
import { verifyJournal } from '../../../src/run/fixture.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { createEnvSecrets } from '../../../adapters/secrets-env/index.js';
import { makeSpec, testTools } from './helpers.js';

// Runs by id, cancel and lease recovery across two engine instances over one storage (docs/journal.md,
// "Runs by id", "Leases and recovery"). The cross-process versions (PGlite, Postgres, SIGKILL) are in
// test/e2e/run-lifecycle.test.ts.

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (err) {
    return isFlowError(err) ? err.code : `not a FlowError: ${String(err)}`;
  }
  return undefined;
}

async function collect(iter: AsyncIterable<JournalEntry>): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of iter) {
    out.push(e);
    if (out.length > 1000) throw new Error('watch did not end');
  }
  return out;
}

/** Wait for a condition on the store, bounded (a cap only ends a hang). */
async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 2000; i++) {
    const v = await read();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition never held');
}

describe('engine: runs by id across engine instances', () => {
  it('A prepares (inputs stored, secrets as references), B executes, A watches to the end and reads the result', async () => {
    const { registry } = testTools();
    const storage = createMemoryStorage();
    const secrets = createEnvSecrets({ env: { FLOWCTL_SECRET_TOKEN: 's3cr3t-value' } });
    const a = createEngine({ storage, tools: registry, secrets });
    const b = createEngine({ storage, tools: registry, secrets });
    const spec = makeSpec(registry, [{ id: 'echo', tool: 'test/echo', args: { to: '${inputs.to}', token: '${inputs.token}' }, secrets: true }], {
      inputs: { to: { type: 'string', required: true }, token: { type: 'string', secret: true, default: 'secret:token' } },
      output: '${steps.echo.output.to}',
    });
    const { run_id, status } = await a.prepare({ spec }, { to: 'ops@example.com' });
    expect(status).toBe('pending');
    const record = await storage.runs.get(run_id);
    expect(record).toMatchObject({ status: 'pending', inputs: { to: 'ops@example.com', token: 'secret:token' } });
    expect(record!.lease).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain('s3cr3t-value');

    const watched = collect(a.watch(run_id));
    const run = await b.execute(run_id);
    expect(run).toMatchObject({ id: run_id, status: 'succeeded', output: 'ops@example.com' });
    const entries = await watched;
    expect(entries.map((e) => e.event)).toEqual(['run_started', 'step_started', 'step_succeeded', 'run_finished']);
    expect((await a.getRun(run_id))!.status).toBe('succeeded');
    expect(() => verifyJournal(run)).not.toThrow();
    expect(JSON.stringify(await storage.journal.read(run_id))).not.toContain('s3cr3t-value');
    // A run executes once.
    expect(await codeOf(b.execute(run_id))).toBe('run_not_pending');
    expect(await codeOf(a.execute('00000000-0000-4000-8000-000000000000'))).toBe('not_found');
    await a.dispose();
    await b.dispose();
  });

  it('prepare validates inputs and secrets before any run exists', async () => {
    const { registry } = testTools();
    const storage = createMemoryStorage();
    const engine = createEngine({ storage, tools: registry });
    const spec = makeSpec(registry, [{ id: 'echo', tool: 'test/secret-echo', args: { token: '${inputs.token}' }, secrets: true }], {
      inputs: { n: { type: 'number', required: true }, token: { type: 'string', secret: true, default: 'secret:token' } },
    });
    expect(await codeOf(engine.prepare({ spec }, { n: 'x' }))).toBe('invalid_inputs');
    expect(await codeOf(engine.prepare({ spec }, { n: 1 }))).toBe('secret_not_found');
    // The run's own secret store answers the pre-check.
    const prepared = await engine.prepare({ spec }, { n: 1 }, { secrets: createEnvSecrets({ env: { FLOWCTL_SECRET_TOKEN: 't' } }) });
    expect((await storage.runs.list()).map((r) => r.id)).toEqual([prepared.run_id]);
    await engine.dispose();
  });

  it('cancels a prepared run: it starts and ends canceled, and a verify replay reproduces it', async () => {
    const { registry, calls } = testTools();
    const storage = createMemoryStorage();
    const a = createEngine({ storage, tools: registry });
    const b = createEngine({ storage, tools: registry });
    const spec = makeSpec(registry, [{ id: 'echo', tool: 'test/echo' }]);
    const { run_id } = await a.prepare({ spec }, {});
    expect(await b.cancel(run_id)).toEqual({ run_id, status: 'canceled' });
    const run = (await a.getRun(run_id))!;
    expect(run.journal.map((e) => e.event)).toEqual(['run_started', 'run_finished']);
    expect(run.journal[1]).toMatchObject({ status: 'canceled', error: { code: 'canceled' } });
    expect(calls['test/echo']).toBeUndefined();
    expect(await codeOf(a.execute(run_id))).toBe('run_not_pending');
    const replay = await a.replay({ run_id }, { mode: 'verify' });
    expect(replay.status).toBe('canceled');
    // Cancel of a finished run keeps its status.
    expect(await a.cancel(run_id)).toEqual({ run_id, status: 'canceled' });
    await a.dispose();
    await b.dispose();
  });

  it('cancels a run executing in another engine instance through the store (lease heartbeat)', async () => {
    const { registry, aborted } = testTools();
    const storage = createMemoryStorage();
    const a = createEngine({ storage, tools: registry, leaseMs: 300 });
    const b = createEngine({ storage, tools: registry, leaseMs: 300 });
    const spec = makeSpec(registry, [{ id: 'wait', tool: 'test/hang', args: { honour_signal: true }, timeout_ms: 600_000 }]);
    const { run_id } = await a.prepare({ spec }, {});
    const executing = b.execute(run_id);
    await until(async () => ((await storage.journal.read(run_id)).some((e) => e.event === 'step_started') ? true : undefined));
    const watched = collect(a.watch(run_id));
    expect(await a.cancel(run_id)).toEqual({ run_id, status: 'canceled' });
    const run = await executing;
    expect(run.status).toBe('canceled');
    expect(aborted).toHaveLength(1);
    expect((await watched).at(-1)).toMatchObject({ event: 'run_finished', status: 'canceled' });
    expect((await a.replay({ run_id }, { mode: 'verify' })).status).toBe('canceled');
    await a.dispose();
    await b.dispose();
  });

  it('recovers a run whose executor stopped renewing its lease: failed worker_lost, watch ends, replay reports it', async () => {
    const { registry } = testTools();
    const storage = createMemoryStorage();
    // B's process "stalls": its lease renewals stop reaching the store (as if it were frozen).
    let frozen = false;
    const stalled: Storage = {
      ...storage,
      runs: {
        ...storage.runs,
        update: (id, patch) => (frozen && patch.lease ? Promise.resolve() : storage.runs.update(id, patch)),
      },
    };
    const a = createEngine({ storage, tools: registry, leaseMs: 300 });
    const b = createEngine({ storage: stalled, tools: registry, leaseMs: 300 });
    const spec = makeSpec(registry, [
      { id: 'first', tool: 'test/echo', args: { n: 1 } },
      { id: 'wait', tool: 'test/hang', args: { honour_signal: true }, timeout_ms: 600_000 },
    ]);
    const { run_id } = await a.prepare({ spec }, {});
    const executing = b.execute(run_id).then(
      () => 'resolved',
      (err: unknown) => (isFlowError(err) ? err.code : String(err)),
    );
    await until(async () => ((await storage.journal.read(run_id)).some((e) => e.event === 'step_started' && e.step === 'wait') ? true : undefined));
    frozen = true;
    // A's watch checks the lease when no entry comes for a lease time, and recovers the run itself.
    const entries = await collect(a.watch(run_id));
    const finished = entries.at(-1)!;
    expect(finished).toMatchObject({ event: 'run_finished', status: 'failed', error: { code: 'worker_lost', step: 'wait' } });
    const run = (await a.getRun(run_id))!;
    expect(run.status).toBe('failed');
    expect(() => verifyJournal(run)).not.toThrow();
    expect(await storage.runs.get(run_id)).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
    // B's heartbeat sees the run closed and aborts its step; its late entry conflicts, B's execute
    // rejects with worker_lost (why it stopped, not the append that failed), and it leaves the record
    // as recovery settled it.
    expect(await executing).toBe('worker_lost');
    expect(await storage.runs.get(run_id)).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
    expect((await a.getRun(run_id))!.journal).toHaveLength(run.journal.length);
    // A recovered run replays as failed with worker_lost: not a divergence.
    const replay = await a.replay({ run_id }, { mode: 'verify' });
    expect(replay.status).toBe('failed');
    expect(replay.journal.at(-1)).toMatchObject({ event: 'run_finished', error: { code: 'worker_lost', step: 'wait' } });
    // Nothing left to recover; a second recoverer finds nothing.
    expect(await a.recover()).toEqual([]);
    await a.dispose();
    await b.dispose();
  });
});
