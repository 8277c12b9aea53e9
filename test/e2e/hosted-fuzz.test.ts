import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OP_KINDS } from '../../src/record/ops.js';
import { SERVICE_STATUS_BY_CODE } from '../../src/service/errors.js';
import type { ServiceRoute } from '../../src/service/route-table.js';
import { isReservedPath, reservedPrefixes } from '../../src/service/web-app.js';
import { anyString, bodyArb, contentTypeArb, junkValue, schemaArb, type JsonSchema } from '../helpers/fuzz-arbitraries.js';
import { startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { testSeed } from '../helpers/seeded.js';

/**
 * The hosted API under a seeded fast-check fuzz (issue 19; docs/hosted-api.md, "Security tests"):
 * every route of the route table (a new route is fuzzed without touching this file), plus the run
 * gateway's bodies, MCP JSON-RPC messages and requests off the table, at least TOTAL requests in
 * all, in process (`service.fetch`, PGlite in memory). Org A attacks with its own sessions and keys
 * (and forged ones of B); org B is the victim, whose ids are path parameters and body values.
 *
 * Every answer: no 5xx; an error is `{error, message}` (`{error: "invalid_request", issues}` for a
 * schema failure) with a code of SERVICE_STATUS_BY_CODE at that code's status; no byte of B's
 * private data. After each route's share, B's data read through B's own API (and its sealed secrets
 * through storage) is exactly what it was before.
 *
 * The seed is fixed (FLOWCTL_TEST_SEED replaces it); a failure prints the request that caused it, and
 * FLOWCTL_FUZZ_ONLY=<part of a category name> runs that category alone, with the same sequence.
 */

const SEED = testSeed(0x19_f0_22);
const TOTAL = 10_000;
const PASSWORD = 'correct horse battery';
/** Caps a hung answer; never a timing assertion. */
const ANSWER_CAP_MS = 60_000;

let h: HostedFixture;
let base: string;

// ---------------------------------------------------------------------------------------------
// In-process calls

interface Answer {
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

async function exchange(method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<Answer> {
  const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  const res = await h.service.fetch(new Request(base + path, { method, headers, ...(hasBody ? { body: body as BodyInit } : {}) }));
  return { status: res.status, headers: res.headers, text: await readCapped(res, `${method} ${path.slice(0, 100)}`) };
}

/** A cookie-jar user of the service, in process. */
class User {
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

const ownerA = new User('owner@a.test');
const memberA = new User('member@a.test');
const ownerB = new User('owner@b.test');
const memberB = new User('member@b.test');

const A = {
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
const B = { org: '', owner: '', member: '', flow: '', draft: '', schedule: '', webhook: '', execution: '', run: '', key: '', keyId: '', cookie: '' };

/** Strings of B that no request of the fuzz ever sends: none may appear in any answer. */
const B_PRIVATE = [
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

async function setupOrgs(): Promise<void> {
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

async function heal(): Promise<void> {
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

async function snapshotB(): Promise<unknown> {
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
// Generators

type Cred = 'none' | 'ownerA' | 'memberA' | 'forgedB' | 'garbageCookie' | 'liveA' | 'testA' | 'scopedA' | 'badKeyB' | 'junkBearer' | 'cookieAndKey';

const credArb = (auth: ServiceRoute['auth'] | 'mixed'): fc.Arbitrary<Cred> => {
  const rare = fc.constantFrom<Cred>('none', 'forgedB', 'garbageCookie', 'badKeyB', 'junkBearer', 'cookieAndKey');
  if (auth === 'bearer') return fc.oneof({ weight: 8, arbitrary: fc.constantFrom<Cred>('liveA', 'liveA', 'testA', 'scopedA') }, { weight: 2, arbitrary: rare });
  if (auth === 'session' || auth === 'owner')
    return fc.oneof({ weight: 8, arbitrary: fc.constantFrom<Cred>('ownerA', 'ownerA', 'ownerA', 'memberA') }, { weight: 2, arbitrary: rare });
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom<Cred>('none', 'ownerA', 'liveA') }, { weight: 1, arbitrary: rare });
};

/** Flip one character of the signature (or key checksum): well-formed, never valid. */
const flipLast = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');

function credHeaders(cred: Cred): { headers: Record<string, string>; user?: User } {
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

const ids = () => ({
  a: [A.org, A.owner, A.member, A.greet, A.draft, A.schedule, A.webhook, A.execution, A.run, ...A.keyIds.slice(-3), 'greet', 'a-draft', 'a_secret', A.digest],
  b: [B.org, B.owner, B.member, B.flow, B.draft, B.schedule, B.webhook, B.execution, B.run, B.keyId, 'b-flow', 'b-draft', 'b_secret'],
});

/** A path parameter: an id or name of A, of B (the attack), or junk; usually percent-encoded. */
const paramArb = fc
  .tuple(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .constant(0)
          .map(() => ids().a)
          .chain((xs) => fc.constantFrom(...xs)),
      },
      {
        weight: 4,
        arbitrary: fc
          .constant(0)
          .map(() => ids().b)
          .chain((xs) => fc.constantFrom(...xs)),
      },
      { weight: 2, arbitrary: anyString.map((s) => s.slice(0, 3000)) },
    ),
    fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  )
  .map(([v, encode]) => (encode ? encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '\ufffd')) : v.replace(/[#?/]/g, '') || '%20'));

const target = fc.oneof(
  anyString,
  fc.record({ css: anyString }),
  fc.record({ label: anyString }),
  fc.record({ role: fc.constantFrom('button', 'textbox', 'x'), name: anyString }),
  fc.record({ testid: anyString }),
  junkValue,
);
const opArb = fc.record(
  {
    kind: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...OP_KINDS) }, { weight: 1, arbitrary: anyString }),
    target,
    url: fc.constantFrom('https://site.a.test/', 'javascript:alert(1)', 'file:///etc/passwd', 'http://127.0.0.1:1/', 'https://site.b.test/start'),
    value: fc.oneof(anyString, fc.constantFrom('A-SECRET-VALUE', 'QS1TRUNSRVQtVkFMVUU=', 'A%2DSECRET%2DVALUE')),
    slot: fc.constantFrom('a_secret', 'b_secret', 'who', '1bad', ''),
    name: fc.constantFrom('out', 'x y', ''),
    key: fc.constantFrom('Enter', 'Control+A', 'NoSuchKey', ''),
    files: fc.constantFrom('/etc/passwd', '../x', ['a.txt']),
    page: fc.integer({ min: -1, max: 3 }),
    frame: target,
  },
  { requiredKeys: ['kind'] },
);

function extraFor(property: string): fc.Arbitrary<unknown> | undefined {
  switch (property) {
    case 'email':
      return fc.oneof(
        fc.constantFrom('owner@a.test', 'member@a.test', 'nobody@example.test', 'OWNER@A.TEST ', 'a@b', '@', 'x@y.z'.repeat(60)),
        fc.emailAddress(),
      );
    case 'password':
      return fc.constantFrom(PASSWORD, 'short', 'x'.repeat(1025), '');
    case 'org_id':
      return fc.constant(0).chain(() => fc.constantFrom(A.org, B.org, 'nope'));
    case 'flow_digest':
      return fc.constant(0).chain(() => fc.constantFrom(A.digest, `sha256:${'f'.repeat(64)}`, 'md5:x'));
    case 'url':
    case 'site':
      return fc.constantFrom(
        'https://hooks.a.test/x',
        'http://127.0.0.1:1/x',
        'http://169.254.169.254/latest',
        'ftp://x.test/',
        'https://user:pw@x.test/',
        'not a url',
        `https://${'x'.repeat(3000)}.test`,
      );
    case 'cron':
      return fc.constantFrom('* * * * *', '0 3 29 2 *', '@daily', '*/1 * * * * *', '0 0 31 2 *', '60 * * * *', '* * * * * * *', '0,1 * * * * *', '');
    case 'timezone':
      return fc.constantFrom('Europe/Berlin', 'UTC', 'Mars/Olympus', '', '../../etc/localtime');
    case 'inputs':
      return fc.constantFrom({ who: 'x' }, { who: 5 }, { a_secret: 'x' }, { b_secret: 'x' }, JSON.parse('{"__proto__":{"who":1}}'), {
        who: 'y'.repeat(100_000),
      });
    case 'name':
      return fc.constantFrom('greet', 'b-flow', 'a-draft', 'b-draft', 'new-flow', 'UPPER', '-x', 'get-run-status', 'a.txt');
    case 'automations':
      return fc.constantFrom(['greet'], ['b-flow'], [], ['*'], ['greet', 'greet']);
    case 'captured_ops':
      return opArb;
    case 'content_base64':
      return fc.constantFrom('eA==', '!!!', '', 'x'.repeat(10), Buffer.from('A-SECRET-VALUE').toString('base64'));
    case 'value':
      return fc.constantFrom('A-SECRET-VALUE', 'v', '');
    default:
      return undefined;
  }
}

interface Req {
  method: string;
  path: string;
  query: [string, string][];
  cred: Cred;
  contentType: string | undefined;
  body: string | Uint8Array | undefined;
  extraHeaders: Record<string, string>;
}

const originArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({ origin: 'https://evil.test' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }) },
);
const headerArb = fc
  .tuple(
    originArb,
    fc.oneof(
      { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Record<string, string>>(
          { 'last-event-id': '3' },
          { 'last-event-id': 'x' },
          { 'last-event-id': '99999999999' },
          { 'content-encoding': 'gzip' },
          { 'x-forwarded-for': '10.0.0.1' },
          { accept: 'text/event-stream' },
          { accept: 'application/xml' },
        ),
      },
    ),
  )
  .map(([a, b]) => ({ ...a, ...b }));

const queryArb = (names: string[]) =>
  fc.array(
    fc.tuple(
      fc.oneof({ weight: 3, arbitrary: names.length ? fc.constantFrom(...names) : fc.constant('x') }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }),
      fc.oneof(
        fc.constantFrom('1', '0', '-1', '200', '201', '50', 'abc', '', '1e3', 'b-flow', 'greet'),
        anyString.map((s) => s.slice(0, 2000)),
      ),
    ),
    {
      maxLength: 3,
    },
  );

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

interface OpenApiOp {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

function routeArb(route: ServiceRoute, op: OpenApiOp | undefined, components: Record<string, JsonSchema>): fc.Arbitrary<Req> {
  const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const queryNames = (op?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const schema = op?.requestBody?.content?.['application/json']?.schema;
  // A route without a body schema gets `{}` (or nothing) mostly: its handler should run.
  const value = schema
    ? schemaArb(schema, { components, extra: extraFor })
    : fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: junkValue });
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(route.method.toUpperCase()) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    path: fc.tuple(...params.map(() => paramArb)).map((vals) => {
      let i = 0;
      return route.path.replace(/\{[^}]+\}/g, () => vals[i++]!);
    }),
    query: queryArb(queryNames),
    cred: credArb(route.auth),
    contentType: contentTypeArb,
    body: bodyArb(value),
    extraHeaders: headerArb,
  });
}

