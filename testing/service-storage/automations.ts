import { describe, expect, it } from 'vitest';
import { rejectsWith, uid, at, type Suite } from './shared.js';

/** Automations, authoring sessions, versions and org secrets. */
export function describeAutomations(suite: Suite): void {
  describe('automations, authoring, versions, secrets', () => {
    const automation = (orgId: string, name: string, over: Record<string, unknown> = {}) => ({
      id: uid('auto'),
      org_id: orgId,
      name,
      task: 'Do the thing',
      site: 'https://example.test',
      mcp_enabled: true,
      created_at: at(3),
      status: 'draft' as const,
      needs_attention: false,
      example: false,
      params: [{ name: 'q', required: true }],
      ...over,
    });

    it('creates, reads by id and name per org, lists, updates; names unique per org only', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const a = automation(org.id, 'invoice');
      await suite.storage.automations.create(a);
      await suite.storage.automations.create(automation(orgB.id, 'invoice'));
      const err = await rejectsWith(suite.storage.automations.create(automation(org.id, 'invoice')), 'conflict');
      expect((err as { data: { field: string } }).data.field).toBe('name');
      const other = await suite.independent();
      expect(await other.automations.get(org.id, a.id)).toEqual(a);
      expect(await other.automations.get(orgB.id, a.id)).toBeUndefined();
      expect(await other.automations.getByName(org.id, 'invoice')).toEqual(a);
      const updated = await suite.storage.automations.update(org.id, a.id, {
        status: 'published',
        live_digest: `sha256:${'a'.repeat(64)}`,
        failing_step: 'click_2',
      });
      expect(updated).toMatchObject({ status: 'published', live_digest: `sha256:${'a'.repeat(64)}`, failing_step: 'click_2' });
      expect(await suite.storage.automations.update(orgB.id, a.id, { task: 'hijack' })).toBeUndefined();
      expect((await other.automations.get(org.id, a.id))?.task).toBe('Do the thing');
      const cleared = await suite.storage.automations.update(org.id, a.id, { failing_step: undefined });
      expect(cleared?.failing_step).toBeUndefined();
      expect((await other.automations.list(org.id)).map((x) => x.name)).toEqual(['invoice']);
    });

    it('listMcpTools: published and failing automations with a live digest and mcp_enabled, oldest first, one org only', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const digest = `sha256:${'b'.repeat(64)}`;
      const rows = [
        automation(org.id, 'draft-one', { created_at: at(1) }),
        automation(org.id, 'live-two', { created_at: at(2), status: 'published', live_digest: digest, task: 'Two' }),
        automation(org.id, 'failing-three', { created_at: at(3), status: 'failing', live_digest: digest, failing_step: 'click_1' }),
        automation(org.id, 'hidden-four', { created_at: at(4), status: 'published', live_digest: digest, mcp_enabled: false }),
        automation(org.id, 'live-one', { created_at: at(1), status: 'published', live_digest: digest }),
        automation(orgB.id, 'other-org', { created_at: at(1), status: 'published', live_digest: digest }),
      ];
      for (const r of rows) await suite.storage.automations.create(r);
      const listed = await (await suite.independent()).automations.listMcpTools(org.id);
      expect(listed.map((r) => r.name)).toEqual(['live-one', 'live-two', 'failing-three']);
      expect(listed[1]).toEqual({ id: rows[1]!.id, name: 'live-two', task: 'Two', live_digest: digest });
      await suite.storage.automations.update(org.id, rows[1]!.id, { mcp_enabled: false });
      await suite.storage.automations.update(org.id, rows[0]!.id, { status: 'published', live_digest: digest });
      expect((await suite.storage.automations.listMcpTools(org.id)).map((r) => r.name)).toEqual(['draft-one', 'live-one', 'failing-three']);
      expect((await suite.storage.automations.listMcpTools(orgB.id)).map((r) => r.name)).toEqual(['other-org']);
    });

    it('mcpToolsFingerprint: equal exactly when listMcpTools is equal; each change of what a tool is made of changes it', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const digest = `sha256:${'c'.repeat(64)}`;
      const other = `sha256:${'d'.repeat(64)}`;
      const fp = async () => (await suite.independent()).automations.mcpToolsFingerprint(org.id);
      const empty = await fp();
      expect(typeof empty).toBe('string');
      expect(await suite.storage.automations.mcpToolsFingerprint(orgB.id)).toBe(empty);
      const a = automation(org.id, 'alpha', { created_at: at(1), status: 'published', live_digest: digest, task: 'A' });
      const b = automation(org.id, 'beta', { created_at: at(2), status: 'draft' });
      await suite.storage.automations.create(a);
      await suite.storage.automations.create(b);
      const seen = new Set([empty]);
      const changed = async (why: string) => {
        const now = await fp();
        expect(seen.has(now), why).toBe(false);
        seen.add(now);
        expect(await fp(), `${why}: stable while nothing changes`).toBe(now);
        return now;
      };
      const one = await changed('a published tool');
      await suite.storage.automations.create(automation(orgB.id, 'gamma', { created_at: at(1), status: 'published', live_digest: digest }));
      expect(await fp(), 'another org changes nothing here').toBe(one);
      await suite.storage.automations.update(org.id, b.id, { task: 'still a draft' });
      expect(await fp(), 'a draft is not a tool').toBe(one);
      await suite.storage.automations.update(org.id, a.id, { task: 'A, reworded' });
      await changed('task');
      await suite.storage.automations.update(org.id, a.id, { live_digest: other });
      const moved = await changed('live digest');
      await suite.storage.automations.update(org.id, a.id, { mcp_enabled: false });
      expect(await fp(), 'mcp_enabled off: the list is empty again, and so is the fingerprint').toBe(empty);
      await suite.storage.automations.update(org.id, a.id, { mcp_enabled: true });
      expect(await fp(), 'back on: the same list as before, the same fingerprint').toBe(moved);
      // Text that would concatenate alike still differs (fields are length-prefixed).
      await suite.storage.automations.update(org.id, a.id, { task: 'A;B' });
      const joined = await fp();
      await suite.storage.automations.update(org.id, a.id, { task: 'A' });
      await suite.storage.automations.update(org.id, b.id, { status: 'published', live_digest: digest, task: 'B' });
      expect(await fp()).not.toBe(joined);
    });

    it('at most one starter example per org, also under concurrent creation', async () => {
      const { org } = await suite.seedOrg(1);
      const other = await suite.independent();
      const results = await Promise.allSettled([
        suite.storage.automations.create(automation(org.id, 'example-a', { example: true })),
        other.automations.create(automation(org.id, 'example-b', { example: true })),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await suite.storage.automations.getExample(org.id))?.example).toBe(true);
    });

    it('authoring sessions: JSON fields round-trip, files by name, per org', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      const a = automation(org.id, 'authored');
      await suite.storage.automations.create(a);
      const session = {
        automation_id: a.id,
        org_id: org.id,
        captured_ops: [{ kind: 'fill', target: { label: 'Ünï "q"' }, value: 'line\nbreak' }],
        input_params: [{ name: 'q', required: false, sample: 'x' }],
        input_slots: ['q'],
        secret_slots: ['pw'],
        files: [],
        updated_at: at(4),
        state: 'editing' as const,
      };
      await suite.storage.authoring.create(session);
      const other = await suite.independent();
      expect(await other.authoring.get(org.id, a.id)).toEqual(session);
      expect(await other.authoring.get(orgB.id, a.id)).toBeUndefined();
      const next = await suite.storage.authoring.update(org.id, a.id, { state: 'published', error: 'boom', updated_at: at(5) });
      expect(next).toMatchObject({ state: 'published', error: 'boom' });
      expect((await suite.storage.authoring.update(org.id, a.id, { error: null }))?.error).toBeUndefined();
      const bytes = new Uint8Array([0, 1, 2, 255]);
      await suite.storage.authoring.putFile(org.id, a.id, { name: 'f.bin', digest: 'sha256:x', bytes });
      expect(await other.authoring.getFile(org.id, a.id, 'f.bin')).toEqual({ digest: 'sha256:x', bytes });
      expect(await other.authoring.getFile(orgB.id, a.id, 'f.bin')).toBeUndefined();
      // A name reused for other bytes: the capture sees the new file, the old stays readable by digest, for this org only.
      const newer = new Uint8Array([9, 9]);
      await suite.storage.authoring.putFile(org.id, a.id, { name: 'f.bin', digest: 'sha256:y', bytes: newer });
      expect(await other.authoring.getFile(org.id, a.id, 'f.bin')).toEqual({ digest: 'sha256:y', bytes: newer });
      expect(await other.authoring.fileByDigest(org.id, 'sha256:x')).toEqual(bytes);
      expect(await other.authoring.fileByDigest(org.id, 'sha256:y')).toEqual(newer);
      expect(await other.authoring.fileByDigest(orgB.id, 'sha256:x')).toBeUndefined();
      expect(await other.authoring.fileByDigest(org.id, 'sha256:z')).toBeUndefined();
    });

    it('versions: newest first, a republished digest keeps its first row, per org', async () => {
      const { org } = await suite.seedOrg(1);
      const a = automation(org.id, 'versioned');
      await suite.storage.automations.create(a);
      const d1 = `sha256:${'1'.repeat(64)}`;
      const d2 = `sha256:${'2'.repeat(64)}`;
      await suite.storage.versions.add({ automation_id: a.id, org_id: org.id, flow_digest: d1, created_at: at(1), created_by: 'u' });
      await suite.storage.versions.add({ automation_id: a.id, org_id: org.id, flow_digest: d2, created_at: at(2), created_by: 'u' });
      await suite.storage.versions.add({ automation_id: a.id, org_id: org.id, flow_digest: d1, created_at: at(3), created_by: 'v' });
      const other = await suite.independent();
      expect((await other.versions.list(org.id, a.id)).map((v) => [v.flow_digest, v.created_by])).toEqual([
        [d2, 'u'],
        [d1, 'u'],
      ]);
      expect(await other.versions.get(org.id, a.id, d2)).toMatchObject({ flow_digest: d2 });
      expect(await other.versions.get('other-org', a.id, d2)).toBeUndefined();
    });

    it('secrets: put replaces, list sorted by name, delete, per org', async () => {
      const { org } = await suite.seedOrg(1);
      const { org: orgB } = await suite.seedOrg(1);
      await suite.storage.secrets.put({ org_id: org.id, name: 'b', ciphertext: 'v1.x.1', updated_at: at(1) });
      await suite.storage.secrets.put({ org_id: org.id, name: 'a', ciphertext: 'v1.x.2', updated_at: at(2) });
      await suite.storage.secrets.put({ org_id: org.id, name: 'b', ciphertext: 'v1.x.3', updated_at: at(3) });
      const other = await suite.independent();
      expect((await other.secrets.list(org.id)).map((x) => [x.name, x.ciphertext])).toEqual([
        ['a', 'v1.x.2'],
        ['b', 'v1.x.3'],
      ]);
      expect(await other.secrets.get(orgB.id, 'a')).toBeUndefined();
      expect(await suite.storage.secrets.delete(orgB.id, 'a')).toBe(false);
      expect(await suite.storage.secrets.delete(org.id, 'a')).toBe(true);
      expect((await other.secrets.list(org.id)).map((x) => x.name)).toEqual(['b']);
    });
  });
}
