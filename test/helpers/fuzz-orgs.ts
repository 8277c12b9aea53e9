import type { HostedFixture } from './hosted.js';
import { publishPureAutomation } from './pure-automation.js';

/**
 * The two orgs of the hosted API fuzz (test/e2e/hosted-fuzz.test.ts): org A attacks with its own
 * sessions and keys (and forged ones of B), org B is the victim. Their users call the service in
 * process (`service.fetch`); `setupOrgs` fills A and B, `heal` keeps A able to attack, `snapshotB`
 * reads all of B's data.
 */

export const PASSWORD = 'correct horse battery';
/** Caps a hung answer; never a timing assertion. */
const ANSWER_CAP_MS = 60_000;

let h: HostedFixture;
let base: string;

// ---------------------------------------------------------------------------------------------
// In-process calls

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function readCapped(res: Response, what: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: the answer to ${what} did not end within ${ANSWER_CAP_MS} ms`)), ANSWER_CAP_MS);
  });
  try {
    return await Promise.race([res.text(), cap]);
  } finally {
    clearTimeout(timer);
  }
}

export async function exchange(method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<Answer> {
  const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  const res = await h.service.fetch(new Request(base + path, { method, headers, ...(hasBody ? { body: body as BodyInit } : {}) }));
  return { status: res.status, headers: res.headers, text: await readCapped(res, `${method} ${path.slice(0, 100)}`) };
}

/** A cookie-jar user of the service, in process. */
export class User {
  cookie: string | undefined;
  constructor(readonly email: string) {}

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.cookie = `svc_session=${this.cookie}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await h.service.fetch(new Request(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }));
    this.take(res.headers);
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  /** Keep the session cookie a response sets (a browser would). */
  take(headers: Headers): void {
    for (const c of headers.getSetCookie()) {
      const m = /^svc_session=([^;]*)/.exec(c);
      if (m) this.cookie = m[1] === '' ? undefined : m[1];
    }
  }

  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await this.call(method, path, body);
    if (r.status >= 300) throw new Error(`${this.email}: ${method} ${path} -> ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }
}

// ---------------------------------------------------------------------------------------------
// The two orgs

export const ownerA = new User('owner@a.test');
export const memberA = new User('member@a.test');
export const ownerB = new User('owner@b.test');
const memberB = new User('member@b.test');

export const A = {
  org: '',
  owner: '',
  member: '',
  greet: '',
  draft: '',
  schedule: '',
  webhook: '',
  execution: '',
  run: '',
  keys: { live: '', test: '', scoped: '' },
  keyIds: [] as string[],
  digest: '',
};
export const B = { org: '', owner: '', member: '', flow: '', draft: '', schedule: '', webhook: '', execution: '', run: '', key: '', keyId: '', cookie: '' };

/** Strings of B that no request of the fuzz ever sends: none may appear in any answer. */
export const B_PRIVATE = [
  'B private task text',
  'B-PRIVATE-SECRET-VALUE-7f3',
  'hooks.b-private.test',
  'B private hook',
  'B private run input',
  'B private schedule input',
  'Org B victim',
  'owner@b.test',
  'member@b.test',
];

export async function setupOrgs(fixture: HostedFixture): Promise<void> {
  h = fixture;
  base = fixture.url;
  const signup = async (u: User, org?: string) =>
    (await u.ok('POST', '/api/auth/signup', { email: u.email, password: PASSWORD, ...(org ? { org_name: org } : {}) })) as {
      user: { id: string };
      org: { id: string };
    };
  const a = await signup(ownerA, 'Org A attacker');
  A.org = a.org.id;
  A.owner = a.user.id;
  A.member = (await signup(memberA)).user.id;
  await ownerA.ok('POST', '/api/members', { email: memberA.email, role: 'member' });
  await memberA.ok('POST', '/api/session/org', { org_id: A.org });
  const b = await signup(ownerB, 'Org B victim');
  B.org = b.org.id;
  B.owner = b.user.id;
  B.member = (await signup(memberB)).user.id;
  await ownerB.ok('POST', '/api/members', { email: memberB.email, role: 'member' });
  await memberB.ok('POST', '/api/session/org', { org_id: B.org });

  const greet = await publishPureAutomation(h.storage, h.engine, A.org, A.owner, 'greet');
  A.greet = greet.id;
  A.digest = greet.live_digest;
  B.flow = (await publishPureAutomation(h.storage, h.engine, B.org, B.owner, 'b-flow')).id;
  A.draft = (await ownerA.ok('POST', '/api/automations', { name: 'a-draft', site: 'https://site.a.test', task: 'A task' })).automation.id;
  B.draft = (await ownerB.ok('POST', '/api/automations', { name: 'b-draft', site: 'https://site.b.test', task: 'B private task text' })).automation.id;
  await ownerB.ok('PATCH', `/api/authoring/${B.draft}`, {
    captured_ops: [
      { kind: 'navigate', url: 'https://site.b.test/start' },
      { kind: 'click', target: { label: 'Go' } },
    ],
  });
  await ownerA.ok('PUT', '/api/secrets/a_secret', { value: 'A-SECRET-VALUE' });
  await ownerB.ok('PUT', '/api/secrets/b_secret', { value: 'B-PRIVATE-SECRET-VALUE-7f3' });

  const mint = async (u: User, body: unknown) => (await u.ok('POST', '/api/keys', body)) as { key: { id: string }; secret: string };
  const live = await mint(ownerA, { mode: 'live', name: 'a-live' });
  const test = await mint(ownerA, { mode: 'test', name: 'a-test' });
  const scoped = await mint(ownerA, { mode: 'live', name: 'a-scoped', automations: ['greet'] });
  A.keys = { live: live.secret, test: test.secret, scoped: scoped.secret };
  A.keyIds = [live.key.id, test.key.id, scoped.key.id];
  const bKey = await mint(ownerB, { mode: 'live', name: 'b-live' });
  B.key = bKey.secret;
  B.keyId = bKey.key.id;
  B_PRIVATE.push(bKey.secret);

  // 29 February 03:00: the schedules never fire during the test (and the scheduler is off anyway).
  A.schedule = (await ownerA.ok('POST', `/api/automations/${A.greet}/schedules`, { cron: '0 3 29 2 *', inputs: { who: 'a' } })).schedule.id;
  B.schedule = (
    await ownerB.ok('POST', `/api/automations/${B.flow}/schedules`, { cron: '0 3 29 2 *', inputs: { who: 'B private schedule input' } })
  ).schedule.id;
  A.webhook = (await ownerA.ok('POST', '/api/webhooks', { url: 'https://hooks.a.test/in' })).webhook.id;
  const hookB = await ownerB.ok('POST', '/api/webhooks', { url: 'https://hooks.b-private.test/in', description: 'B private hook' });
  B.webhook = hookB.webhook.id;
  B_PRIVATE.push(hookB.secret);

  const run = async (key: string, flow: string, who: string) => {
    const res = await exchange(
      'POST',
      `/v1/run/${flow}`,
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      JSON.stringify({ inputs: { who } }),
    );
    const body = JSON.parse(res.text);
    if (body.status !== 'succeeded') throw new Error(`setup run of ${flow}: ${res.text}`);
    return body.run_id as string;
  };
  A.run = await run(A.keys.live, 'greet', 'a');
  B.run = await run(B.key, 'b-flow', 'B private run input');
  A.execution = (await ownerA.ok('GET', '/api/executions')).executions[0].id;
  B.execution = (await ownerB.ok('GET', '/api/executions')).executions[0].id;
  B.cookie = ownerB.cookie!;
}

// ---------------------------------------------------------------------------------------------
// Keeping A able to attack: sessions rotate (switch org, new org), get revoked (logout), members are
// removed and demoted, keys revoked by A's own valid requests. Repaired between requests, as a
// determined attacker would.

export async function heal(): Promise<void> {
  // Reads first; a write only where something changed.
  const state = async (u: User) => {
    // Without a cookie, GET /api/session would provision a new account (outside production).
    let s = u.cookie ? await u.call('GET', '/api/session') : undefined;
    if (!s || s.status === 401 || s.body.user.email !== u.email) {
      u.cookie = undefined;
      const login = await u.call('POST', '/api/auth/login', { email: u.email, password: PASSWORD });
      if (login.status !== 200) throw new Error(`heal: login of ${u.email}: ${login.status} ${JSON.stringify(login.body)}`);
      s = await u.call('GET', '/api/session');
    }
    const body = s.body as { org: { id: string }; orgs: { id: string; role: string }[] };
    return { active: body.org.id === A.org, role: body.orgs.find((o) => o.id === A.org)?.role };
  };
  const inA = async (u: User) => (await u.call('POST', '/api/session/org', { org_id: A.org })).status === 200;
  let owner = await state(ownerA);
  let member = await state(memberA);
  if (owner.role !== 'owner') {
    // Org A always has an owner (last_owner): if it is no longer owner A, it is member A.
    if (member.role !== 'owner') throw new Error(`heal: no owner of org A among its two users (${owner.role}, ${member.role})`);
    if (!member.active) await inA(memberA);
    if (owner.role === undefined) await memberA.ok('POST', '/api/members', { email: ownerA.email, role: 'owner' });
    else await memberA.ok('PATCH', `/api/members/${A.owner}`, { role: 'owner' });
    owner = { active: false, role: 'owner' };
  }
  if (!owner.active && !(await inA(ownerA))) throw new Error('heal: owner A cannot return to org A');
  if (member.role === undefined) {
    await ownerA.ok('POST', '/api/members', { email: memberA.email, role: 'member' });
    member = { active: false, role: 'member' };
  } else if (member.role !== 'member') {
    await ownerA.ok('PATCH', `/api/members/${A.member}`, { role: 'member' });
  }
  if (!member.active && !(await inA(memberA))) throw new Error('heal: member A cannot return to org A');
  const keys = (await ownerA.ok('GET', '/api/keys')).keys as { id: string; revoked_at: string | null }[];
  const revoked = (id: string) => keys.find((k) => k.id === id)?.revoked_at !== null;
  const remint = async (slot: 'live' | 'test' | 'scoped', body: unknown) => {
    const r = await ownerA.ok('POST', '/api/keys', body);
    A.keys[slot] = r.secret;
    A.keyIds.push(r.key.id);
  };
  const current = A.keyIds.slice(-3);
  if (revoked(current[0]!) || revoked(current[1]!) || revoked(current[2]!)) {
    await remint('live', { mode: 'live', name: 'a-live' });
    await remint('test', { mode: 'test', name: 'a-test' });
    await remint('scoped', { mode: 'live', name: 'a-scoped', automations: ['greet'] });
  }
  const greet = (await ownerA.ok('GET', `/api/automations/${A.greet}`)).automation;
  if (greet.mcp_enabled === false) await ownerA.ok('PATCH', `/api/automations/${A.greet}`, { mcp_enabled: true });
}

// ---------------------------------------------------------------------------------------------
// B's data, through B's own API and (secrets) storage

export async function snapshotB(): Promise<unknown> {
  const get = async (path: string) => {
    const r = await ownerB.call('GET', path);
    return { path, status: r.status, body: r.body };
  };
  const out: unknown[] = [];
  for (const p of [
    '/api/session',
    '/api/members',
    '/api/keys',
    '/api/secrets',
    '/api/automations',
    '/api/webhooks',
    '/api/executions?limit=200',
    '/api/audit?limit=200',
    '/api/audit/verify',
    '/api/flowspecs/b-flow',
  ])
    out.push(await get(p));
  const automations = ((out[4] as { body: { automations: { id: string }[] } }).body.automations ?? []).map((a) => a.id);
  for (const id of automations) {
    for (const p of [`/api/automations/${id}`, `/api/automations/${id}/versions`, `/api/authoring/${id}`, `/api/automations/${id}/schedules`])
      out.push(await get(p));
  }
  for (const w of (out[5] as { body: { webhooks: { id: string }[] } }).body.webhooks ?? []) out.push(await get(`/api/webhooks/${w.id}/deliveries`));
  for (const e of (out[6] as { body: { executions: { id: string }[] } }).body.executions ?? []) out.push(await get(`/api/executions/${e.id}`));
  // Sealed values: a rewrite (even of the same value) gets a fresh IV, so the ciphertext moves.
  out.push(await h.storage.secrets.list(B.org));
  out.push(await h.storage.schedules.fires(B.org, B.schedule, 100));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Credentials a request is sent with

export type Cred = 'none' | 'ownerA' | 'memberA' | 'forgedB' | 'garbageCookie' | 'liveA' | 'testA' | 'scopedA' | 'badKeyB' | 'junkBearer' | 'cookieAndKey';

/** Flip one character of the signature (or key checksum): well-formed, never valid. */
const flipLast = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');

export function credHeaders(cred: Cred): { headers: Record<string, string>; user?: User } {
  switch (cred) {
    case 'none':
      return { headers: {} };
    case 'ownerA':
      return { headers: ownerA.cookie ? { cookie: `svc_session=${ownerA.cookie}` } : {}, user: ownerA };
    case 'memberA':
      return { headers: memberA.cookie ? { cookie: `svc_session=${memberA.cookie}` } : {}, user: memberA };
    case 'forgedB':
      return { headers: { cookie: `svc_session=${flipLast(B.cookie)}` } };
    case 'garbageCookie':
      return { headers: { cookie: 'svc_session=garbage.garbage; other=1' } };
    case 'liveA':
      return { headers: { authorization: `Bearer ${A.keys.live}` } };
    case 'testA':
      return { headers: { authorization: `Bearer ${A.keys.test}` } };
    case 'scopedA':
      return { headers: { authorization: `Bearer ${A.keys.scoped}` } };
    case 'badKeyB':
      return { headers: { authorization: `Bearer ${flipLast(B.key)}` } };
    case 'junkBearer':
      return { headers: { authorization: 'Bearer svc_live_%00\u00e9' } };
    case 'cookieAndKey':
      return { headers: { ...(ownerA.cookie ? { cookie: `svc_session=${ownerA.cookie}` } : {}), authorization: `Bearer ${A.keys.live}` }, user: ownerA };
  }
}