/** The gateway, by body: its flow names, inputs good and bad, with A's keys mostly. */
const gatewayArb = (): fc.Arbitrary<Req> =>
  fc.record({
    method: fc.constant('POST'),
    path: fc
      .oneof(
        { weight: 6, arbitrary: fc.constant('greet') },
        { weight: 3, arbitrary: fc.constantFrom('b-flow', 'a-draft', 'b-draft', 'GREET', 'greet%2F..', 'nope') },
        { weight: 1, arbitrary: paramArb },
      )
      .map((f) => `/v1/run/${f}`),
    query: queryArb(['inputs', 'who']),
    cred: credArb('bearer'),
    contentType: contentTypeArb,
    body: bodyArb(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record(
            {
              inputs: fc.oneof(
                fc.record({ who: fc.oneof(anyString, junkValue) }, { requiredKeys: [] }),
                fc.dictionary(fc.string({ maxLength: 10 }), junkValue, { maxKeys: 3 }),
                extraFor('inputs')!,
                junkValue,
              ),
            },
            { requiredKeys: [] },
          ),
        },
        { weight: 1, arbitrary: junkValue },
      ),
    ),
    extraHeaders: headerArb,
  });

/** MCP JSON-RPC messages (single and batched) and the headers the transport reads. */
const mcpArb = (): fc.Arbitrary<Req> => {
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constantFrom(null, 1.5, { a: 1 }, [], true));
  const toolName = fc.constantFrom('greet', 'b-flow', 'b-draft', 'get-run-status', '', '../greet', 'x'.repeat(300));
  const objectParams = fc.oneof(
    fc.record(
      {
        name: toolName,
        arguments: fc.oneof(
          fc.record({ who: fc.oneof(anyString, junkValue) }, { requiredKeys: [] }),
          fc.record({ run_id: fc.constant(0).chain(() => fc.constantFrom(A.run, B.run, B.execution, 'x')) }),
          junkValue,
        ),
        _meta: fc.option(fc.record({ progressToken: fc.oneof(fc.string(), fc.integer()) }), { nil: undefined }),
      },
      { requiredKeys: ['name'] },
    ),
    fc.record(
      {
        protocolVersion: fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', ''),
        capabilities: junkValue,
        clientInfo: fc.oneof(fc.constant({ name: 'fuzz', version: '1' }), junkValue),
      },
      { requiredKeys: [] },
    ),
    fc.record({ cursor: anyString }, { requiredKeys: [] }),
    fc.dictionary(fc.string({ maxLength: 8 }), junkValue, { maxKeys: 3 }),
  );
  const params = fc.oneof({ weight: 4, arbitrary: objectParams }, { weight: 1, arbitrary: junkValue });
  const method = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'tools/call',
        'tools/call',
        'tools/list',
        'initialize',
        'ping',
        'notifications/initialized',
        'notifications/cancelled',
        'resources/list',
        'prompts/get',
        'logging/setLevel',
        'completion/complete',
      ),
    },
    { weight: 1, arbitrary: anyString.map((s) => s.slice(0, 500)) },
  );
  // Well-formed requests mostly (so the handlers run), and every way a message can be malformed.
  const message = fc.oneof(
    { weight: 5, arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), method, params: objectParams }) },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', 2, null) }),
          id,
          method,
          params,
          result: junkValue,
          error: junkValue,
        },
        { requiredKeys: ['jsonrpc'] },
      ),
    },
  );
  const body = fc.oneof({ weight: 6, arbitrary: message }, { weight: 1, arbitrary: fc.array(message, { maxLength: 4 }) }, { weight: 1, arbitrary: junkValue });
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    path: fc.constant('/mcp'),
    query: queryArb(['sessionId']),
    cred: credArb('bearer'),
    contentType: contentTypeArb,
    body: bodyArb(body),
    extraHeaders: fc
      .tuple(
        headerArb,
        fc.constantFrom<Record<string, string>>(
          { accept: 'application/json, text/event-stream' },
          { accept: 'text/event-stream, application/json' },
          { accept: 'text/event-stream' },
          { accept: 'application/json' },
          {},
          { accept: '*/*' },
          { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '1999-01-01' },
          { accept: 'application/json, text/event-stream', 'mcp-session-id': 'nope' },
          { accept: 'application/json, text/event-stream', origin: 'https://evil.test' },
        ),
      )
      .map(([a, b]) => ({ ...a, ...b })),
  });
};

