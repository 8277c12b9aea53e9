import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * POST /api/authoring/{id}/test: the capture, compiled as publish compiles it, run once in a fresh
 * browser context before publishing (docs/studio.md, "Replay and testing"). Real Chromium against a
 * page served by this test on 127.0.0.1; the hosted service on PGlite in memory.
 */

let site: { server: Server; url: string };
let h: HostedFixture;
let owner: Client;
let automationId = '';

beforeAll(async () => {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (url.pathname === '/hello')
      return res.end(`<!doctype html><h1 data-testid="greeting">Hello, ${(url.searchParams.get('name') ?? '').replace(/[<&]/g, '')}!</h1>`);
    res.end('<!doctype html><form action="/hello"><label for="n">Name</label><input id="n" name="name"><button data-testid="go">Go</button></form>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  site = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('owner@capture-test.test', 'correct horse battery', 'Capture test org');
  const a = (await owner.call('POST', '/api/automations', { name: 'greet', site: `${site.url}/`, task: 'Say hello' })).body.automation;
  automationId = a.id;
}, 120_000);

afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

describe('testing a capture before publishing', () => {
  it('an empty capture is refused; a capture runs with given inputs and with its recorded samples; nothing is published', async () => {
    const empty = await owner.call('POST', `/api/authoring/${automationId}/test`);
    expect([empty.status, empty.body.error]).toEqual([422, 'invalid_request']);

    const ops = [
      { kind: 'navigate', url: `${site.url}/` },
      { kind: 'fill', target: { label: 'Name' }, value: 'Ada', slot: 'name' },
      { kind: 'click', target: { testid: 'go' } },
      { kind: 'extract', target: { testid: 'greeting' }, name: 'greeting' },
    ];
    expect((await owner.call('PATCH', `/api/authoring/${automationId}`, { captured_ops: ops, input_slots: ['name'] })).status).toBe(200);

    const given = await owner.call('POST', `/api/authoring/${automationId}/test`, { inputs: { name: 'Lin' } });
    expect([given.status, given.body.status, given.body.output]).toEqual([200, 'succeeded', { greeting: 'Hello, Lin!' }]);
    const sample = await owner.call('POST', `/api/authoring/${automationId}/test`);
    expect([sample.status, sample.body.status, sample.body.output]).toEqual([200, 'succeeded', { greeting: 'Hello, Ada!' }]);

    // Still a draft with no live version; the test runs are in the executions index, pinned to the
    // digest publish then gives.
    const automation = (await owner.call('GET', `/api/automations/${automationId}`)).body.automation;
    expect([automation.status, automation.live_digest ?? null]).toEqual(['draft', null]);
    const execution = (await owner.call('GET', `/api/executions/${given.body.run_id}`)).body.execution;
    expect([execution.status, execution.dispatch, execution.flow_digest]).toEqual(['succeeded', 'sync', given.body.flow_digest]);
    const published = await owner.call('POST', `/api/authoring/${automationId}/publish`);
    expect(published.body.flow_digest).toBe(given.body.flow_digest);
  }, 180_000);

  it('a drifted step fails the test run with locator_drift and leaves the automation as it was; a bad input is 422', async () => {
    expect((await owner.call('POST', `/api/authoring/${automationId}/edit`)).status).toBe(200);
    const ops = [
      { kind: 'navigate', url: `${site.url}/` },
      { kind: 'fill', target: { label: 'Name' }, value: 'Ada', slot: 'name' },
      { kind: 'click', target: { testid: 'no-such-button' } },
    ];
    expect((await owner.call('PATCH', `/api/authoring/${automationId}`, { captured_ops: ops, input_slots: ['name'] })).status).toBe(200);
    const run = await owner.call('POST', `/api/authoring/${automationId}/test`);
    expect([run.status, run.body.status, run.body.error?.code, run.body.error?.step]).toEqual([200, 'failed', 'locator_drift', 'click_3']);
    const automation = (await owner.call('GET', `/api/automations/${automationId}`)).body.automation;
    expect([automation.status, automation.needs_attention]).toEqual(['published', false]);

    const bad = await owner.call('POST', `/api/authoring/${automationId}/test`, { inputs: 'Lin' });
    expect([bad.status, bad.body.error]).toEqual([422, 'invalid_request']);
  }, 180_000);
});
