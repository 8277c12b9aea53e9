import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * Issue 26, points 4 and 5 (docs/hosted-api.md, "Run gateway" and "Authoring"): a gateway body with
 * any top-level key other than `inputs` is refused before anything runs, and so is the capture test's
 * body of the same shape; an op whose `slot` is in neither slot list is refused at PATCH and at
 * publish. Real Chromium runs the starter example (its demo page, on an origin of its own).
 */

let h: HostedFixture;
let owner: Client;
let live: string;

const gateway = async (flow: string, body: unknown) => {
  const res = await fetch(`${h.url}/v1/run/${flow}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const executions = async () => (await owner.call('GET', '/api/executions?limit=100')).body.executions.length as number;
const engineRuns = async () => (await h.engine.listRuns({ limit: 1000 })).length;

beforeAll(async () => {
  h = await startHosted();
  owner = new Client(h.url);
  await owner.signup('rules@example.test');
  await owner.call('POST', '/api/automations/example');
  live = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('strict gateway bodies', () => {
  it('inputs at the top level are 422 invalid_request naming `inputs`, and no run starts; under `inputs` they run', async () => {
    const before = [await executions(), await engineRuns()];
    const r = await gateway('example-forecast', { city: 'Oslo' });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('invalid_request');
    expect(r.body.issues).toEqual([{ path: ['city'], code: 'unrecognized_key', message: expect.stringContaining('"inputs"') }]);
    expect(r.body.issues[0].message).toContain('go under "inputs"');
    // `inputs` beside another key: still refused, one issue per unknown key.
    const both = await gateway('example-forecast', { inputs: { city: 'Oslo' }, category: 'veg', dry_run: true });
    expect([both.status, both.body.issues.map((i: any) => i.path[0])]).toEqual([422, ['category', 'dry_run']]);
    // Nothing ran: no execution row, no engine run.
    expect([await executions(), await engineRuns()]).toEqual(before);

    const ok = await gateway('example-forecast', { inputs: { city: 'Oslo' } });
    expect([ok.status, ok.body.status, ok.body.output.forecast]).toEqual([200, 'succeeded', expect.stringMatching(/^Forecast for Oslo: /)]);
    expect(await executions()).toBe(before[0]! + 1);
  });

  it('the capture test takes the gateway body shape, and the same rule', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'shape', site: h.exampleSiteUrl, task: 'Look up a city' })).body.automation;
    await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: h.exampleSiteUrl },
        { kind: 'fill', target: { label: 'City' }, value: 'Lisbon', slot: 'city' },
        { kind: 'click', target: { role: 'button', name: 'Look up' } },
        { kind: 'extract', target: '#result', name: 'forecast' },
      ],
      input_slots: ['city'],
    });
    const before = await engineRuns();
    const r = await owner.call('POST', `/api/authoring/${a.id}/test`, { city: 'Rome' });
    expect([r.status, r.body.error, r.body.issues[0].path, r.body.issues[0].message]).toEqual([
      422,
      'invalid_request',
      ['city'],
      expect.stringContaining('"inputs"'),
    ]);
    expect(await engineRuns()).toBe(before);
    const ok = await owner.call('POST', `/api/authoring/${a.id}/test`, { inputs: { city: 'Rome' } });
    expect(ok.body.output.forecast).toMatch(/^Forecast for Rome: /);
  });
});

describe('capture validation: every op slot is an input or a secret slot', () => {
  const ops = (url: string) => [
    { kind: 'navigate', url },
    { kind: 'fill', target: { label: 'City' }, value: 'Lisbon', slot: 'city' },
    { kind: 'click', target: { role: 'button', name: 'Look up' } },
    { kind: 'extract', target: '#result', name: 'forecast' },
  ];

  it('PATCH refuses a slot in neither list with an issue at its path; listing it (or dropping it) is accepted', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'slots', site: h.exampleSiteUrl, task: 'Look up a city' })).body.automation;
    const bad = await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops(h.exampleSiteUrl) });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('invalid_request');
    expect(bad.body.issues).toEqual([
      { path: ['captured_ops', 1, 'slot'], code: 'unknown_slot', message: expect.stringContaining('neither input_slots nor secret_slots') },
    ]);
    // Nothing was stored.
    expect((await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops).toEqual([]);
    // Removing the slot from the lists while an op still names it is refused the same way.
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops(h.exampleSiteUrl), input_slots: ['city'] })).status).toBe(200);
    const dropped = await owner.call('PATCH', `/api/authoring/${a.id}`, { input_slots: [] });
    expect([dropped.status, dropped.body.issues?.[0]?.path]).toEqual([422, ['captured_ops', 1, 'slot']]);
    // A secret slot counts too; an op with no slot keeps its value.
    const asSecret = ops(h.exampleSiteUrl).map((o, i) => (i === 1 ? { kind: 'fill', target: { label: 'City' }, slot: 'city' } : o));
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: asSecret, input_slots: [], secret_slots: ['city'] })).status).toBe(200);
    const literal = ops(h.exampleSiteUrl).map((o, i) => (i === 1 ? { kind: 'fill', target: { label: 'City' }, value: 'Lisbon' } : o));
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: literal, secret_slots: [] })).status).toBe(200);
  });

  it('publish refuses a stored capture with such a slot (issue at its path, kept in the session error); the listed slot publishes as an input', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'slots-publish', site: h.exampleSiteUrl, task: 'Look up a city' })).body.automation;
    // A session stored before the rule (or by another path) still cannot publish.
    await h.storage.authoring.update(a.org_id, a.id, { captured_ops: ops(h.exampleSiteUrl), input_slots: [], secret_slots: [] });
    const refused = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect([refused.status, refused.body.error, refused.body.issues]).toEqual([
      422,
      'invalid_request',
      [expect.objectContaining({ path: ['captured_ops', 1, 'slot'], code: 'unknown_slot' })],
    ]);
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.error).toContain('slot "city" is in neither input_slots nor secret_slots');
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('draft');

    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { input_slots: ['city'] })).status).toBe(200);
    const published = await owner.call('POST', `/api/authoring/${a.id}/publish`);
    expect(published.status).toBe(200);
    const run = await gateway('slots-publish', { inputs: { city: 'Quito' } });
    expect(run.body.output.forecast).toMatch(/^Forecast for Quito: /);
  });
});