/** Requests off the table: other methods on known paths, unknown paths under the API's prefixes. */
const offTableArb = (routes: readonly ServiceRoute[]): fc.Arbitrary<Req> =>
  fc.record({
    method: fc.constantFrom(...METHODS, 'PROPFIND', 'LOCK'),
    path: fc.oneof(
      fc.constantFrom(...routes.map((r) => r.path)).chain((p) => paramArb.map((v) => p.replace(/\{[^}]+\}/g, v))),
      fc.constantFrom(
        '/api',
        '/api/',
        '/api/nope',
        '/api//keys',
        '/api/keys/',
        '/api/../api/keys',
        '/api/%2e%2e/keys',
        '/v1',
        '/v1/run',
        '/v1/run/',
        '/v1/run/greet/extra',
        '/mcp/x',
        '/api/runs//stream',
        '/openapi.json',
        '/healthz',
        '/readyz',
        '/docs',
      ),
      fc.integer({ min: 1, max: 9000 }).map((n) => `/api/${'a'.repeat(n)}`),
    ),
    query: queryArb(['limit', 'cursor', 'flow']),
    cred: credArb('mixed'),
    contentType: contentTypeArb,
    body: bodyArb(junkValue),
    extraHeaders: headerArb,
  });

// ---------------------------------------------------------------------------------------------
// The checks

