import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunWorker } from '../../src/service/worker.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Issue 26, point 6 (docs/hosted-api.md, "Drift"): the automation's status follows the site. A page
 * served here on 127.0.0.1 changes under a published automation, in real Chromium: as recorded
 * (clean), with the button renamed (the primary locator misses, its fallback `#go` matches:
 * degraded), and with the button gone (locator_drift: failing). Sync dispatch, then queue dispatch
 * through a worker.
 */

type Mode = 'clean' | 'fallback' | 'gone';
let mode: Mode = 'clean';
let site: { server: Server; url: string };

const PAGE: Record<Mode, string> = {
  clean: '<button id="go">Look up</button>',
  fallback: '<button id="go">Search now</button>',
  gone: '<button id="other">Search now</button>',
};

beforeAll(async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><p id="result">idle</p>${PAGE[mode]}<script>for (const b of document.querySelectorAll('button')) b.addEventListener('click', () => { document.getElementById('result').textContent = 'found'; });</script>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  site = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
afterAll(async () => {
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

const capture = (url: string, extra: unknown[] = []) => [
  { kind: 'navigate', url: `${url}/` },
  { kind: 'click', target: { role: 'button', name: 'Look up', fallbacks: [{ css: '#go' }] } },
  ...extra,
  { kind: 'extract', target: '#result', name: 'result' },
];

async function setUp(h: HostedFixture, email: string, name: string) {
  const owner = new Client(h.url);
  await owner.signup(email);
  const a = (await owner.call('POST', '/api/automations', { name, site: `${site.url}/`, task: 'Look something up' })).body.automation;
  expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: capture(site.url) })).status).toBe(200);
  expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
  const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret as string;
  const gateway = async () => {
    const res = await fetch(`${h.url}/v1/run/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    return (await res.json()) as any;
  };
  const automation = async () => (await owner.call('GET', `/api/automations/${a.id}`)).body.automation;
  const serviceAudit = async () => ((await owner.call('GET', '/api/audit?limit=100')).body.entries as any[]).filter((e) => e.actor === 'service').reverse();
  return { owner, id: a.id as string, gateway, automation, serviceAudit };
}

describe('sync runs', () => {
  let h: HostedFixture;
  beforeAll(async () => {
    h = await startHosted({ egressAllow: FIXTURE_SITES });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('failing -> a clean run: published again, audited as the service; a fallback run: degraded until a clean run or a publish', async () => {
    const t = await setUp(h, 'status@example.test', 'lookup');
    mode = 'clean';
    expect((await t.gateway()).status).toBe('succeeded');
    expect(await t.automation()).toMatchObject({ status: 'published', needs_attention: false, rerecord_href: null });

    mode = 'gone';
    const drifted = await t.gateway();
    expect([drifted.status, drifted.error?.code]).toEqual(['failed', 'locator_drift']);
    expect(await t.automation()).toMatchObject({ status: 'failing', needs_attention: true });
    expect(await t.serviceAudit()).toEqual([]);

    // The site recovers: the next run of the live version puts the automation back.
    mode = 'clean';
    const clean = await t.gateway();
    expect(clean.status).toBe('succeeded');
    expect(await t.automation()).toMatchObject({ status: 'published', needs_attention: false, rerecord_href: null });
    const [recovered] = await t.serviceAudit();
    expect(recovered).toMatchObject({
      actor: 'service',
      target: `automation:${t.id}`,
      metadata: { action: 'automation.recovered', name: 'lookup', from: 'failing', to: 'published', step: 'click_2', run_id: clean.run_id },
    });

    // A run that succeeds only through the fallback locator: degraded (published, needs attention).
    mode = 'fallback';
    const viaFallback = await t.gateway();
    expect([viaFallback.status, viaFallback.output]).toEqual(['succeeded', { result: 'found' }]);
    const degraded = await t.automation();
    expect(degraded).toMatchObject({ status: 'published', needs_attention: true });
    expect(degraded.rerecord_href).toBe(`${h.url}/automations/${t.id}/studio?step=click_2`);
    expect((await t.serviceAudit()).map((e) => [e.metadata.action, e.metadata.from, e.metadata.to])).toEqual([
      ['automation.recovered', 'failing', 'published'],
      ['automation.degraded', 'published', 'degraded'],
    ]);
    // Another such run changes nothing (no second entry).
    await t.gateway();
    expect((await t.serviceAudit()).length).toBe(2);

    // A clean run clears it.
    mode = 'clean';
    await t.gateway();
    expect(await t.automation()).toMatchObject({ status: 'published', needs_attention: false, rerecord_href: null });
    expect((await t.serviceAudit()).at(-1).metadata).toMatchObject({ action: 'automation.recovered', from: 'degraded', to: 'published' });

    // Degraded again, then a new publish clears it (no run needed).
    mode = 'fallback';
    await t.gateway();
    expect((await t.automation()).needs_attention).toBe(true);
    await t.owner.call('POST', `/api/authoring/${t.id}/edit`);
    await t.owner.call('PATCH', `/api/authoring/${t.id}`, { captured_ops: capture(site.url, [{ kind: 'wait', target: '#result' }]) });
    expect((await t.owner.call('POST', `/api/authoring/${t.id}/publish`)).status).toBe(200);
    expect(await t.automation()).toMatchObject({ status: 'published', needs_attention: false });
  });

  it('a run of a version that is not live changes nothing', async () => {
    const t = await setUp(h, 'older@example.test', 'older');
    mode = 'gone';
    await t.gateway();
    expect((await t.automation()).status).toBe('failing');
    // The capture, edited but not published, tested on the recovered site: not the live version.
    mode = 'clean';
    await t.owner.call('POST', `/api/authoring/${t.id}/edit`);
    await t.owner.call('PATCH', `/api/authoring/${t.id}`, { captured_ops: capture(site.url, [{ kind: 'wait', target: '#result' }]) });
    const tested = await t.owner.call('POST', `/api/authoring/${t.id}/test`);
    expect(tested.body.status).toBe('succeeded');
    expect(tested.body.flow_digest).not.toBe((await t.automation()).live_digest);
    expect(await t.automation()).toMatchObject({ status: 'failing', needs_attention: true });
    mode = 'fallback';
    expect((await t.owner.call('POST', `/api/authoring/${t.id}/test`)).body.status).toBe('succeeded');
    expect(await t.automation()).toMatchObject({ status: 'failing', needs_attention: true });
    expect(await t.serviceAudit()).toEqual([]);
  });
});

describe('queued runs (SVC_RUN_DISPATCH=queue, a worker)', () => {
  let h: HostedFixture;
  let worker: RunWorker;
  beforeAll(async () => {
    h = await startHosted({ runDispatch: 'queue', egressAllow: FIXTURE_SITES }, {}, { queue: true });
    worker = await h.service.startWorker({ concurrency: 1 });
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await h?.close();
  });

  it('a queued clean run puts a failing automation back; a queued fallback run marks it degraded', async () => {
    const t = await setUp(h, 'queued@example.test', 'queued-lookup');
    const until = (what: string, ok: (a: any) => boolean) => waitUntil(async () => ok(await t.automation()), { what });
    mode = 'gone';
    expect((await t.gateway()).status).toBe('queued');
    await until('the automation to be failing', (a) => a.status === 'failing');
    mode = 'clean';
    await t.gateway();
    await until('the automation to be published again', (a) => a.status === 'published' && !a.needs_attention);
    mode = 'fallback';
    await t.gateway();
    await until('the automation to be degraded', (a) => a.status === 'published' && a.needs_attention);
    expect((await t.serviceAudit()).map((e) => e.metadata.action)).toEqual(['automation.recovered', 'automation.degraded']);
  });
});
