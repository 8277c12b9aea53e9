import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/engine/defaults.js';
import type { Clock } from '../../src/ports/clock.js';
import { signSession } from '../../src/service/auth/session-cookie.js';
import type { ServiceRoute } from '../../src/service/route-table.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * The tenancy matrix, generated from the route table: every session or owner route, times no cookie,
 * a tampered cookie, an expired cookie, a revoked session, a session past its 30 days, a cookie of
 * another org, and a member on owner-only routes, gives exactly the status docs/hosted-api.md names,
 * and no answer to a foreign cookie carries data of the other org.
 */

const SECRET = 's'.repeat(40);
let offsetMs = 0;
const base = systemClock();
const clock: Clock = { ...base, now: () => new Date(Date.now() + offsetMs).toISOString() };

let h: HostedFixture;
const A = { owner: undefined as unknown as Client, member: undefined as unknown as Client };
let B: Client;
const secretsOfA: string[] = [];
const ids = { ownerA: '', memberA: '', keyA: '', orgA: '', automationA: '', digestA: '', executionA: '', runA: '', scheduleA: '', webhookA: '' };

beforeAll(async () => {
  h = await startHosted(
    { sessionSecrets: [SECRET] },
    // A controlled clock: the test moves time past session and key expiries instead of waiting.
    { clock },
  );
  A.owner = new Client(h.url);
  A.member = new Client(h.url);
  B = new Client(h.url);
  const a = await A.owner.signup('owner-a@tenant-a.test', 'correct horse battery', 'Tenant A Org');
  const m = await A.member.signup('member-a@tenant-a.test');
  await B.signup('owner-b@tenant-b.test', 'correct horse battery', 'Tenant B Org');
  ids.ownerA = a.user.id;
  ids.memberA = m.user.id;
  ids.orgA = a.org.id;
  await A.owner.addMember(A.member, 'member-a@tenant-a.test', a.org.id);
  const key = await A.owner.call('POST', '/api/keys', { mode: 'live', name: 'tenant-a-key', automations: ['tenant-a-flow'] });
  ids.keyA = key.body.key.id;
  const auto = await A.owner.call('POST', '/api/automations', { name: 'tenant-a-flow', site: 'https://tenant-a.test', task: 'Tenant A task text' });
  ids.automationA = auto.body.automation.id;
  await A.owner.call('PATCH', `/api/authoring/${ids.automationA}`, {
    captured_ops: [
      { kind: 'navigate', url: 'https://tenant-a.test/start' },
      { kind: 'extract', target: '#tenant-a-target', name: 'tenant_a_out' },
    ],
  });
  ids.digestA = (await A.owner.call('POST', `/api/authoring/${ids.automationA}/publish`)).body.flow_digest;
  expect(ids.digestA).toMatch(/^sha256:/);
  await A.owner.call('PUT', '/api/secrets/tenant_a_secret', { value: 'TENANT-A-SECRET-VALUE' });
  // A schedule of A (29 February 03:00: it never fires during the test).
  ids.scheduleA = (await A.owner.call('POST', `/api/automations/${ids.automationA}/schedules`, { cron: '0 3 29 2 *' })).body.schedule.id;
  expect(ids.scheduleA).toBeTruthy();
  // A webhook endpoint of A (never reachable: no run happens after it exists).
  const hook = await A.owner.call('POST', '/api/webhooks', { url: 'https://hooks.tenant-a.test/in', description: 'tenant-a-hook' });
  ids.webhookA = hook.body.webhook.id;
  expect(ids.webhookA).toBeTruthy();
  secretsOfA.push(hook.body.secret, 'hooks.tenant-a.test', 'tenant-a-hook');
  // One run of A's automation (it fails: its site is not reachable), so A has an execution.
  const run = await fetch(`${h.url}/v1/run/tenant-a-flow`, { method: 'POST', headers: { authorization: `Bearer ${key.body.secret}` } });
  ids.runA = (await run.json()).run_id;
  ids.executionA = (await A.owner.call('GET', '/api/executions')).body.executions[0].id;
  expect(ids.executionA).toBeTruthy();
  secretsOfA.push(ids.runA, ids.executionA, 'Tenant A task text', 'tenant-a.test', 'tenant_a_out', 'TENANT-A-SECRET-VALUE', ids.automationA, ids.digestA);
  secretsOfA.push(
    key.body.secret,
    'Tenant A Org',
    'owner-a@tenant-a.test',
    'member-a@tenant-a.test',
    'tenant-a-key',
    'tenant-a-flow',
    ids.ownerA,
    ids.memberA,
    ids.keyA,
    ids.orgA,
    ids.scheduleA,
  );
});
afterAll(async () => {
  await h?.close();
});

