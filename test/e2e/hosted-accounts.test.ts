import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

let h: HostedFixture;
beforeAll(async () => {
  h = await startHosted();
});
afterAll(async () => {
  await h?.close();
});

describe('accounts, orgs, members, keys, audit', () => {
  it('signup -> session -> create org -> add member -> keys -> audit', async () => {
    const ada = new Client(h.url);
    const { user, org } = await ada.signup('ada@example.test', 'correct horse battery', 'Acme');
    expect(org.name).toBe('Acme');
    const s = await ada.call('GET', '/api/session');
    expect(s.status).toBe(200);
    expect(s.body).toEqual({ user, org, role: 'owner', orgs: [{ id: org.id, name: 'Acme', role: 'owner' }] });

    const lin = new Client(h.url);
    await lin.signup('lin@example.test');
    const add = await ada.call('POST', '/api/members', { email: 'lin@example.test', role: 'member' });
    expect(add.status).toBe(201);
    const members = await ada.call('GET', '/api/members');
    expect(members.body.members.map((m: any) => m.email)).toEqual(['ada@example.test', 'lin@example.test']);

    const mint = await ada.call('POST', '/api/keys', { mode: 'live', name: 'ci', automations: ['invoice'] });
    expect(mint.status).toBe(201);
    expect(mint.body.secret).toMatch(/^svc_live_/);
    const keys = await ada.call('GET', '/api/keys');
    expect(JSON.stringify(keys.body)).not.toContain(mint.body.secret);
    expect((await ada.call('DELETE', `/api/keys/${mint.body.key.id}`)).status).toBe(204);

    const audit = await ada.call('GET', '/api/audit?limit=2');
    expect(audit.status).toBe(200);
    expect(audit.body.entries.map((e: any) => e.metadata.action)).toEqual(['key.revoke', 'key.mint']);
    const next = await ada.call('GET', `/api/audit?limit=2&cursor=${audit.body.next_cursor}`);
    expect(next.body.entries.map((e: any) => e.metadata.action)).toEqual(['member.add', 'org.create']);
    expect(next.body.next_cursor).toBeNull();
    expect((await ada.call('GET', '/api/audit/verify')).body).toEqual({ ok: true, entries: 4 });

    const demote = await ada.call('PATCH', `/api/members/${user.id}`, { role: 'member' });
    expect(demote.status).toBe(409);
    expect(demote.body.error).toBe('last_owner');
    // Lin owns their own org; in Acme they are a member: owner-only routes are 403 there.
    expect((await lin.call('GET', '/api/audit')).status).toBe(200);
    const sw = await lin.call('POST', '/api/session/org', { org_id: org.id });
    expect(sw.body).toEqual({ org, role: 'member' });
    const forbidden = await lin.call('GET', '/api/audit');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden');
    expect((await lin.call('GET', '/api/members')).status).toBe(200);
  });
});