const counts = new Map<string, number>();
let sent = 0;
let sinceHeal = 0;
let dirty = false;
const statuses = new Map<number, number>();
const statusesOf = new Map<string, Map<number, number>>();

function describeReq(r: Req): string {
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : `<${r.body.byteLength} bytes>`;
  return `${r.method} ${r.path.slice(0, 200)}${r.query.length ? `?${new URLSearchParams(r.query).toString().slice(0, 200)}` : ''} as ${r.cred}, content-type ${r.contentType ?? '(none)'}, headers ${JSON.stringify(r.extraHeaders)}, body ${body.slice(0, 300)}${body.length > 300 ? `... (${body.length})` : ''}`;
}

function checkJsonRpc(value: unknown, what: string): void {
  const one = (m: any) => {
    expect(m?.jsonrpc, what).toBe('2.0');
    if (m.error !== undefined) {
      expect(typeof m.error.code, what).toBe('number');
      expect(typeof m.error.message, what).toBe('string');
    } else {
      expect(m.result, what).toBeDefined();
    }
  };
  if (Array.isArray(value)) value.forEach(one);
  else one(value);
}

function checkAnswer(r: Req, routePath: string | undefined, a: Answer): void {
  const what = `${describeReq(r)} -> ${a.status} ${a.text.slice(0, 400)}`;
  expect(a.status, what).toBeLessThan(500);
  expect(a.headers.get('x-content-type-options'), what).toBe('nosniff');
  const all = a.text + JSON.stringify([...a.headers]);
  for (const s of B_PRIVATE) expect(all.includes(s), `${what}: carries B's "${s.slice(0, 20)}"`).toBe(false);
  if (r.method === 'HEAD' || a.status === 204 || a.status === 202) return;
  const type = a.headers.get('content-type') ?? '';
  // Successful answers that are not JSON: the demo page of the starter example, the API reference
  // page, and event streams.
  // Outside the API's prefixes (a path like /api/%2e%2e/keys is /keys once the URL is parsed) the web
  // app answers with its pages.
  const effective = new URL(base + r.path).pathname;
  const webApp = !isReservedPath(effective, reservedPrefixes(h.service.routes.map((x) => x.path)));
  if (a.status < 300 && (routePath === '/example/site' || /^\/docs\/?$/.test(effective) || webApp)) return expect(type, what).toMatch(/^text\/html/);
  if (a.status < 300 && type.startsWith('text/event-stream')) {
    expect(routePath === '/mcp' || routePath === '/api/runs/{id}/stream', what).toBe(true);
    for (const line of a.text.split('\n')) if (line.startsWith('data: ')) JSON.parse(line.slice(6));
    return;
  }
  expect(type, what).toMatch(/^application\/json/);
  const body = JSON.parse(a.text);
  if (routePath === '/mcp' && typeof body === 'object' && body !== null && ('jsonrpc' in body || Array.isArray(body))) return checkJsonRpc(body, what);
  if (a.status < 300) return;
  expect(typeof body.error, what).toBe('string');
  expect(Object.keys(SERVICE_STATUS_BY_CODE), what).toContain(body.error);
  expect(SERVICE_STATUS_BY_CODE[body.error], `${what}: status of ${body.error}`).toBe(a.status);
  if (body.error === 'invalid_request') {
    expect(Array.isArray(body.issues), what).toBe(true);
    for (const i of body.issues) {
      expect(Array.isArray(i.path) && typeof i.message === 'string' && typeof i.code === 'string', what).toBe(true);
    }
  } else {
    expect(typeof body.message, what).toBe('string');
    expect(Object.keys(body).sort(), what).toEqual(['error', 'message']);
  }
  if (a.status === 405) expect(a.headers.get('allow'), what).toBeTruthy();
}

