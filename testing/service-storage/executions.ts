import { describe, expect, it } from 'vitest';
import { uid, at, type Suite } from './shared.js';

/** Executions, webhooks and their deliveries. */
export function describeExecutionsAndWebhooks(suite: Suite): void {
  describe('executions', () => {
    const execution = (orgId: string, n: number, over: Record<string, unknown> = {}) => ({
      id: uid('exec'),
      org_id: orgId,
      automation_id: 'auto-1',
      flow: 'invoice',
      run_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      flow_digest: `sha256:${'e'.repeat(64)}`,
      dispatch: 'sync' as const,
      status: 'running' as const,
      created_at: at(n),
      ...over,
    });

    it('lists newest first with a cursor and a flow filter; one by id or run id; per org', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const rows = [1, 2, 3, 4].map((n) => execution(org.id, n, n === 3 ? { flow: 'refund', automation_id: 'auto-2' } : {}));
      for (const r of rows) await suite.storage.executions.create(r);
      await suite.storage.executions.create(execution(orgB.id, 9));
      const other = await suite.independent();
      const page1 = await other.executions.list(org.id, { limit: 2 });
      expect(page1.map((e) => e.created_at)).toEqual([at(4), at(3)]);
      const page2 = await other.executions.list(org.id, { limit: 2, before: { created_at: page1[1]!.created_at, id: page1[1]!.id } });
      expect(page2.map((e) => e.created_at)).toEqual([at(2), at(1)]);
      expect((await other.executions.list(org.id, { limit: 10, flow: 'refund' })).map((e) => e.flow)).toEqual(['refund']);
      expect(await other.executions.get(org.id, rows[0]!.id)).toEqual(rows[0]);
      expect(await other.executions.getByRunId(org.id, rows[1]!.run_id)).toEqual(rows[1]);
      expect(await other.executions.getByRunId(orgB.id, rows[1]!.run_id)).toBeUndefined();
      await suite.storage.executions.update(org.id, rows[0]!.id, { status: 'failed', finished_at: at(5), error_code: 'locator_drift' });
      await suite.storage.executions.update(orgB.id, rows[1]!.id, { status: 'canceled' });
      expect(await other.executions.get(org.id, rows[0]!.id)).toMatchObject({ status: 'failed', finished_at: at(5), error_code: 'locator_drift' });
      expect((await other.executions.get(org.id, rows[1]!.id))?.status).toBe('running');
      const usage = await other.executions.usage(org.id, at(2));
      expect(usage.get('auto-1')).toEqual({ calls: 2, last_run_at: at(4) });
      expect(usage.get('auto-2')).toEqual({ calls: 1, last_run_at: at(3) });
    });
    it('finish records the terminal outcome once: true for the call that ends it, false after, never across orgs', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const row = execution(org.id, 7);
      await suite.storage.executions.create(row);
      expect(await suite.storage.executions.finish(orgB.id, row.id, { status: 'succeeded' })).toBe(false);
      expect(await suite.storage.executions.finish(org.id, row.id, { status: 'canceled', finished_at: at(8) })).toBe(true);
      expect(await suite.storage.executions.finish(org.id, row.id, { status: 'failed', finished_at: at(9), error_code: 'worker_lost' })).toBe(false);
      const other = await suite.independent();
      expect(await other.executions.get(org.id, row.id)).toMatchObject({ status: 'canceled', finished_at: at(8) });
      expect((await other.executions.get(org.id, row.id))?.error_code).toBeUndefined();
      expect(await suite.storage.executions.finish(org.id, 'no-such-row', { status: 'failed' })).toBe(false);
    });
    it('listUnfinished: queued and running rows of every org created before a time, oldest first, paged', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const rows = [
        execution(org.id, 1, { status: 'queued', dispatch: 'queue' }),
        execution(orgB.id, 2),
        execution(org.id, 3, { status: 'succeeded', finished_at: at(4) }),
        execution(orgB.id, 4, { status: 'queued', dispatch: 'queue' }),
        execution(org.id, 5),
        execution(org.id, 9),
      ];
      for (const r of rows) await suite.storage.executions.create(r);
      await suite.storage.executions.finish(org.id, rows[4]!.id, { status: 'failed', error_code: 'worker_lost' });
      const other = await suite.independent();
      const all = await other.executions.listUnfinished({ createdBefore: at(9), limit: 10 });
      expect(all.map((e) => [e.created_at, e.status])).toEqual([
        [at(1), 'queued'],
        [at(2), 'running'],
        [at(4), 'queued'],
      ]);
      expect(all[0]).toEqual(rows[0]);
      const page1 = await other.executions.listUnfinished({ createdBefore: at(9), limit: 2 });
      const page2 = await other.executions.listUnfinished({ createdBefore: at(9), limit: 2, after: { created_at: page1[1]!.created_at, id: page1[1]!.id } });
      expect([...page1, ...page2].map((e) => e.id)).toEqual(all.map((e) => e.id));
      expect(await other.executions.listUnfinished({ createdBefore: at(1), limit: 10 })).toEqual([]);
    });
  });

  describe('webhooks and deliveries', () => {
    const hook = (orgId: string, n: number) => ({
      id: uid('wh'),
      org_id: orgId,
      url: 'https://hooks.example.test/in?x=1',
      events: ['run.finished' as const, 'run.failed' as const],
      description: 'Ünïcode 🚀',
      enabled: true,
      secret_ciphertext: 'v1.sealed',
      created_at: at(n),
      updated_at: at(n),
    });

    it('creates, reads, lists, changes and deletes endpoints and their deliveries within the org only', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const w1 = hook(org.id, 2);
      const w2 = hook(org.id, 3);
      await suite.storage.webhooks.create(w1);
      await suite.storage.webhooks.create(w2);
      const other = await suite.independent();
      expect(await other.webhooks.get(org.id, w1.id)).toEqual(w1);
      expect(await other.webhooks.get(orgB.id, w1.id)).toBeUndefined();
      expect((await other.webhooks.list(org.id)).map((w) => w.id)).toEqual([w1.id, w2.id]);
      expect(await other.webhooks.list(orgB.id)).toEqual([]);
      expect(await suite.storage.webhooks.update(orgB.id, w1.id, { enabled: false })).toBeUndefined();
      expect(
        await suite.storage.webhooks.update(org.id, w1.id, {
          enabled: false,
          disabled_reason: 'the endpoint answered 410 Gone',
          events: ['automation.failing'],
          updated_at: at(4),
        }),
      ).toEqual({
        ...w1,
        enabled: false,
        disabled_reason: 'the endpoint answered 410 Gone',
        events: ['automation.failing'],
        updated_at: at(4),
      });
      expect((await suite.storage.webhooks.update(org.id, w1.id, { enabled: true, disabled_reason: undefined }))?.disabled_reason).toBeUndefined();
      const d = (n: number) => ({
        id: uid('msg'),
        org_id: org.id,
        webhook_id: w2.id,
        event: 'run.finished' as const,
        payload: JSON.stringify({ type: 'run.finished', data: { text: 'münchen' } }),
        status: 'pending' as const,
        attempts: [],
        next_attempt_at: at(n),
        created_at: at(n),
        updated_at: at(n),
      });
      const d1 = d(5);
      const d2 = d(6);
      await suite.storage.webhooks.createDelivery(d1);
      await suite.storage.webhooks.createDelivery(d2);
      expect(await other.webhooks.getDelivery(org.id, d1.id)).toEqual(d1);
      expect(await other.webhooks.getDelivery(orgB.id, d1.id)).toBeUndefined();
      const attempts = [{ at: at(7), status: 500, error: 'HTTP 500', duration_ms: 12 }];
      await suite.storage.webhooks.updateDelivery(orgB.id, d1.id, { status: 'failed' });
      await suite.storage.webhooks.updateDelivery(org.id, d1.id, { status: 'delivered', attempts, next_attempt_at: undefined, updated_at: at(8) });
      expect(await other.webhooks.getDelivery(org.id, d1.id)).toEqual({
        ...d1,
        status: 'delivered',
        attempts,
        next_attempt_at: undefined,
        updated_at: at(8),
      } as never);
      expect((await other.webhooks.deliveries(org.id, w2.id, 10)).map((x) => x.id)).toEqual([d2.id, d1.id]);
      expect(await other.webhooks.deliveries(orgB.id, w2.id, 10)).toEqual([]);
      expect(await suite.storage.webhooks.delete(orgB.id, w2.id)).toBe(false);
      expect(await suite.storage.webhooks.delete(org.id, w2.id)).toBe(true);
      expect(await other.webhooks.getDelivery(org.id, d1.id)).toBeUndefined();
    });
  });
}
