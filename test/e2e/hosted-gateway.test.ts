import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * The run gateway (sync dispatch) end to end: a published browser automation (the starter example,
 * against the demo page the service serves on loopback) run with API keys in real Chromium; every
 * check of the spec's order; the executions index; drift marking the automation failing.
 */

let h: HostedFixture;
let owner: Client;
let live: string;
let test: string;
let scoped: string;
let exampleId: string;

const gateway = async (key: string | undefined, flow: string, body?: unknown) => {
  const res = await fetch(`${h.url}/v1/run/${flow}`, {
    method: 'POST',
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
};

beforeAll(async () => {
  h = await startHosted();
  owner = new Client(h.url);
  await owner.signup('gateway@example.test');
  const ex = await owner.call('POST', '/api/automations/example');
  exampleId = ex.body.automation.id;
  live = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  test = (await owner.call('POST', '/api/keys', { mode: 'test' })).body.secret;
  scoped = (await owner.call('POST', '/api/keys', { mode: 'live', automations: ['something-else'] })).body.secret;
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('POST /v1/run/{flow}', () => {
  it('runs the live version in the request: 200 with the run result', async () => {
    const r = await gateway(live, 'example-forecast', { inputs: { city: 'Oslo' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'succeeded', flow_digest: expect.stringMatching(/^sha256:/) });
    expect(r.body.output.forecast).toMatch(/^Forecast for Oslo: /);
    expect(r.body.error).toBeUndefined();
    // An empty body means no inputs: the recorded value is the default.
    const d = await gateway(live, 'example-forecast');
    expect(d.body.output.forecast).toMatch(/^Forecast for Lisbon: /);
  });

  it('keys: none, malformed, bad checksum, unknown, revoked are one 401 invalid_key', async () => {
    const revoked = (await owner.call('POST', '/api/keys', { mode: 'live' })).body;
    await owner.call('DELETE', `/api/keys/${revoked.key.id}`);
    const flipped = live.slice(0, 12) + (live[12] === 'a' ? 'b' : 'a') + live.slice(13);
    for (const key of [undefined, 'nope', flipped, revoked.secret]) {
      const r = await gateway(key, 'example-forecast', { inputs: {} });
      expect([key?.slice(0, 12), r.status, r.body.error]).toEqual([key?.slice(0, 12), 401, 'invalid_key']);
    }
  });

  it('unknown, draft and out-of-scope names are one 404', async () => {
    await owner.call('POST', '/api/automations', { name: 'a-draft', site: 'https://x.test' });
    const answers = [await gateway(live, 'no-such-flow'), await gateway(live, 'a-draft'), await gateway(scoped, 'example-forecast')];
    for (const a of answers) expect([a.status, a.body]).toEqual([404, answers[0]!.body]);
  });

  it('inputs are checked against the FlowSpec: wrong types 422 with issues, secret inputs never accepted', async () => {
    const r = await gateway(live, 'example-forecast', { inputs: { city: 5 } });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('invalid_request');
    expect(r.body.issues.length).toBeGreaterThan(0);
    expect((await gateway(live, 'example-forecast', { inputs: 'x' })).status).toBe(422);
    const text = await fetch(`${h.url}/v1/run/example-forecast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(text.status).toBe(415);
  });

  it('a secret input: a test key is 403 test_key_forbidden (even unsupplied); a live key resolves the org secret', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'with-secret', site: h.exampleSiteUrl, task: 'Type the city from a secret' })).body
      .automation;
    await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: h.exampleSiteUrl },
        { kind: 'fill', target: { label: 'City' }, slot: 'home_city' },
        { kind: 'click', target: { role: 'button', name: 'Look up' } },
        { kind: 'extract', target: '#result', name: 'forecast' },
      ],
      secret_slots: ['home_city'],
    });
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const forbidden = await gateway(test, 'with-secret', { inputs: {} });
    expect([forbidden.status, forbidden.body.error]).toEqual([403, 'test_key_forbidden']);
    const missing = await gateway(live, 'with-secret');
    expect([missing.status, missing.body.error]).toEqual([422, 'secret_not_found']);
    const sent = await gateway(live, 'with-secret', { inputs: { home_city: 'Paris' } });
    expect([sent.status, sent.body.issues?.[0]?.path]).toEqual([422, ['inputs', 'home_city']]);
    await owner.call('PUT', '/api/secrets/home_city', { value: 'Kyoto' });
    const ok = await gateway(live, 'with-secret');
    expect(ok.body.status).toBe('succeeded');
    // The output echoes the secret: it is masked, as everywhere in the engine.
    expect(ok.body.output.forecast).toBe(`Forecast for ***: ${ok.body.output.forecast.split(': ')[1]}`);
    expect(JSON.stringify(ok.body)).not.toContain('Kyoto');
    // A test key still runs an automation with no secret input.
    expect((await gateway(test, 'example-forecast', { inputs: { city: 'Rome' } })).body.status).toBe('succeeded');
  });

  it('every run is in the executions index; one execution by run_ref id or engine run id; other orgs get 404', async () => {
    const r = await gateway(live, 'example-forecast', { inputs: { city: 'Lima' } });
    const list = await owner.call('GET', '/api/executions?flow=example-forecast&limit=2');
    expect(list.status).toBe(200);
    expect(list.body.executions[0]).toMatchObject({ run_id: r.body.run_id, flow: 'example-forecast', dispatch: 'sync', status: 'succeeded' });
    expect(list.body.executions[0].id).not.toBe(r.body.run_id);
    expect(list.body.next_cursor).not.toBeNull();
    const next = await owner.call('GET', `/api/executions?flow=example-forecast&limit=2&cursor=${list.body.next_cursor}`);
    expect(next.body.executions[0].created_at <= list.body.executions[1].created_at).toBe(true);
    const byRef = await owner.call('GET', `/api/executions/${list.body.executions[0].id}`);
    expect(byRef.body.run.id).toBe(r.body.run_id);
    expect(byRef.body.journal.at(-1).event).toBe('run_finished');
    expect((await owner.call('GET', `/api/executions/${r.body.run_id}`)).body.execution.id).toBe(list.body.executions[0].id);
    const stranger = new Client(h.url);
    await stranger.signup('stranger@example.test');
    expect((await stranger.call('GET', `/api/executions/${r.body.run_id}`)).status).toBe(404);
    expect((await stranger.call('GET', '/api/executions')).body.executions).toEqual([]);
    const auto = (await owner.call('GET', `/api/automations/${exampleId}`)).body.automation;
    expect(auto.calls_7d).toBeGreaterThanOrEqual(3);
    expect(auto.last_run_at).toBe(list.body.executions[0].created_at);
  });

  it('the run stream: every journal entry as an SSE event named by its kind; Last-Event-ID resumes; other orgs 404', async () => {
    const r = await gateway(live, 'example-forecast', { inputs: { city: 'Accra' } });
    const read = async (headers: Record<string, string> = {}) => {
      const res = await fetch(`${h.url}/api/runs/${r.body.run_id}/stream`, { headers: { cookie: `svc_session=${owner.cookie}`, ...headers } });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = (await res.text())
        .split('\n\n')
        .filter(Boolean)
        .map((block) => {
          const lines = Object.fromEntries(block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
          return { id: Number(lines.id), event: lines.event!, data: JSON.parse(lines.data!) };
        });
      return events;
    };
    const all = await read();
    const journal = (await owner.call('GET', `/api/executions/${r.body.run_id}`)).body.journal;
    expect(all.map((e) => e.event)).toEqual(journal.map((e: { event: string }) => e.event));
    expect(all.map((e) => e.data)).toEqual(journal);
    expect(all.at(-1)!.event).toBe('run_finished');
    const resumed = await read({ 'last-event-id': '2' });
    expect(resumed.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    const stranger = new Client(h.url);
    await stranger.signup('stream-stranger@example.test');
    expect((await stranger.call('GET', `/api/runs/${r.body.run_id}/stream`)).status).toBe(404);
    expect((await owner.call('GET', `/api/runs/${r.body.run_id}/stream`, undefined, { 'last-event-id': 'x' })).status).toBe(422);
  });

  it('a run that fails on locator drift marks the automation failing, with a re-record link; a new publish clears it', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'drifty', site: h.exampleSiteUrl, task: 'Click a button that is gone' })).body.automation;
    await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: h.exampleSiteUrl },
        { kind: 'click', target: { css: '#gone', fallbacks: [{ text: 'Also gone' }] } },
      ],
    });
    await owner.call('POST', `/api/authoring/${a.id}/publish`);
    const r = await gateway(live, 'drifty');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('failed');
    expect(r.body.error).toMatchObject({ step: 'click_2', code: 'locator_drift' });
    const failing = (await owner.call('GET', `/api/automations/${a.id}`)).body.automation;
    expect(failing).toMatchObject({ status: 'failing', needs_attention: true });
    expect(failing.rerecord_href).toBe(`${h.url}/automations/${a.id}/studio?step=click_2`);
    // A failing automation still runs (its drifted step fails closed).
    expect((await gateway(live, 'drifty')).body.status).toBe('failed');
    await owner.call('POST', `/api/authoring/${a.id}/edit`);
    await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: h.exampleSiteUrl },
        { kind: 'click', target: { role: 'button', name: 'Look up' } },
      ],
    });
    const fixed = (await owner.call('POST', `/api/authoring/${a.id}/publish`)).body.automation;
    expect(fixed).toMatchObject({ status: 'published', needs_attention: false, rerecord_href: null });
  });
});
