import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Schedules on one service (PGlite): the routes of HOSTED-API.md (create, list, change, delete),
 * owner only, audited, org-scoped; cron, interval, time zone and inputs refused with 422 issues; a
 * schedule at the minimum interval fires through the gateway's dispatch (executions `schedule`).
 * The many-process no-double-fire test is hosted-schedules-postgres.test.ts.
 */

let h: HostedFixture;
let owner: Client;
let member: Client;
let stranger: Client;
let automationId: string;
let liveDigest: string;
let orgId: string;

beforeAll(async () => {
  // 2 s minimum: `*/2 * * * * *` is allowed, `* * * * * *` is finer.
  h = await startHosted({ minCronIntervalSeconds: 2 });
  owner = new Client(h.url);
  const { user, org } = await owner.signup('sched-owner@example.test');
  const a = await publishPureAutomation(h.storage, h.engine, org.id, user.id, 'greet');
  automationId = a.id;
  orgId = org.id;
  liveDigest = a.live_digest;
  member = new Client(h.url);
  await member.signup('sched-member@example.test');
  expect((await owner.call('POST', '/api/members', { email: 'sched-member@example.test', role: 'member' })).status).toBe(201);
  const orgs = await member.call('GET', '/api/session');
  expect((await member.call('POST', '/api/session/org', { org_id: orgs.body.orgs.find((o: { id: string }) => o.id === org.id).id })).status).toBe(200);
  stranger = new Client(h.url);
  await stranger.signup('sched-stranger@example.test');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const rare = '0 3 1 1 *'; // 03:00 on 1 January: never fires during a test

describe('schedules: routes', () => {
  it('an owner creates one: 201 with the recorded live digest, inputs, enabled, times; it is listed and audited', async () => {
    const r = await owner.call('POST', `/api/automations/${automationId}/schedules`, { cron: rare, inputs: { who: 'Ada' }, timezone: 'Europe/Berlin' });
    expect(r.status).toBe(201);
    expect(r.body.schedule).toMatchObject({
      flow: 'greet',
      cron: rare,
      timezone: 'Europe/Berlin',
      flow_digest: liveDigest,
      inputs: { who: 'Ada' },
      enabled: true,
    });
    expect(r.body.schedule.at).toMatch(/Z$/);
    // 03:00 in Berlin on 1 January is 02:00 UTC.
    expect(r.body.schedule.next_fire_at).toMatch(/-01-01T02:00:00\.000Z$/);
    const list = await member.call('GET', `/api/automations/${automationId}/schedules`);
    expect(list.status).toBe(200);
    expect(list.body.schedules.map((s: { id: string }) => s.id)).toContain(r.body.schedule.id);
    const audit = await owner.call('GET', '/api/audit?limit=1');
    expect(audit.body.entries[0]).toMatchObject({
      target: `schedule:${r.body.schedule.id}`,
      metadata: { action: 'schedule.create', flow: 'greet', cron: rare, inputs: ['who'] },
    });
  });

  it('refuses a cron finer than SVC_MIN_CRON_INTERVAL, a bad cron, a bad time zone, bad inputs (422 with issues)', async () => {
    const post = (body: unknown) => owner.call('POST', `/api/automations/${automationId}/schedules`, body);
    const finer = await post({ cron: '* * * * * *' });
    expect(finer.status).toBe(422);
    expect(finer.body.issues[0]).toMatchObject({ path: ['cron'], code: 'cron_too_frequent' });
    expect(finer.body.issues[0].message).toContain('minimum interval between fires is 2 s');
    // Gaps vary: seconds 0 and 1 of each minute are 1 s apart once a minute.
    expect((await post({ cron: '0,1 * * * * *' })).body.issues[0].code).toBe('cron_too_frequent');
    for (const cron of ['* * * *', '@daily', '61 * * * *', '0 0 0 * * * 2030', '0 0 30 2 *']) {
      const r = await post({ cron });
      expect([cron, r.status, r.body.issues?.[0]?.path, r.body.issues?.[0]?.code]).toEqual([cron, 422, ['cron'], 'invalid_cron']);
    }
    const tz = await post({ cron: rare, timezone: 'Mars/Olympus' });
    expect([tz.status, tz.body.issues[0].path, tz.body.issues[0].code]).toEqual([422, ['timezone'], 'invalid_timezone']);
    const wrongType = await post({ cron: rare, inputs: { who: 5 } });
    expect([wrongType.status, wrongType.body.issues[0].path]).toEqual([422, ['inputs', 'who']]);
    const undeclared = await post({ cron: rare, inputs: { nope: 'x' } });
    expect([undeclared.status, undeclared.body.issues[0].path]).toEqual([422, ['inputs', 'nope']]);
    expect((await post({})).status).toBe(422);
  });

  it('a draft automation cannot be scheduled (409 conflict)', async () => {
    const draft = await owner.call('POST', '/api/automations', { name: 'not-yet', site: 'https://x.test' });
    const r = await owner.call('POST', `/api/automations/${draft.body.automation.id}/schedules`, { cron: rare });
    expect([r.status, r.body.error]).toEqual([409, 'conflict']);
  });

  it('PATCH changes cron, time zone, inputs and enabled, keeps the recorded version, and is audited; DELETE removes it', async () => {
    const s = (await owner.call('POST', `/api/automations/${automationId}/schedules`, { cron: rare })).body.schedule;
    const off = await owner.call('PATCH', `/api/schedules/${s.id}`, { enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.schedule).toMatchObject({ id: s.id, enabled: false, next_fire_at: null, flow_digest: liveDigest });
    const changed = await owner.call('PATCH', `/api/schedules/${s.id}`, { cron: '0 4 * * *', timezone: 'Asia/Tokyo', inputs: { who: 'Grace' }, enabled: true });
    expect(changed.body.schedule).toMatchObject({ cron: '0 4 * * *', timezone: 'Asia/Tokyo', inputs: { who: 'Grace' }, enabled: true });
    expect(changed.body.schedule.next_fire_at).toMatch(/T19:00:00\.000Z$/);
    const utc = await owner.call('PATCH', `/api/schedules/${s.id}`, { timezone: null });
    expect(utc.body.schedule).toMatchObject({ timezone: null });
    expect(utc.body.schedule.next_fire_at).toMatch(/T04:00:00\.000Z$/);
    expect((await owner.call('PATCH', `/api/schedules/${s.id}`, { cron: '*/1 * * * * *' })).status).toBe(422);
    expect((await owner.call('PATCH', `/api/schedules/${s.id}`, { timezone: 'Nowhere/Else' })).status).toBe(422);
    expect((await owner.call('PATCH', `/api/schedules/${s.id}`, { inputs: { who: [] } })).status).toBe(422);
    // The version is not a field of PATCH (unknown fields are ignored, as on every route): it stays.
    expect((await owner.call('PATCH', `/api/schedules/${s.id}`, { flow_digest: `sha256:${'0'.repeat(64)}` })).body.schedule.flow_digest).toBe(liveDigest);
    const audit = await owner.call('GET', '/api/audit?limit=3');
    expect(audit.body.entries.map((e: { metadata: { action: string } }) => e.metadata.action)).toEqual([
      'schedule.update',
      'schedule.update',
      'schedule.update',
    ]);
    expect(audit.body.entries[2].metadata.changed).toEqual(['cron', 'enabled', 'inputs', 'timezone']);
    expect((await owner.call('DELETE', `/api/schedules/${s.id}`)).status).toBe(204);
    expect((await owner.call('GET', '/api/audit?limit=1')).body.entries[0].metadata.action).toBe('schedule.delete');
    expect((await owner.call('DELETE', `/api/schedules/${s.id}`)).status).toBe(404);
    expect((await owner.call('PATCH', `/api/schedules/${s.id}`, { enabled: true })).status).toBe(404);
  });

  it('members read but may not create, change or delete (403 forbidden)', async () => {
    const s = (await owner.call('POST', `/api/automations/${automationId}/schedules`, { cron: rare })).body.schedule;
    for (const [method, path, body] of [
      ['POST', `/api/automations/${automationId}/schedules`, { cron: rare }],
      ['PATCH', `/api/schedules/${s.id}`, { enabled: false }],
      ['DELETE', `/api/schedules/${s.id}`, undefined],
    ] as const) {
      const r = await member.call(method, path, body);
      expect([method, r.status, r.body.error]).toEqual([method, 403, 'forbidden']);
    }
    expect((await owner.call('GET', `/api/automations/${automationId}/schedules`)).body.schedules.find((x: { id: string }) => x.id === s.id).enabled).toBe(
      true,
    );
  });

  it('another org sees none of it: 404 on every route, the same body as for an unknown id', async () => {
    const s = (await owner.call('POST', `/api/automations/${automationId}/schedules`, { cron: rare })).body.schedule;
    const unknown = await stranger.call('PATCH', '/api/schedules/no-such-id', { enabled: false });
    for (const [method, path, body] of [
      ['GET', `/api/automations/${automationId}/schedules`, undefined],
      ['POST', `/api/automations/${automationId}/schedules`, { cron: rare }],
      ['PATCH', `/api/schedules/${s.id}`, { enabled: false }],
      ['DELETE', `/api/schedules/${s.id}`, undefined],
    ] as const) {
      const r = await stranger.call(method, path, body);
      expect([method, r.status, r.body.error]).toEqual([method, 404, 'not_found']);
    }
    expect(unknown.status).toBe(404);
    const after = await owner.call('GET', `/api/automations/${automationId}/schedules`);
    expect(after.body.schedules.find((x: { id: string }) => x.id === s.id)).toMatchObject({ enabled: true });
  });
});

describe('schedules: fires', () => {
  it('a schedule at the minimum interval fires its recorded version with its inputs (executions dispatch "schedule"); disabled, it stops', async () => {
    const s = (await owner.call('POST', `/api/automations/${automationId}/schedules`, { cron: '*/2 * * * * *', inputs: { who: 'cron' } })).body.schedule;
    const executions = await waitUntil(
      async () => {
        const list = await owner.call('GET', '/api/executions?flow=greet&limit=200');
        const mine = list.body.executions.filter((e: { dispatch: string; status: string }) => e.dispatch === 'schedule' && e.status === 'succeeded');
        return mine.length >= 2 && mine;
      },
      { what: 'two succeeded schedule executions' },
    );
    expect(executions[0]).toMatchObject({ flow: 'greet', flow_digest: liveDigest, dispatch: 'schedule' });
    const one = await owner.call('GET', `/api/executions/${executions[0].id}`);
    expect(one.body.run.output).toEqual({ greeting: 'Hello, cron!' });
    const fires = await h.storage.schedules.fires(orgId, s.id, 100);
    expect(fires.every((f) => new Date(f.fire_at).getUTCSeconds() % 2 === 0 && f.fire_at.endsWith('.000Z'))).toBe(true);
    expect(new Set(fires.map((f) => f.execution_id)).size).toBe(fires.length);
    expect((await owner.call('PATCH', `/api/schedules/${s.id}`, { enabled: false })).status).toBe(200);
    expect((await owner.call('DELETE', `/api/schedules/${s.id}`)).status).toBe(204);
  });

  it('no catch-up burst: a schedule that missed an hour of minutes fires once, for the latest missed minute', async () => {
    const insertedAt = Date.now();
    const hourAgo = new Date(insertedAt - 3600_000).toISOString();
    const now = new Date(insertedAt).toISOString();
    const base = { org_id: orgId, automation_id: automationId, flow_digest: liveDigest, enabled: true, created_by: 'test', timezone: undefined };
    // Written as a process that was down for an hour would find it (not through the routes, which
    // start a schedule now): since an hour ago, every minute.
    const backlog = {
      ...base,
      id: `backlog-${insertedAt}`,
      cron: '* * * * *',
      inputs: { who: 'late' },
      created_at: hourAgo,
      updated_at: hourAgo,
      since: hourAgo,
    };
    // Every second: the loop's ticks, counted without sleeping.
    const ticker = { ...base, id: `ticker-${insertedAt}`, cron: '* * * * * *', inputs: { who: 'tick' }, created_at: now, updated_at: now, since: now };
    await h.storage.schedules.create(backlog);
    await h.storage.schedules.create(ticker);
    await waitUntil(async () => (await h.storage.schedules.fires(orgId, ticker.id, 10)).length >= 3, { what: 'three ticks of the scheduler' });
    const fires = (await h.storage.schedules.fires(orgId, backlog.id, 100)).reverse();
    const minutesSince = Math.ceil((Date.now() - insertedAt) / 60_000);
    expect(fires.length).toBeGreaterThanOrEqual(1);
    expect(fires.length).toBeLessThanOrEqual(1 + minutesSince);
    // The first fire is the latest minute before the loop saw the schedule, not an hour-old one.
    expect(Date.parse(fires[0]!.fire_at)).toBeGreaterThan(insertedAt - 60_000);
    expect(fires.every((f, i) => i === 0 || Date.parse(f.fire_at) - Date.parse(fires[i - 1]!.fire_at) === 60_000)).toBe(true);
    await h.storage.schedules.delete(orgId, backlog.id);
    await h.storage.schedules.delete(orgId, ticker.id);
  });
});
