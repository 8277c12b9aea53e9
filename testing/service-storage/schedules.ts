import { describe, expect, it } from 'vitest';
import type { ServiceStorage } from '../../src/ports/service-storage.js';
import { uid, at, type Suite } from './shared.js';

/** Schedules and their fire claims. */
export function describeSchedules(suite: Suite): void {
  describe('schedules and fire claims', () => {
    const seedAutomation = async (orgId: string) => {
      const a = {
        id: uid('auto'),
        org_id: orgId,
        name: uid('flow').toLowerCase(),
        task: '',
        site: 'https://x.test',
        mcp_enabled: true,
        created_at: at(1),
        status: 'published' as const,
        live_digest: `sha256:${'a'.repeat(64)}`,
        needs_attention: false,
        example: false,
        params: [],
      };
      await suite.storage.automations.create(a);
      return a;
    };
    const schedule = (orgId: string, automationId: string, n: number, enabled = true) => ({
      id: uid('sched'),
      org_id: orgId,
      automation_id: automationId,
      cron: '*/5 * * * *',
      flow_digest: `sha256:${'b'.repeat(64)}`,
      inputs: { who: 'Ada', nested: { list: [1, 'two'] } },
      enabled,
      created_at: at(n),
      created_by: 'user-1',
      updated_at: at(n),
      since: at(n),
    });

    it('creates, reads, lists, changes and deletes within the org only', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const a = await seedAutomation(org.id);
      const s1 = { ...schedule(org.id, a.id, 2), timezone: 'Europe/Berlin' };
      const s2 = schedule(org.id, a.id, 3, false);
      await suite.storage.schedules.create(s1);
      await suite.storage.schedules.create(s2);
      const other = await suite.independent();
      expect(await other.schedules.get(org.id, s1.id)).toEqual(s1);
      expect(await other.schedules.get(orgB.id, s1.id)).toBeUndefined();
      expect((await other.schedules.list(org.id, a.id)).map((s) => s.id)).toEqual([s1.id, s2.id]);
      expect(await other.schedules.list(orgB.id, a.id)).toEqual([]);
      expect(await suite.storage.schedules.update(orgB.id, s1.id, { enabled: false })).toBeUndefined();
      const changed = await suite.storage.schedules.update(org.id, s1.id, {
        cron: '0 7 * * *',
        timezone: undefined,
        inputs: { who: 'Grace' },
        enabled: false,
        updated_at: at(4),
        since: at(4),
      });
      expect(changed).toEqual({
        ...s1,
        cron: '0 7 * * *',
        timezone: undefined,
        inputs: { who: 'Grace' },
        enabled: false,
        updated_at: at(4),
        since: at(4),
      } as never);
      expect((await other.schedules.get(org.id, s1.id))?.timezone).toBeUndefined();
      expect(await suite.storage.schedules.delete(orgB.id, s2.id)).toBe(false);
      expect(await suite.storage.schedules.delete(org.id, s2.id)).toBe(true);
      expect(await other.schedules.get(org.id, s2.id)).toBeUndefined();
    });

    it('listEnabled reads the enabled schedules of every org, oldest first', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const a = await seedAutomation(org.id);
      const b = await seedAutomation(orgB.id);
      const on1 = schedule(org.id, a.id, 5);
      const off = schedule(org.id, a.id, 6, false);
      const on2 = schedule(orgB.id, b.id, 7);
      for (const s of [on2, off, on1]) await suite.storage.schedules.create(s);
      const ids = (await (await suite.independent()).schedules.listEnabled(10_000)).map((s) => s.id);
      expect(ids.filter((id) => [on1.id, off.id, on2.id].includes(id))).toEqual([on1.id, on2.id]);
    });

    it('a fire is claimed once across connections (unique per schedule and fire time), never for another org or a deleted schedule', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const a = await seedAutomation(org.id);
      const s = schedule(org.id, a.id, 1);
      await suite.storage.schedules.create(s);
      const other = await suite.independent();
      const claim = (by: string, st: ServiceStorage, fireAt = at(30)) =>
        st.schedules.claimFire({ schedule_id: s.id, org_id: org.id, fire_at: fireAt, claimed_at: at(31), claimed_by: by });
      const results = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => claim(`p${i}`, i % 2 === 0 ? suite.storage : other)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await claim('late', other)).toBe(false);
      expect(await suite.storage.schedules.claimFire({ schedule_id: s.id, org_id: orgB.id, fire_at: at(40), claimed_at: at(40), claimed_by: 'x' })).toBe(false);
      expect(await claim('next', suite.storage, at(35))).toBe(true);
      await suite.storage.schedules.completeFire(org.id, s.id, at(30), { execution_id: 'exec-1' });
      await suite.storage.schedules.completeFire(org.id, s.id, at(35), { error: 'not_found: gone' });
      await suite.storage.schedules.completeFire(orgB.id, s.id, at(35), { execution_id: 'stranger' });
      const fires = await other.schedules.fires(org.id, s.id, 10);
      expect(fires.map((f) => [f.fire_at, f.execution_id, f.error])).toEqual([
        [at(35), undefined, 'not_found: gone'],
        [at(30), 'exec-1', undefined],
      ]);
      expect(fires[1]!.claimed_by).toBe(`p${results.indexOf(true)}`);
      expect(await other.schedules.fires(orgB.id, s.id, 10)).toEqual([]);
      await suite.storage.schedules.delete(org.id, s.id);
      expect(await other.schedules.fires(org.id, s.id, 10)).toEqual([]);
      expect(await claim('after-delete', suite.storage, at(50))).toBe(false);
    });
  });
}