/** A grant id no org has. */
const NO_GRANT = '00000000-0000-4000-8000-000000000000';

/** A valid request for every route: path with params pointing at tenant A's objects, and a body. */
function example(route: ServiceRoute): { path: string; body?: unknown } {
  const key = `${route.method} ${route.path}`;
  const table: Record<string, { path: string; body?: unknown }> = {
    'post /api/auth/logout': { path: '/api/auth/logout' },
    'post /api/session/org': { path: '/api/session/org', body: { org_id: ids.orgA } },
    'post /api/orgs': { path: '/api/orgs', body: { name: 'Another org' } },
    'get /api/members': { path: '/api/members' },
    'post /api/members': { path: '/api/members', body: { email: 'owner-b@tenant-b.test', role: 'member' } },
    'patch /api/members/{userId}': { path: `/api/members/${ids.ownerA}`, body: { role: 'member' } },
    'delete /api/members/{userId}': { path: `/api/members/${ids.memberA}` },
    'post /api/keys': { path: '/api/keys', body: { mode: 'test' } },
    'get /api/keys': { path: '/api/keys' },
    'delete /api/keys/{id}': { path: `/api/keys/${ids.keyA}` },
    'get /api/audit': { path: '/api/audit' },
    'get /api/audit/verify': { path: '/api/audit/verify' },
    'post /api/automations': { path: '/api/automations', body: { name: 'matrix-made', site: 'https://x.test' } },
    'get /api/automations': { path: '/api/automations' },
    'get /api/automations/{id}': { path: `/api/automations/${ids.automationA}` },
    'patch /api/automations/{id}': { path: `/api/automations/${ids.automationA}`, body: { task: 'changed by the matrix' } },
    'get /api/automations/{id}/versions': { path: `/api/automations/${ids.automationA}/versions` },
    'post /api/automations/{id}/rollback': { path: `/api/automations/${ids.automationA}/rollback`, body: { flow_digest: ids.digestA } },
    'post /api/automations/example': { path: '/api/automations/example' },
    'get /api/flowspecs/{name}': { path: '/api/flowspecs/tenant-a-flow' },
    'get /api/authoring/{id}': { path: `/api/authoring/${ids.automationA}` },
    'patch /api/authoring/{id}': { path: `/api/authoring/${ids.automationA}`, body: { input_slots: [] } },
    'put /api/authoring/{id}/files/{name}': { path: `/api/authoring/${ids.automationA}/files/a.txt`, body: { content_base64: 'eA==' } },
    'post /api/authoring/{id}/publish': { path: `/api/authoring/${ids.automationA}/publish` },
    'post /api/authoring/{id}/edit': { path: `/api/authoring/${ids.automationA}/edit` },
    'post /api/authoring/{id}/test': { path: `/api/authoring/${ids.automationA}/test` },
    'put /api/secrets/{name}': { path: '/api/secrets/tenant_a_secret', body: { value: 'overwritten?' } },
    'get /api/secrets': { path: '/api/secrets' },
    'delete /api/secrets/{name}': { path: '/api/secrets/tenant_a_secret' },
    'get /api/executions': { path: '/api/executions' },
    'get /api/executions/{id}': { path: `/api/executions/${ids.executionA}` },
    'get /api/runs/{id}/stream': { path: `/api/runs/${ids.runA}/stream` },
    'get /api/executions/{id}/artifacts/{digest}': { path: `/api/executions/${ids.executionA}/artifacts/sha256:${'0'.repeat(64)}` },
    'post /api/automations/{id}/schedules': { path: `/api/automations/${ids.automationA}/schedules`, body: { cron: '0 3 29 2 *' } },
    'get /api/automations/{id}/schedules': { path: `/api/automations/${ids.automationA}/schedules` },
    'patch /api/schedules/{id}': { path: `/api/schedules/${ids.scheduleA}`, body: { enabled: false } },
    'delete /api/schedules/{id}': { path: `/api/schedules/${ids.scheduleA}` },
    'post /api/webhooks': { path: '/api/webhooks', body: { url: 'https://hooks.example.test/other' } },
    'get /api/webhooks': { path: '/api/webhooks' },
    'patch /api/webhooks/{id}': { path: `/api/webhooks/${ids.webhookA}`, body: { enabled: false } },
    'delete /api/webhooks/{id}': { path: `/api/webhooks/${ids.webhookA}` },
    'get /api/webhooks/{id}/deliveries': { path: `/api/webhooks/${ids.webhookA}/deliveries` },
    'get /api/oauth/grants': { path: '/api/oauth/grants' },
    'delete /api/oauth/grants/{id}': { path: `/api/oauth/grants/${NO_GRANT}` },
    'get /oauth/interaction/{uid}/details': { path: '/oauth/interaction/tenancy-uid/details' },
    'post /oauth/interaction/{uid}/allow': { path: '/oauth/interaction/tenancy-uid/allow', body: { org: ids.orgA, mode: 'live' } },
    'post /oauth/interaction/{uid}/deny': { path: '/oauth/interaction/tenancy-uid/deny' },
  };
  const found = table[key];
  if (!found) throw new Error(`the tenancy matrix has no example for ${key}: add one`);
  return found;
}

