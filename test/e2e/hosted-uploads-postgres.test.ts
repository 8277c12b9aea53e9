import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HostedAssembly } from '../../adapters/hosted/index.js';
import type { RunWorker } from '../../src/service/worker.js';
import { Client, FIXTURE_SITES, PostgresAssemblies } from '../helpers/hosted.js';
import { describePostgres, uniqueSchemaName } from '../helpers/postgres.js';
import { outcome, publishUploadAutomation, RECEIPT, RECEIPT_DIGEST, startUploadSite, type UploadSite } from '../helpers/upload-site.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * An upload automation through the queue worker on Postgres, as `npm start` (SVC_ROLE=api) plus `npm run
 * worker` split it: two shipped assemblies on one schema, both under the hosted tool policy (no `fs`).
 * The worker's upload reads the file the FlowSpec pins from the org's files in Postgres.
 */

const SECRET = 'u'.repeat(40);

describePostgres('upload automations through the queue worker (Postgres)', (dbUrl) => {
  const stack = new PostgresAssemblies(dbUrl, uniqueSchemaName('svc_uploads'));
  let api: HostedAssembly;
  let worker: RunWorker;
  let site: UploadSite;

  beforeAll(async () => {
    site = await startUploadSite();
    ({ api, worker } = await stack.apiAndWorker({ sessionSecrets: [SECRET], authIpLimitPerMinute: 10_000, egressAllow: FIXTURE_SITES }));
  }, 180_000);

  afterAll(async () => {
    await stack.close();
    await site?.close();
  });

  it('the API instance queues the run; the worker instance runs it, uploading the org file under the hosted policy', async () => {
    const owner = new Client(api.url);
    await owner.signup('pg-uploads@example.test');
    await publishUploadAutomation(owner, site, 'receipt');
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const res = await fetch(`${api.url}/v1/run/receipt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: { note: 'postgres' } }),
    });
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
