import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { postFrom } from '../helpers/source-address.js';
import { waitUntil } from '../helpers/wait.js';

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

describe('login and signup limits', () => {
  it('per IP: past the limit, 429 rate_limited with Retry-After and RateLimit headers', async () => {
    const s = await startHosted({ authIpLimitPerMinute: 3 });
    try {
      const c = new Client(s.url);
      for (let i = 0; i < 3; i++) expect((await c.call('POST', '/api/auth/login', { email: 'x@example.test', password: 'wrong password' })).status).toBe(401);
      const limited = await c.call('POST', '/api/auth/signup', { email: 'y@example.test', password: 'correct horse battery' });
      expect(limited.status).toBe(429);
      expect(limited.body.error).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('ratelimit')).toMatch(/^limit=3, remaining=0, reset=\d+$/);
    } finally {
      await s.close();
    }
  });

  it('per (account, address): after the failures allowed, even the right password waits there; one answer for unknown and wrong', async () => {
    const s = await startHosted({ authAccountFailuresPer15Min: 2, authDelayBaseSeconds: 600 });
    try {
      const c = new Client(s.url);
      await c.signup('lock@example.test', 'correct horse battery');
      const unknown = await c.call('POST', '/api/auth/login', { email: 'nobody@example.test', password: 'correct horse battery' });
      const wrong = await c.call('POST', '/api/auth/login', { email: 'lock@example.test', password: 'wrong password!' });
      expect(unknown.status).toBe(401);
      expect(wrong.status).toBe(401);
      expect(unknown.body).toEqual(wrong.body);
      expect((await c.call('POST', '/api/auth/login', { email: 'lock@example.test', password: 'wrong again!!' })).status).toBe(401);
      const locked = await c.call('POST', '/api/auth/login', { email: 'lock@example.test', password: 'correct horse battery' });
      expect(locked.status).toBe(429);
      // Another account from the same IP is not locked.
      await c.signup('free@example.test', 'correct horse battery');
      expect((await c.call('POST', '/api/auth/login', { email: 'free@example.test', password: 'correct horse battery' })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('login limits a third party cannot turn against an owner (two source addresses)', () => {
  const login = (from: string, url: string, email: string, password: string) => postFrom(from, `${url}/api/auth/login`, { email, password });

  it('failures from 127.0.0.2 delay that address only, progressively; the owner on 127.0.0.1 logs in', async () => {
    const s = await startHosted({ authAccountFailuresPer15Min: 3, authDelayBaseSeconds: 2, authIpFailuresPer15Min: 1000 });
    try {
      await new Client(s.url).signup('owner@example.test', 'correct horse battery');
      for (let i = 0; i < 3; i++) expect((await login('127.0.0.2', s.url, 'owner@example.test', `wrong password ${i}`)).status).toBe(401);
      // The third failure started the pair's delay: even the right password waits, from that address.
      const held = await login('127.0.0.2', s.url, 'owner@example.test', 'correct horse battery');
      expect([held.status, held.body.error]).toEqual([429, 'rate_limited']);
      const first = Number(held.headers['retry-after']);
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(2);
      // The owner, from another address, with the right password: in.
      const owner = await login('127.0.0.1', s.url, 'owner@example.test', 'correct horse battery');
      expect(owner.status).toBe(200);
      // Once the delay is over, the next failure doubles it.
      let after = await login('127.0.0.2', s.url, 'owner@example.test', 'wrong password 3');
      await waitUntil(
        async () => {
          if (after.status === 429) after = await login('127.0.0.2', s.url, 'owner@example.test', 'wrong password 3');
          return after.status !== 429;
        },
        { what: 'the delay of the pair to end' },
      );
      expect(after.status).toBe(401);
      const doubled = await login('127.0.0.2', s.url, 'owner@example.test', 'correct horse battery');
      expect(doubled.status).toBe(429);
      expect(Number(doubled.headers['retry-after'])).toBeGreaterThan(2);
      expect(Number(doubled.headers['retry-after'])).toBeLessThanOrEqual(4);
      expect((await login('127.0.0.1', s.url, 'owner@example.test', 'correct horse battery')).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('per source address: failures over many accounts hold that address, not the others', async () => {
    const s = await startHosted({ authIpFailuresPer15Min: 4 });
    try {
      await new Client(s.url).signup('sprayed@example.test', 'correct horse battery');
      for (let i = 0; i < 4; i++) expect((await login('127.0.0.2', s.url, `victim${i}@example.test`, 'wrong password')).status).toBe(401);
      const held = await login('127.0.0.2', s.url, 'sprayed@example.test', 'correct horse battery');
      expect([held.status, held.body.error, Number(held.headers['retry-after']) > 0]).toEqual([429, 'rate_limited', true]);
      expect((await login('127.0.0.1', s.url, 'sprayed@example.test', 'correct horse battery')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('org rules through the API', () => {
  it('two owners demoting each other at once: exactly one succeeds, one owner remains', async () => {
    const a = new Client(h.url);
    const b = new Client(h.url);
    const { org } = await a.signup('pair-a@example.test');
    const { user: ub } = await b.signup('pair-b@example.test');
    await a.addMember(b, 'pair-b@example.test', org.id, 'owner');
    const ua = (await a.call('GET', '/api/session')).body.user;
    const results = await Promise.all([
      a.call('PATCH', `/api/members/${ub.id}`, { role: 'member' }),
      b.call('PATCH', `/api/members/${ua.id}`, { role: 'member' }),
    ]);
    // The loser is refused either by the rule (409 last_owner) or, when the winner committed before
    // its role was read, as the member it has become (403 forbidden).
    const statuses = results.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const owners = (await a.call('GET', '/api/members')).body.members.filter((m: any) => m.role === 'owner');
    expect(owners).toHaveLength(1);
  });

  it('creating an org makes it the active one; an unknown or foreign org cannot be switched to', async () => {
    const c = new Client(h.url);
    const { org: first } = await c.signup('orgs@example.test');
    const created = await c.call('POST', '/api/orgs', { name: 'Second' });
    expect(created.status).toBe(200);
    expect(created.body.org.name).toBe('Second');
    const s = await c.call('GET', '/api/session');
    expect(s.body.org.id).toBe(created.body.org.id);
    expect(s.body.orgs.map((o: any) => o.name)).toEqual([first.name, 'Second']);
    expect((await c.call('POST', '/api/session/org', { org_id: 'nope' })).status).toBe(404);
    const bad = await c.call('POST', '/api/orgs', { name: '' });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ error: 'invalid_request', issues: [{ path: ['name'] }] });
    expect((await c.call('POST', '/api/orgs', { name: 'x'.repeat(121) })).status).toBe(422);
  });

  it('a cookie-authenticated write from a foreign Origin is 403; the same write without Origin works', async () => {
    const c = new Client(h.url);
    await c.signup('csrf@example.test');
    const evil = Object.assign(new Client(h.url, 'https://evil.example'), { cookie: c.cookie });
    const res = await evil.call('POST', '/api/keys', { mode: 'live' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect((await c.call('GET', '/api/keys')).body.keys).toEqual([]);
    const form = await c.call('POST', '/api/keys', 'mode=live', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect((await c.call('POST', '/api/keys', { mode: 'live' })).status).toBe(201);
  });

  it('outside production GET /api/session provisions a user and org when no cookie is sent; a bad cookie is 401', async () => {
    const c = new Client(h.url);
    const first = await c.call('GET', '/api/session');
    expect(first.status).toBe(200);
    expect(first.body.role).toBe('owner');
    expect(c.cookie).toBeDefined();
    expect((await c.call('GET', '/api/session')).body.user.id).toBe(first.body.user.id);
    const bad = await c.call('GET', '/api/session', undefined, { cookie: 'svc_session=forged.value' });
    expect(bad.status).toBe(401);
  });

  it('in production GET /api/session never provisions', async () => {
    const s = await startHosted({ production: true, secretsKeys: [Buffer.alloc(32, 7)] });
    try {
      const res = await new Client(s.url).call('GET', '/api/session');
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthenticated');
    } finally {
      await s.close();
    }
  });
});