async function send(category: string, routePath: string | undefined, r: Req): Promise<void> {
  const { headers, user } = credHeaders(r.cred);
  if (r.contentType !== undefined) headers['content-type'] = r.contentType;
  Object.assign(headers, r.extraHeaders);
  const qs = r.query.length ? `?${new URLSearchParams(r.query).toString()}` : '';
  const a = await exchange(r.method, r.path + qs, headers, r.body);
  sent++;
  counts.set(category, (counts.get(category) ?? 0) + 1);
  statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const mine = statusesOf.get(category) ?? new Map<number, number>();
  statusesOf.set(category, mine.set(a.status, (mine.get(a.status) ?? 0) + 1));
  if (user && a.headers.getSetCookie().some((c) => c.startsWith('svc_session='))) {
    // Signup and login start a session of whoever they name (maybe a new user): A keeps its own.
    if (!/^\/api\/auth\/(signup|login)/.test(r.path)) user.take(a.headers);
    dirty = true;
  }
  checkAnswer(r, routePath, a);
  // Repair A after a session change at once, else every 20 requests (a write may have changed A).
  if (++sinceHeal >= 20 || dirty) {
    await heal();
    sinceHeal = 0;
    dirty = false;
  }
}

/** A stable per-category seed, so adding a route does not move the others' sequences. */
function seedOf(category: string): number {
  let x = SEED ^ 0x811c9dc5;
  for (const ch of category) x = Math.imul(x ^ ch.charCodeAt(0), 0x01000193);
  return x >>> 0;
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  h = await startHosted(
    // Limits out of the way (a 429 would hide the routes behind it); no scheduler (no fires of A's
    // fuzzed schedules during the run); no queue (no webhook deliveries leave the process).
    {
      ipLimitPerMinute: 10_000_000,
      orgLimitPerMinute: 10_000_000,
      authIpLimitPerMinute: 10_000_000,
      authAccountFailuresPer15Min: 10_000_000,
      authIpFailuresPer15Min: 10_000_000,
      scheduler: false,
    },
  );
  base = h.url;
  await setupOrgs();
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe('hosted API fuzz (fast-check, in process)', () => {
  it(`at least ${TOTAL} generated requests over every route: no 5xx, structured errors, B unchanged`, async () => {
    const doc = JSON.parse((await exchange('GET', '/openapi.json', {})).text) as {
      paths: Record<string, Record<string, OpenApiOp>>;
      components: { schemas: Record<string, JsonSchema> };
    };
    const routes = h.service.routes;
    const categories: { name: string; routePath: string | undefined; arb: fc.Arbitrary<Req> }[] = [
      ...routes.map((route) => ({
        name: `${route.method.toUpperCase()} ${route.path}`,
        routePath: route.path,
        arb: routeArb(route, doc.paths[route.path]?.[route.method], doc.components.schemas),
      })),
      { name: 'gateway bodies', routePath: '/v1/run/{flow}', arb: gatewayArb() },
      { name: 'MCP JSON-RPC', routePath: '/mcp', arb: mcpArb() },
      { name: 'off the table', routePath: undefined, arb: offTableArb(routes) },
    ];
    const numRuns = Math.ceil(TOTAL / categories.length);
    // FLOWCTL_FUZZ_ONLY=<part of a category name> replays one category (its seed does not depend on the others).
    const only = process.env.FLOWCTL_FUZZ_ONLY;
    if (only) categories.splice(0, categories.length, ...categories.filter((c) => c.name.includes(only)));
    process.stdout.write(`[fuzz] seed ${SEED} (FLOWCTL_TEST_SEED replaces it), ${categories.length} categories x ${numRuns} requests\n`);
    const before = JSON.stringify(await snapshotB());
    const known = (p: string) => routes.some((r) => r.path === p);
    const started = Date.now();
    const seconds = new Map<string, number>();
    for (const c of categories) {
      const t0 = Date.now();
      await fc.assert(
        fc.asyncProperty(c.arb, async (r) => send(c.name, c.routePath && known(c.routePath) ? c.routePath : matchRoute(routes, r.path), r)),
        {
          seed: seedOf(c.name),
          numRuns,
          endOnFailure: true,
          // The failing request is in the error (bodies cut short); fast-check's own report would print it whole.
          reporter: (out) => {
            if (out.failed)
              throw new Error(
                `"${c.name}" failed at run ${out.numRuns} (seed ${out.seed}, path ${out.counterexamplePath}): ${(out.errorInstance as Error | undefined)?.message ?? String(out.errorInstance)}`,
              );
          },
        },
      );
      seconds.set(c.name, (Date.now() - t0) / 1000);
      await heal();
      const after = JSON.stringify(await snapshotB());
      expect(after === before, `org B's data changed during "${c.name}"`).toBe(true);
    }
    const histogram = (m: Map<number, number> | undefined) =>
      [...(m ?? [])]
        .sort((x, y) => x[0] - y[0])
        .map(([st, n]) => `${st}:${n}`)
        .join(' ');
    const lines = [...counts].map(
      ([k, v]) => `  ${String(v).padStart(5)}  ${k.padEnd(40)} ${`${seconds.get(k)?.toFixed(1)} s`.padStart(7)}  ${histogram(statusesOf.get(k))}`,
    );
    process.stdout.write(
      `[fuzz] ${sent} requests in ${((Date.now() - started) / 1000).toFixed(0)} s, seed ${SEED}\n${lines.join('\n')}\n[fuzz] statuses ${histogram(statuses)}\n`,
    );
    if (!only) expect(sent).toBeGreaterThanOrEqual(TOTAL);
    for (const c of categories) expect([c.name, counts.get(c.name)]).toEqual([c.name, numRuns]);
    // B still works: its key runs its automation, its audit chain verifies.
    const run = await exchange('POST', '/v1/run/b-flow', { authorization: `Bearer ${B.key}` });
    expect(JSON.parse(run.text).status).toBe('succeeded');
    expect((await ownerB.ok('GET', '/api/audit/verify')).ok).toBe(true);
    // A's own org went through the storm too: its audit chain still verifies.
    await heal();
    expect((await ownerA.ok('GET', '/api/audit/verify')).ok).toBe(true);
  }, 900_000);
});

/** The route-table path a concrete path falls under (for the checks that depend on the route). */
function matchRoute(routes: readonly ServiceRoute[], path: string): string | undefined {
  const clean = path.split('?')[0]!;
  return routes.find((r) => new RegExp(`^${r.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(clean))?.path;
}
