import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * What runs reach through the shipped assembly's egress guard (docs/tools.md, "Policy";
 * docs/hosted-api.md, "Starter example"): only the page's refused requests are warnings on the
 * user's step (the browser's own traffic never is), and no run reaches the service's own API, even
 * with loopback allowlisted for fixture sites; the starter example, on an origin of its own, runs.
 */

let h: HostedFixture;
let owner: Client;
let key: string;
let site: { server: Server; url: string; favicons: number };
let faviconSeen: () => void = () => {};

// Refused by the guard (private, not allowlisted): nothing is ever connected to.
const REFUSED_ICON = 'http://10.255.0.1/favicon.ico';
const REFUSED_DATA = 'http://10.255.0.2/data';

async function startSite() {
  const state = { server: undefined as unknown as Server, url: '', favicons: 0 };
  let favicon: Promise<void> = new Promise((r) => (faviconSeen = r));
  state.server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/favicon.ico') {
      // The browser's own request (no frame of the page makes it): sent to a refused host.
      state.favicons++;
      res.writeHead(302, { location: REFUSED_ICON }).end();
      faviconSeen();
      return;
    }
    if (path === '/slow') {
      // Held until the browser has asked for the favicon: its refusal falls inside the navigate step.
      void favicon.then(() => {
        favicon = new Promise((r) => (faviconSeen = r));
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ready');
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (path === '/fetches') {
      res.end(`<!doctype html><title>Fetches</title><h1>Fetches</h1><p id="out">waiting</p>
<script>fetch(${JSON.stringify(REFUSED_DATA)}).then(() => 'online', () => 'offline').then((t) => { document.getElementById('out').textContent = t; });</script>`);
      return;
    }
    res.end(`<!doctype html><title>Plain</title><h1>Plain page</h1><p id="out">waiting</p>
<script>fetch('/slow').then((r) => r.text()).then((t) => { document.getElementById('out').textContent = t; });</script>`);
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

async function publish(name: string, ops: unknown[]): Promise<void> {
  const a = (await owner.call('POST', '/api/automations', { name, site: ops[0] && (ops[0] as { url: string }).url, task: `Task of ${name}` })).body.automation;
  expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops })).status).toBe(200);
  const r = await owner.call('POST', `/api/authoring/${a.id}/publish`);
  expect([r.status, r.body.error]).toEqual([200, undefined]);
}

async function run(name: string) {
  const r = await owner.call('POST', `/v1/run/${name}`, { inputs: {} }, { authorization: `Bearer ${key}` });
  const journal = (await owner.call('GET', `/api/executions/${r.body.run_id}`)).body.journal as {
    event: string;
    warnings?: { code: string; message: string }[];
  }[];
  const warnings = journal.flatMap((e) => e.warnings ?? []);
  return { status: r.status, body: r.body, warnings };
}

beforeAll(async () => {
  site = await startSite();
  // Loopback allowlisted for the fixture site, as a company allowlists its private sites: the
  // service's own API stays refused (the assembly denies its own listeners).
  h = await startHosted({ egressAllow: FIXTURE_SITES }, {}, { screenshots: false });
  owner = new Client(h.url);
  await owner.signup('egress-own@example.test', 'correct horse battery', 'Egress org');
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
}, 120_000);

afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

describe("only the page's traffic is the page's", () => {
  it("the browser's own refused request (a favicon redirected to a private host) is no warning on the step", async () => {
    await publish('plain-page', [
      { kind: 'navigate', url: `${site.url}/` },
      { kind: 'extract', target: '#out', name: 'out' },
    ]);
    const before = site.favicons;
    const r = await run('plain-page');
    expect([r.status, r.body.status, r.body.output]).toEqual([200, 'succeeded', { out: 'ready' }]);
    // The browser did ask for it (and was refused), during the navigate step.
    expect(site.favicons).toBeGreaterThan(before);
    expect(r.warnings.filter((w) => w.code === 'egress_denied')).toEqual([]);
  }, 120_000);

  it('a request the page makes to a refused host is still a warning naming it', async () => {
    await publish('fetches-page', [
      { kind: 'navigate', url: `${site.url}/fetches` },
      { kind: 'extract', target: '#out', name: 'out' },
    ]);
    const r = await run('fetches-page');
    expect([r.status, r.body.status, r.body.output]).toEqual([200, 'succeeded', { out: 'offline' }]);
    const denied = r.warnings.filter((w) => w.code === 'egress_denied');
    expect(denied).toHaveLength(1);
    expect(denied[0]!.message).toContain('10.255.0.2');
    expect(denied[0]!.message).not.toContain('10.255.0.1');
  }, 120_000);
});

describe('no self-reach', () => {
  it("a run that opens the service's own /api/session fails egress_denied (loopback allowlisted or not)", async () => {
    for (const url of [`${h.url}/api/session`, `${h.url.replace('127.0.0.1', 'localhost')}/api/session`, `${h.url}/example/site`]) {
      const name = `self-${[...url].reduce((n, c) => (n * 31 + c.charCodeAt(0)) >>> 0, 7).toString(36)}`;
      await publish(name, [
        { kind: 'navigate', url },
        { kind: 'extract', target: 'body', name: 'body' },
      ]);
      const r = await run(name);
      expect([r.body.status, r.body.error?.code ?? r.body.error], url).toEqual(['failed', 'egress_denied']);
    }
  }, 180_000);

  it('the starter example runs on its own origin', async () => {
    expect(new URL(h.exampleSiteUrl).origin).not.toBe(new URL(h.url).origin);
    expect((await owner.call('POST', '/api/automations/example')).status).toBe(201);
    const r = await owner.call('POST', '/v1/run/example-forecast', { inputs: { city: 'Oslo' } }, { authorization: `Bearer ${key}` });
    expect([r.status, r.body.status]).toEqual([200, 'succeeded']);
    expect(r.body.output.forecast).toMatch(/^Forecast for Oslo: /);
    // The example's origin serves only the demo page: no API there.
    expect((await fetch(new URL('/api/session', h.exampleSiteUrl))).status).toBe(404);
  }, 120_000);
});
