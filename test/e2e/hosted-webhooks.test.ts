import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Signed outbound webhooks end to end (PGlite, pg-boss in the same database, the worker in this
 * process): a receiver on 127.0.0.1 verifies every signature with the Standard Webhooks reference
 * library; a receiver that fails three times gets the delivery on the fourth attempt and the log
 * shows each; 410 disables the endpoint; a private address not on the egress allowlist is refused
 * without retries; events are filtered per endpoint; owners only, per org.
 */

interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  verified: unknown;
}

let h: HostedFixture;
let owner: Client;
let receiver: Server;
let base: string;
const received = new Map<string, Received[]>();
const answers = new Map<string, number[]>();
const secrets = new Map<string, string>();

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let b = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => (b += c))
      .on('end', () => resolve(b));
  });

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const path = req.url ?? '/';
    const body = await readBody(req);
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    let verified: unknown;
    try {
      verified = new Webhook(secrets.get(path)!).verify(body, headers);
    } catch (err) {
      verified = `verify failed: ${(err as Error).message}`;
    }
    received.set(path, [
      ...(received.get(path) ?? []),
      { id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body, verified },
    ]);
    const plan = answers.get(path) ?? [];
    res.writeHead(plan.shift() ?? 200).end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  h = await startHosted({ webhookRetrySeconds: [1, 1, 1, 1, 1], egressAllow: ['127.0.0.1'] }, {}, { queue: true });
  await h.service.startWorker();
  owner = new Client(h.url);
  const { user, org } = await owner.signup('hooks@example.test');
  await publishPureAutomation(h.storage, h.engine, org.id, user.id, 'greet');
}, 120_000);
afterAll(async () => {
  await h?.close();
  await new Promise((r) => receiver?.close(r));
});

async function register(path: string, body: Record<string, unknown> = {}) {
  const r = await owner.call('POST', '/api/webhooks', { url: `${base}${path}`, ...body });
  expect(r.status).toBe(201);
  expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
  secrets.set(path, r.body.secret);
  return r.body.webhook as { id: string; events: string[] };
}

const deliveriesOf = async (id: string) =>
  (await owner.call('GET', `/api/webhooks/${id}/deliveries`)).body.deliveries as {
    status: string;
    event: string;
    attempts: { status?: number; error?: string }[];
    payload: any;
  }[];

