import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Digest } from '../../src/canonical.js';
import type { ExecutionRecord } from '../../src/ports/service-storage.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * What a crash or a database outage leaves behind, and how the service ends it (docs/deploy.md,
 * "Database outage"), on the embedded default (PGlite, pg-boss, the worker in this process):
 *
 * - an enqueue cut between the prepared run and its message (the API process died, or the database
 *   went away): the run's start deadline (SVC_QUEUE_TIMEOUT) ends it `start_timeout` in recovery,
 *   and the worker's reconcile sweep ends its `queued` row the same way;
 * - a row left `running` by a process that died after its run ended (or whose run recovery ended):
 *   the sweep gives it the run's end;
 * - a row whose run does not exist: `failed` `run_not_found`.
 *
 * The states are made as the dispatch code leaves them (engine.prepare and the `queued` row, no
 * message); every wait is on the stored state. The orphan sweep is held off (SVC_QUEUE_ORPHAN 3600 s)
 * so the start deadline is what ends the cut enqueue here; test/e2e/hosted-orphan-sweep.test.ts covers it.
 */

let h: HostedFixture;
let orgId: string;
let automation: { id: string; name: string; live_digest: string };

beforeAll(async () => {
  h = await startHosted(
    { runDispatch: 'queue', queueTimeoutSeconds: 1, queueOrphanSeconds: 3600, reconcileIntervalSeconds: 1, scheduler: false },
    {},
    { queue: true },
  );
  const owner = new Client(h.url);
  const { user, org } = await owner.signup('reconcile@example.test');
  orgId = org.id;
  automation = await publishPureAutomation(h.storage, h.engine, orgId, user.id, 'greet');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const minuteAgo = () => new Date(Date.now() - 60_000).toISOString();
const row = (runId: string, status: 'queued' | 'running', dispatch: ExecutionRecord['dispatch']): ExecutionRecord => ({
  id: randomUUID(),
  org_id: orgId,
  automation_id: automation.id,
  flow: automation.name,
  run_id: runId,
  flow_digest: automation.live_digest,
  dispatch,
  status,
  created_at: minuteAgo(),
});

describe('the reconcile sweep and the start deadline', () => {
  it('ends what a cut enqueue, a dead sync process and a lost run leave behind', async () => {
    // 1. An enqueue cut after its row: prepared (with the dispatch's deadline), `queued`, no message.
    const cut = await h.engine.prepare(
      { digest: automation.live_digest as Digest },
      { who: 'cut' },
      { startWithinMs: h.service.settings.queueTimeoutSeconds * 1000 },
    );
    const cutRow = row(cut.run_id, 'queued', 'queue');
    await h.storage.executions.create(cutRow);
    // 2. A sync run that ended, whose process died before writing its end to the row.
    const done = await h.engine.run({ digest: automation.live_digest as Digest }, { who: 'done' });
    const doneRow = row(done.id, 'running', 'sync');
    await h.storage.executions.create(doneRow);
    // 3. A row whose engine run is gone.
    const lostRow = row(randomUUID(), 'running', 'sync');
    await h.storage.executions.create(lostRow);

    const worker = await h.service.startWorker({ concurrency: 1 });
    try {
      // The in-memory store has no periodic recovery sweep (a durable one does, every lease time):
      // recover until the deadline has passed and the run is ended.
      await waitUntil(async () => (await h.engine.recover()).includes(cut.run_id), { what: 'recovery to end the run whose deadline passed' });
      const cutRun = (await h.engine.getRun(cut.run_id))!;
      expect(cutRun.status).toBe('failed');
      expect(cutRun.journal.map((e) => e.event)).toEqual(['run_started', 'run_finished']);
      expect(cutRun.journal.at(-1)).toMatchObject({ error: { code: 'start_timeout' } });

      const ended = await waitUntil(
        async () => {
          const rows = await Promise.all([cutRow, doneRow, lostRow].map((r) => h.storage.executions.get(orgId, r.id)));
          return rows.every((r) => r && ['succeeded', 'failed', 'canceled'].includes(r.status)) ? rows : undefined;
        },
        { what: 'the reconcile sweep to end the three rows' },
      );
      expect(ended.map((r) => [r!.status, r!.error_code])).toEqual([
        ['failed', 'start_timeout'],
        ['succeeded', undefined],
        ['failed', 'run_not_found'],
      ]);
      // Nothing is left unfinished in this org.
      expect(await h.storage.executions.listUnfinished({ createdBefore: new Date().toISOString(), limit: 10 })).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
