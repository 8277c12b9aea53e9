import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Digest } from '../../src/canonical.js';
import type { ExecutionRecord } from '../../src/ports/service-storage.js';
import { RUN_QUEUE } from '../../src/service/domain/dispatch.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The orphan sweep of queue dispatch (docs/hosted-api.md, "Queue dispatch"): a queued run whose
 * queue message is gone (left by a version that wrote the run and its message apart, or a message
 * dropped after its retries) is ended `failed` with `queue_message_lost` once it is older than
 * SVC_QUEUE_ORPHAN, long before its start deadline (SVC_QUEUE_TIMEOUT, an hour here); a queued run
 * whose message is there and simply waits (sent with a delay) is left alone, however old.
 * And an enqueue whose message cannot be stored (the queue stopped) rolls back: no run, no row.
 * On the embedded default (PGlite, pg-boss, the worker in this process); waits are on stored state.
 */

let h: HostedFixture;
let owner: Client;
let orgId: string;
let automation: { id: string; name: string; live_digest: string };

beforeAll(async () => {
  h = await startHosted({ runDispatch: 'queue', queueOrphanSeconds: 1, reconcileIntervalSeconds: 1, scheduler: false }, {}, { queue: true });
  owner = new Client(h.url);
  const { user, org } = await owner.signup('orphans@example.test');
  orgId = org.id;
  automation = await publishPureAutomation(h.storage, h.engine, orgId, user.id, 'greet');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

/** A prepared run (the dispatch's start deadline) and its `queued` row, made `ageMs` ago. */
async function queued(who: string, ageMs: number): Promise<ExecutionRecord> {
  const run = await h.engine.prepare({ digest: automation.live_digest as Digest }, { who }, { startWithinMs: h.service.settings.queueTimeoutSeconds * 1000 });
  const row: ExecutionRecord = {
    id: randomUUID(),
    org_id: orgId,
    automation_id: automation.id,
    flow: automation.name,
    run_id: run.run_id,
    flow_digest: automation.live_digest,
    dispatch: 'queue',
    status: 'queued',
    created_at: new Date(Date.now() - ageMs).toISOString(),
  };
  await h.storage.executions.create(row);
  return row;
}

const rowOf = (r: ExecutionRecord) => h.storage.executions.get(orgId, r.id);

describe('atomic enqueue and the orphan sweep (PGlite)', () => {
  it('fails a queued run without a message, and leaves one whose message waits', async () => {
    expect(h.service.settings.queueTimeoutSeconds).toBe(3600);
    // Oldest first: the waiting run (its message delayed an hour), then the orphan.
    const waiting = await queued('waiting', 120_000);
    await h.queue!.send(RUN_QUEUE, { execution_id: waiting.id, org_id: orgId }, { delaySeconds: 3600 });
    const orphan = await queued('orphan', 60_000);

    const worker = await h.service.startWorker({ concurrency: 1 });
    try {
      const ended = await waitUntil(
        async () => {
          const r = await rowOf(orphan);
          return r?.status === 'failed' ? r : undefined;
        },
        { what: 'the orphan sweep to fail the run without a message' },
      );
      expect(ended.error_code).toBe('queue_message_lost');
      const run = (await h.engine.getRun(orphan.run_id))!;
      expect(run.status).toBe('failed');
      expect(run.journal.map((e) => e.event)).toEqual(['run_started', 'run_finished']);
      expect(run.journal.at(-1)).toMatchObject({ error: { code: 'queue_message_lost' } });

      // A second orphan, newer than the waiting run: once it is failed, a pass went over the waiting
      // run after it was eligible by age, and left it.
      const second = await queued('second', 30_000);
      await waitUntil(async () => ((await rowOf(second))?.status === 'failed' ? true : undefined), { what: 'the sweep to fail the second orphan' });
      expect((await rowOf(waiting))?.status).toBe('queued');
      expect((await h.engine.getRun(waiting.run_id))?.status).toBe('pending');
      expect(await h.queue!.has(RUN_QUEUE, { execution_id: waiting.id })).toBe(true);
    } finally {
      await worker.stop();
    }
  });

  // Last in this file: it stops the fixture's queue.
  it('an enqueue whose message cannot be stored keeps nothing: 503 queue_unavailable, no run, no execution (PGlite)', async () => {
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret as string;
    const send = () =>
      fetch(`${h.url}/v1/run/${automation.name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { who: 'tx' } }),
      });
    const queued = await send();
    expect(queued.status).toBe(200);
    const before = { runs: (await h.engine.listRuns()).length, rows: (await h.storage.executions.list(orgId, { limit: 1000 })).length };
    // The queue goes away (its pg-boss stopped): the send inside the enqueue transaction fails.
    await h.queue!.crash();
    const res = await send();
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toBe('queue_unavailable');
    expect({ runs: (await h.engine.listRuns()).length, rows: (await h.storage.executions.list(orgId, { limit: 1000 })).length }).toEqual(before);
  });

  it('Engine.abandon ends only a prepared run nothing started', async () => {
    const run = await h.engine.prepare({ digest: automation.live_digest as Digest }, { who: 'abandon' });
    expect(await h.engine.abandon(run.run_id, { code: 'queue_message_lost', message: 'gone' })).toBe(true);
    expect(await h.engine.abandon(run.run_id, { code: 'queue_message_lost', message: 'gone' })).toBe(false);
    const done = await h.engine.run({ digest: automation.live_digest as Digest }, { who: 'done' });
    expect(await h.engine.abandon(done.id, { code: 'queue_message_lost', message: 'gone' })).toBe(false);
    expect((await h.engine.getRun(done.id))?.status).toBe('succeeded');
    expect(await h.engine.abandon(randomUUID(), { code: 'queue_message_lost', message: 'gone' })).toBe(false);
  });
});