describe('outbound webhooks', () => {
  it('signs every delivery (Standard Webhooks), retries on the schedule until the fourth attempt succeeds, disables on 410', async () => {
    const ok = await register('/ok');
    const flaky = await register('/flaky', { events: ['run.finished'] });
    const gone = await register('/gone');
    answers.set('/flaky', [500, 502, 503]);
    answers.set('/gone', [410]);
    // The secret is never shown again.
    const listed = (await owner.call('GET', '/api/webhooks')).body.webhooks;
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    expect(listed.map((w: { id: string }) => w.id)).toEqual([ok.id, flaky.id, gone.id]);

    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const run = await (
      await fetch(`${h.url}/v1/run/greet`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { who: 'hooks' } }),
      })
    ).json();
    expect(run.status).toBe('succeeded');

    await waitUntil(async () => (await deliveriesOf(flaky.id))[0]?.status === 'delivered', { what: 'the flaky endpoint delivered' });
    const flakyLog = await deliveriesOf(flaky.id);
    expect(flakyLog).toHaveLength(1);
    expect(flakyLog[0]!.attempts.map((a) => a.status)).toEqual([500, 502, 503, 200]);
    const flakyGot = received.get('/flaky')!;
    expect(flakyGot).toHaveLength(4);
    // The same message id on every attempt, each attempt signed and verified.
    expect(new Set(flakyGot.map((r) => r.id)).size).toBe(1);
    for (const r of flakyGot) expect(typeof r.verified).toBe('object');
    expect(flakyGot[3]!.verified).toMatchObject({
      type: 'run.finished',
      data: { run_id: run.run_id, automation: 'greet', status: 'succeeded', dispatch: 'sync', output: { greeting: 'Hello, hooks!' } },
    });

    await waitUntil(async () => (await deliveriesOf(ok.id))[0]?.status === 'delivered', { what: 'the ok endpoint delivered' });
    expect(received.get('/ok')!.map((r) => JSON.parse(r.body).type)).toEqual(['run.finished']);
    expect(typeof received.get('/ok')![0]!.verified).toBe('object');
    // A signature made with another secret does not verify.
    const r0 = received.get('/ok')![0]!;
    expect(() =>
      new Webhook(secrets.get('/flaky')!).verify(r0.body, { 'webhook-id': r0.id, 'webhook-timestamp': r0.timestamp, 'webhook-signature': r0.signature }),
    ).toThrow();

    await waitUntil(async () => (await deliveriesOf(gone.id))[0]?.status === 'failed', { what: 'the 410 delivery failed' });
    expect((await deliveriesOf(gone.id))[0]!.attempts.map((a) => a.status)).toEqual([410]);
    const goneNow = (await owner.call('GET', '/api/webhooks')).body.webhooks.find((w: { id: string }) => w.id === gone.id);
    expect(goneNow).toMatchObject({ enabled: false, disabled_reason: 'the endpoint answered 410 Gone' });
    // Re-enabled by its owner, it clears the reason.
    expect((await owner.call('PATCH', `/api/webhooks/${gone.id}`, { enabled: true })).body.webhook).toMatchObject({ enabled: true, disabled_reason: null });
    await owner.call('DELETE', `/api/webhooks/${gone.id}`);
    await owner.call('DELETE', `/api/webhooks/${ok.id}`);
    await owner.call('DELETE', `/api/webhooks/${flaky.id}`);
  });

  it('events are filtered per endpoint: a succeeded run reaches run.finished endpoints only; a call refused before its run emits nothing', async () => {
    const failures = await register('/failures', { events: ['run.failed'] });
    const finished = await register('/finished', { events: ['run.finished'] });
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    // A run refused before it starts (bad inputs) emits nothing; a run that fails emits run.failed.
    const automation = (await owner.call('GET', '/api/automations')).body.automations.find((a: { name: string }) => a.name === 'greet');
    expect(automation).toBeDefined();
    const bad = await fetch(`${h.url}/v1/run/greet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { who: 5 } }),
    });
    expect(bad.status).toBe(422);
    const ok = await (
      await fetch(`${h.url}/v1/run/greet`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { who: 'x' } }),
      })
    ).json();
    await waitUntil(async () => (await deliveriesOf(finished.id)).length === 1 && (await deliveriesOf(finished.id))[0]!.status === 'delivered', {
      what: 'run.finished delivered',
    });
    expect((await deliveriesOf(failures.id)).length).toBe(0);
    expect((await deliveriesOf(finished.id))[0]!.payload.data.run_id).toBe(ok.run_id);
    // Changes apply to the very next run (the per-process endpoint cache is dropped by the routes):
    // `finished` now takes run.failed only, and `late`, registered just now, takes run.finished.
    expect((await owner.call('PATCH', `/api/webhooks/${finished.id}`, { events: ['run.failed'] })).status).toBe(200);
    const late = await register('/late', { events: ['run.finished'] });
    const again = await (
      await fetch(`${h.url}/v1/run/greet`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { who: 'y' } }),
      })
    ).json();
    await waitUntil(async () => (await deliveriesOf(late.id))[0]?.status === 'delivered', { what: 'run.finished delivered to the endpoint registered last' });
    expect((await deliveriesOf(late.id))[0]!.payload.data.run_id).toBe(again.run_id);
    // Deliveries of one event are queued in registration order, so `finished`'s would exist by now.
    expect((await deliveriesOf(finished.id)).length).toBe(1);
    await owner.call('DELETE', `/api/webhooks/${late.id}`);
    await owner.call('DELETE', `/api/webhooks/${failures.id}`);
    await owner.call('DELETE', `/api/webhooks/${finished.id}`);
  });

  it('a private address not on the egress allowlist is refused without retries; bad URLs are 422', async () => {
    const r = await owner.call('POST', '/api/webhooks', { url: 'http://10.255.255.1:8081/in' });
    expect(r.status).toBe(201);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    await fetch(`${h.url}/v1/run/greet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { who: 'private' } }),
    });
    await waitUntil(async () => (await deliveriesOf(r.body.webhook.id))[0]?.status === 'failed', { what: 'the refused delivery failed' });
    const log = await deliveriesOf(r.body.webhook.id);
    expect(log[0]!.attempts).toHaveLength(1);
    expect(log[0]!.attempts[0]!.error).toMatch(/^egress_denied: /);
    await owner.call('DELETE', `/api/webhooks/${r.body.webhook.id}`);
    for (const url of ['ftp://x.test/', 'not a url', 'https://user:pw@x.test/']) {
      const bad = await owner.call('POST', '/api/webhooks', { url });
      expect([url, bad.status, bad.body.issues?.[0]?.code]).toEqual([url, 422, 'invalid_url']);
    }
    expect((await owner.call('POST', '/api/webhooks', { url: `${base}/x`, events: ['run.exploded'] })).status).toBe(422);
  });

  it('owners only, per org: a member is 403, another org sees none and reaches none (404)', async () => {
    const w = await register('/private');
    const other = new Client(h.url);
    await other.signup('other-hooks@example.test');
    expect((await other.call('GET', '/api/webhooks')).body.webhooks).toEqual([]);
    for (const [method, path, body] of [
      ['PATCH', `/api/webhooks/${w.id}`, { enabled: false }],
      ['DELETE', `/api/webhooks/${w.id}`, undefined],
      ['GET', `/api/webhooks/${w.id}/deliveries`, undefined],
    ] as const) {
      expect((await other.call(method, path, body)).status).toBe(404);
    }
    const member = new Client(h.url);
    await member.signup('member-hooks@example.test');
    expect((await owner.call('POST', '/api/members', { email: 'member-hooks@example.test', role: 'member' })).status).toBeLessThan(300);
    const orgs = (await member.call('GET', '/api/session')).body.orgs as { id: string; role: string }[];
    const shared = orgs.find((o) => o.role === 'member')!;
    expect((await member.call('POST', '/api/session/org', { org_id: shared.id })).status).toBe(200);
    expect((await member.call('GET', '/api/webhooks')).status).toBe(403);
    expect((await member.call('POST', '/api/webhooks', { url: `${base}/m` })).status).toBe(403);
  });
});
