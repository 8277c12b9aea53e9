import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { serveNodeHttp, type NodeHttpServer } from '../../adapters/node-http/index.js';
import { createPgBossQueue, type PgBossQueue } from '../../adapters/queue-pgboss/index.js';
import { createSqlStorage, type SqlStorage } from '../../adapters/storage-sql/index.js';
import { createSqlServiceStorage } from '../../adapters/storage-sql/service/service-storage.js';
import { createEngine } from '../../src/engine/engine.js';
import type { ServiceStorage } from '../../src/ports/service-storage.js';
import { createHostedService, type HostedService } from '../../src/service/hosted-service.js';
import type { RunWorker } from '../../src/service/worker.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { hostedToolPolicy } from '../../src/tools/policy.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { Client } from '../helpers/hosted.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';
import { outcome, publishUploadAutomation, RECEIPT, RECEIPT_DIGEST, startUploadSite, type UploadSite } from '../helpers/upload-site.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * An upload automation through the queue worker on Postgres, as `npm start` plus `npm run worker`
 * split it: an API instance (SVC_RUN_DISPATCH=queue, no worker) and a worker instance with its own
 * engine, storage and pg-boss connections on one schema, both under the hosted tool policy (no `fs`).
 * The worker's upload reads the file the FlowSpec pins from the org's files in Postgres.
 */

const SECRET = 'u'.repeat(40);

interface Instance {
  engineStorage: SqlStorage;
  storage: ServiceStorage;
  queue: PgBossQueue;
  browser: PlaywrightExecutor;
  service: HostedService;
}

async function instance(dbUrl: string, schema: string, publicUrl: () => string): Promise<Instance> {
  const engineStorage = createSqlStorage({ databaseUrl: dbUrl, schema, poolSize: 4 });
  const browser = createPlaywrightExecutor();
  const tools = createToolRegistry(builtinTools(), browser.tools);
  // The site is on loopback: allowlisted, as SVC_EGRESS_ALLOW would.
  const engine = createEngine({ storage: engineStorage, tools, toolPolicy: hostedToolPolicy({ allow: ['127.0.0.1'] }) });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  const queue = createPgBossQueue({ storage: engineStorage });
  const service = createHostedService({
    storage,
    engine,
    tools,
    queue,
    settings: { sessionSecrets: [SECRET], runDispatch: 'queue', authIpLimitPerMinute: 10_000, publicUrl: publicUrl() },
  });
  return { engineStorage, storage, queue, browser, service };
}

async function dispose(i: Instance | undefined): Promise<void> {
  if (!i) return;
  await i.service.dispose();
  await i.queue.stop();
  await i.browser.dispose();
  await i.engineStorage.dispose();
}

describePostgres('upload automations through the queue worker (Postgres)', (dbUrl) => {
  const schema = uniqueSchemaName('svc_uploads');
  let api: Instance;
  let workerSide: Instance;
  let worker: RunWorker;
  let server: NodeHttpServer;
  let site: UploadSite;

  beforeAll(async () => {
    site = await startUploadSite();
    server = await serveNodeHttp({ fetch: (req, env) => api.service.fetch(req, env) });
    api = await instance(dbUrl, schema, () => server.url);
    workerSide = await instance(dbUrl, schema, () => server.url);
    worker = await workerSide.service.startWorker({ concurrency: 1 });
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await server?.close();
    await dispose(workerSide);
    await dispose(api);
    await site?.close();
    await dropSchema(dbUrl, schema);
  });

  it('the API instance queues the run; the worker instance runs it, uploading the org file under the hosted policy', async () => {
    const owner = new Client(server.url);
    await owner.signup('pg-uploads@example.test');
    await publishUploadAutomation(owner, site, 'receipt');
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const res = await fetch(`${server.url}/v1/run/receipt`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ inputs: { note: 'postgres' } }) });
    const queued = (await res.json()) as { run_id: string; status: string };
    expect([res.status, queued.status]).toEqual([200, 'queued']);
    const done = await waitUntil(
      async () => {
        const x = await owner.call('GET', `/api/executions/${queued.run_id}`);
        return ['succeeded', 'failed', 'canceled'].includes(x.body.execution?.status) ? x.body : undefined;
      },
      { what: 'the queued upload run to end on the worker' },
    );
    expect([done.execution.dispatch, done.execution.status, done.run.output]).toEqual(['queue', 'succeeded', { outcome: outcome('postgres') }]);
    expect(done.journal.filter((e: { event: string }) => e.event === 'step_failed')).toEqual([]);
    const upload = done.journal.find((e: { event: string; step?: string }) => e.event === 'step_succeeded' && e.step === 'upload_2');
    expect(upload.output.files).toEqual([{ name: 'receipt.csv', digest: RECEIPT_DIGEST, size: RECEIPT.length }]);
    expect(worker.stats.executed).toBe(1);
  }, 120_000);
});