const authed = () => h.service.routes.filter((r) => r.auth === 'session' || r.auth === 'owner');

async function call(client: Client | { cookie?: string }, route: ServiceRoute) {
  const { path, body } = example(route);
  const c = client instanceof Client ? client : Object.assign(new Client(h.url), { cookie: client.cookie });
  return c.call(route.method.toUpperCase(), path, body);
}

describe('tenancy matrix (from the route table)', () => {
  it('covers every session and owner route', () => {
    expect(authed().length).toBeGreaterThanOrEqual(28);
    for (const r of authed()) expect(() => example(r)).not.toThrow();
  });

  it('no cookie: 401 unauthenticated on every route', async () => {
    for (const r of authed()) {
      const res = await call({ cookie: undefined }, r);
      expect([r.path, res.status, res.body?.error]).toEqual([r.path, 401, 'unauthenticated']);
    }
  });

  it('a tampered cookie: 401 (payload changed, signature changed, other secret)', async () => {
    const [body, sig] = A.owner.cookie!.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forgedBody = Buffer.from(JSON.stringify({ ...payload, exp: payload.exp + 1 })).toString('base64url');
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The first character flipped (always other bytes), and the last one respelled: base64url ignores
    // its two low bits, so this is the same signature written another way, refused too.
    const flipped = `${B64[(B64.indexOf(sig[0]!) + 1) % 64]}${sig.slice(1)}`;
    const last = B64.indexOf(sig.at(-1)!);
    const respelled = `${sig.slice(0, -1)}${B64[(last & ~3) | ((last + 1) & 3)]}`;
    const variants = [`${forgedBody}.${sig}`, `${body}.${flipped}`, `${body}.${respelled}`, signSession(payload, ['x'.repeat(40)]), 'garbage', ''];
    for (const cookie of variants) {
      for (const r of authed()) {
        const res = await call({ cookie }, r);
        expect([r.path, cookie.slice(0, 8), res.status]).toEqual([r.path, cookie.slice(0, 8), 401]);
      }
    }
  });

  it('an expired cookie (validly signed, exp in the past): 401', async () => {
    const payload = JSON.parse(Buffer.from(A.owner.cookie!.split('.')[0]!, 'base64url').toString());
    const cookie = signSession({ sid: payload.sid, exp: Math.floor(Date.now() / 1000) - 1 }, [SECRET]);
    for (const r of authed()) expect([r.path, (await call({ cookie }, r)).status]).toEqual([r.path, 401]);
  });

  it('a member on owner-only routes: 403 forbidden, nothing changed', async () => {
    const before = await A.owner.call('GET', '/api/audit');
    for (const r of authed().filter((x) => x.auth === 'owner')) {
      const res = await call(A.member, r);
      expect([r.path, res.status, res.body?.error]).toEqual([r.path, 403, 'forbidden']);
    }
    const after = await A.owner.call('GET', '/api/audit');
    expect(after.body.entries).toEqual(before.body.entries);
    expect((await A.owner.call('GET', '/api/members')).body.members).toHaveLength(2);
  });

  it("a cookie of another org: 404 for A's objects, lists of B only, no byte of A in any answer", async () => {
    const expected: Record<string, [number, string]> = {
      'post /api/session/org': [404, 'not_found'],
      'patch /api/members/{userId}': [404, 'not_found'],
      'delete /api/members/{userId}': [404, 'not_found'],
      'delete /api/keys/{id}': [404, 'not_found'],
      'get /api/automations/{id}': [404, 'not_found'],
      'patch /api/automations/{id}': [404, 'not_found'],
      'get /api/automations/{id}/versions': [404, 'not_found'],
      'post /api/automations/{id}/rollback': [404, 'not_found'],
      'get /api/flowspecs/{name}': [404, 'not_found'],
      'get /api/authoring/{id}': [404, 'not_found'],
      'patch /api/authoring/{id}': [404, 'not_found'],
      'put /api/authoring/{id}/files/{name}': [404, 'not_found'],
      'post /api/authoring/{id}/publish': [404, 'not_found'],
      'post /api/authoring/{id}/edit': [404, 'not_found'],
      'post /api/authoring/{id}/test': [404, 'not_found'],
      'get /api/executions/{id}': [404, 'not_found'],
      'get /api/runs/{id}/stream': [404, 'not_found'],
      'get /api/executions/{id}/artifacts/{digest}': [404, 'not_found'],
      'post /api/automations/{id}/schedules': [404, 'not_found'],
      'get /api/automations/{id}/schedules': [404, 'not_found'],
      'patch /api/schedules/{id}': [404, 'not_found'],
      'delete /api/schedules/{id}': [404, 'not_found'],
      'patch /api/webhooks/{id}': [404, 'not_found'],
      'delete /api/webhooks/{id}': [404, 'not_found'],
      'get /api/webhooks/{id}/deliveries': [404, 'not_found'],
      // No grant of that id in B's org; no authorization request in B's browser (its cookie binds it).
      'delete /api/oauth/grants/{id}': [404, 'not_found'],
      'get /oauth/interaction/{uid}/details': [404, 'not_found'],
      'post /oauth/interaction/{uid}/allow': [404, 'not_found'],
      'post /oauth/interaction/{uid}/deny': [404, 'not_found'],
      // B adding B's own owner to B's org: already a member.
      'post /api/members': [409, 'conflict'],
    };
    const safe = authed().filter((r) => r.path !== '/api/auth/logout' && r.path !== '/api/orgs');
    for (const r of safe) {
      const res = await call(B, r);
      const key = `${r.method} ${r.path}`;
      const text = JSON.stringify(res.body) + JSON.stringify([...res.headers]);
      for (const secret of secretsOfA) expect([key, text.includes(secret)]).toEqual([key, false]);
      if (expected[key] !== undefined) {
        expect([key, res.status, res.body.error]).toEqual([key, ...expected[key]!]);
      } else {
        expect([key, res.status < 300]).toEqual([key, true]);
      }
    }
    // A's key still works and A's members, automation and secret are untouched.
    const keys = await A.owner.call('GET', '/api/keys');
    expect(keys.body.keys.find((k: any) => k.id === ids.keyA).revoked_at).toBeNull();
    const auto = await A.owner.call('GET', `/api/automations/${ids.automationA}`);
    expect(auto.body.automation).toMatchObject({ task: 'Tenant A task text', live_digest: ids.digestA, status: 'published' });
    expect((await A.owner.call('GET', '/api/secrets')).body.secrets.map((x: any) => x.name)).toEqual(['tenant_a_secret']);
  });

  it('a revoked session (logged out) stays revoked for its old cookie: 401', async () => {
    const c = new Client(h.url);
    await c.call('POST', '/api/auth/login', { email: 'owner-a@tenant-a.test', password: 'correct horse battery' });
    const old = c.cookie;
    expect((await c.call('POST', '/api/auth/logout')).status).toBe(204);
    expect(c.cookie).toBeUndefined();
    for (const r of authed()) expect([r.path, (await call({ cookie: old }, r)).status]).toEqual([r.path, 401]);
  });

  it('a removed member loses access at once', async () => {
    const c = new Client(h.url);
    await c.signup('temp@tenant-a.test');
    await A.owner.call('POST', '/api/members', { email: 'temp@tenant-a.test', role: 'owner' });
    expect((await c.call('POST', '/api/session/org', { org_id: ids.orgA })).status).toBe(200);
    expect((await c.call('GET', '/api/keys')).status).toBe(200);
    const del = await A.owner.call('DELETE', `/api/members/${(await c.call('GET', '/api/session')).body.user.id}`);
    expect(del.status).toBe(204);
    expect((await c.call('GET', '/api/keys')).status).toBe(401);
  });

  it('past the 30-day absolute lifetime every session ends (server clock)', async () => {
    const c = new Client(h.url);
    await c.call('POST', '/api/auth/login', { email: 'owner-b@tenant-b.test', password: 'correct horse battery' });
    expect((await c.call('GET', '/api/members')).status).toBe(200);
    offsetMs = 30 * 24 * 3600 * 1000 + 1000;
    try {
      for (const r of authed()) expect([r.path, (await call(c, r)).status]).toEqual([r.path, 401]);
    } finally {
      offsetMs = 0;
    }
  });
});
