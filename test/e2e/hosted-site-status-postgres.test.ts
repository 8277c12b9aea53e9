import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HostedAssembly } from '../../adapters/hosted/index.js';
import type { RunWorker } from '../../src/service/worker.js';
import { Client, FIXTURE_SITES, PostgresAssemblies } from '../helpers/hosted.js';
import { describePostgres, uniqueSchemaName } from '../helpers/postgres.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Issue 26, point 6 through the queue worker on Postgres (the PGlite version is
 * hosted-site-status.test.ts): two shipped assemblies on one schema, as `npm start` (SVC_ROLE=api)
 * plus `npm run worker` split them. A published automation's page drifts (its button is gone): the
 * queued run fails `locator_drift` on the worker and the automation turns `failing` with
 * needs_attention. The page recovers: the next queued run is clean and the automation is `published`
 * again, audited as the service's own action; a fallback-only run then marks it degraded.
 */

const SECRET = 'd'.repeat(40);

type Mode = 'clean' | 'fallback' | 'gone';
let mode: Mode = 'clean';

const PAGE: Record<Mode, string> = {
  clean: '<button id="go">Look up</button>',
  fallback: '<button id="go">Search now</button>',
  gone: '<button id="other">Search now</button>',
};

const capture = (url: string) => [
  { kind: 'navigate', url: `${url}/` },
  { kind: 'click', target: { role: 'button', name: 'Look up', fallbacks: [{ css: '#go' }] } },
  { kind: 'extract', target: '#result', name: 'result' },
];

describePostgres('status follows the site through the queue worker (Postgres)', (dbUrl) => {
  const stack = new PostgresAssemblies(dbUrl, uniqueSchemaName('svc_drift'));
  let api: HostedAssembly;
  let worker: RunWorker;
  let site: { server: Server; url: string };

  beforeAll(async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><p id="result">idle</p>${PAGE[mode]}<script>for (const b of document.querySelectorAll('button')) b.addEventListener('click', () => { document.getElementById('result').textContent = 'found'; });</script>`,
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    site = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    ({ api, worker } = await stack.apiAndWorker({ sessionSecrets: [SECRET], authIpLimitPerMinute: 10_000, egressAllow: FIXTURE_SITES }));
  }, 180_000);

  afterAll(async () => {
    await stack.close();
    await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
  });

  it('a drifted page fails locator_drift on the worker (failing); after the page recovers a clean queued run publishes it again', async () => {
    const owner = new Client(api.url);
    await owner.signup('pg-drift@example.test');
    const a = (await owner.call('POST', '/api/automations', { name: 'pg-lookup', site: `${site.url}/`, task: 'Look something up' })).body.automation;
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: capture(site.url) })).status).toBe(200);
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret as string;
    const automation = async () => (await owner.call('GET', `/api/automations/${a.id}`)).body.automation;
    const serviceAudit = async () => ((await owner.call('GET', '/api/audit?limit=100')).body.entries as any[]).filter((e) => e.actor === 'service').reverse();
    /** Queue a run through the gateway and wait for the worker to end it. */
    const queuedRun = async () => {
      const res = await fetch(`${api.url}/v1/run/pg-lookup`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const queued = (await res.json()) as { run_id: string; status: string };
      expect([res.status, queued.status]).toEqual([200, 'queued']);
      const done = await waitUntil(
        async () => {
          const x = await owner.call('GET', `/api/executions/${queued.run_id}`);
          return ['succeeded', 'failed', 'canceled'].includes(x.body.execution?.status) ? x.body : undefined;
        },
        { what: 'the queued run to end on the worker' },
      );
      return { ...done, run_id: queued.run_id };
    };
    const until = (what: string, ok: (a: any) => boolean) => waitUntil(async () => ((await ok(await automation())) ? true : undefined), { what });

    mode = 'clean';
    const first = await queuedRun();
    expect([first.execution.dispatch, first.execution.status, first.run.output]).toEqual(['queue', 'succeeded', { result: 'found' }]);
    expect(await automation()).toMatchObject({ status: 'published', needs_attention: false });

    // The page drifts: the button is gone, neither the locator nor its fallback matches.
    mode = 'gone';
    const drifted = await queuedRun();
    expect([drifted.execution.dispatch, drifted.execution.status, drifted.execution.error_code]).toEqual(['queue', 'failed', 'locator_drift']);
    await until('the automation to be failing', (x) => x.status === 'failing');
    expect(await automation()).toMatchObject({ status: 'failing', needs_attention: true });
    expect(await serviceAudit()).toEqual([]);

    // The page recovers: a clean queued run of the live version puts the automation back.
    mode = 'clean';
    const clean = await queuedRun();
    expect([clean.execution.dispatch, clean.execution.status, clean.run.output]).toEqual(['queue', 'succeeded', { result: 'found' }]);
    await until('the automation to be published again', (x) => x.status === 'published' && !x.needs_attention);
    const [recovered] = await serviceAudit();
    expect(recovered).toMatchObject({
      actor: 'service',
      target: `automation:${a.id}`,
      metadata: { action: 'automation.recovered', name: 'pg-lookup', from: 'failing', to: 'published', run_id: clean.run_id },
    });

    // A run that succeeds only through the fallback: degraded (published, needs attention).
    mode = 'fallback';
    const viaFallback = await queuedRun();
    expect([viaFallback.execution.status, viaFallback.run.output]).toEqual(['succeeded', { result: 'found' }]);
    await until('the automation to be degraded', (x) => x.status === 'published' && x.needs_attention);
    expect((await serviceAudit()).map((e) => e.metadata.action)).toEqual(['automation.recovered', 'automation.degraded']);
    expect(worker.stats.executed).toBe(4);
  }, 180_000);
});
