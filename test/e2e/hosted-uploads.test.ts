import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunWorker } from '../../src/service/worker.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { Viewer } from '../helpers/live-socket.js';
import { boxAt, outcome, publishUploadAutomation, RECEIPT, RECEIPT_DIGEST, startUploadSite, VERIFY_TOP, type UploadSite } from '../helpers/upload-site.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Upload automations under the hosted tool policy (no `fs`), as `npm start` runs them: the upload reads
 * the file its FlowSpec pins by digest from the org's files, never the service's disk, through the
 * gateway (sync and queue), MCP tools/call, a schedule fire and a re-record whose replay uploads the
 * file in the studio page. The service is the shipped assembly (hostedToolPolicy; the test
 * site is on loopback, allowlisted as SVC_EGRESS_ALLOW would); without the file source's exemption every run here fails `tool_denied`.
 */

let site: UploadSite;
beforeAll(async () => {
  site = await startUploadSite();
});
afterAll(() => site?.close());

async function gateway(h: HostedFixture, key: string, flow: string, inputs: Record<string, unknown>) {
  const res = await fetch(`${h.url}/v1/run/${flow}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ inputs }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The upload step of a run's journal: it succeeded with the pinned file, and nothing was denied. */
function expectUploaded(journal: any[]) {
  expect(journal.filter((e) => e.event === 'step_failed')).toEqual([]);
  const upload = journal.find((e) => e.event === 'step_succeeded' && e.step === 'upload_2');
  expect(upload.output.files).toEqual([{ name: 'receipt.csv', digest: RECEIPT_DIGEST, size: RECEIPT.length }]);
}

describe('upload automations on a sync service under the hosted tool policy', () => {
  let h: HostedFixture;
  let owner: Client;
  let key: string;
  let automationId: string;

  beforeAll(async () => {
    h = await startHosted({ minCronIntervalSeconds: 2, egressAllow: FIXTURE_SITES });
    owner = new Client(h.url);
    await owner.signup('uploads@example.test', 'correct horse battery', 'Uploads org');
    automationId = await publishUploadAutomation(owner, site, 'receipt');
    key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('the gateway (sync): the run uploads the stored file and the page reads it', async () => {
    const run = await gateway(h, key, 'receipt', { note: 'sync' });
    expect([run.status, run.body.status, run.body.error, run.body.output]).toEqual([200, 'succeeded', undefined, { outcome: outcome('sync') }]);
    expectUploaded((await owner.call('GET', `/api/executions/${run.body.run_id}`)).body.journal);
  }, 60_000);

  it('MCP tools/call runs it', async () => {
    const client = new McpClient({ name: 'uploads-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const r = await client.callTool({ name: 'receipt', arguments: { note: 'mcp' } });
      expect([r.isError ?? false, r.structuredContent]).toEqual([false, { outcome: outcome('mcp') }]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a schedule fire runs it', async () => {
    const s = (await owner.call('POST', `/api/automations/${automationId}/schedules`, { cron: '*/2 * * * * *', inputs: { note: 'cron' } })).body.schedule;
    const fired = await waitUntil(
      async () => {
        const list = await owner.call('GET', '/api/executions?flow=receipt&limit=50');
        return list.body.executions.find(
          (e: { dispatch: string; status: string }) => e.dispatch === 'schedule' && e.status !== 'running' && e.status !== 'queued',
        );
      },
      { what: 'a finished schedule execution' },
    );
    expect((await owner.call('DELETE', `/api/schedules/${s.id}`)).status).toBe(204);
    const one = await owner.call('GET', `/api/executions/${fired.id}`);
    expect([one.body.execution.status, one.body.run.output]).toEqual(['succeeded', { outcome: outcome('cron') }]);
    expectUploaded(one.body.journal);
  }, 60_000);

  it('re-record after the upload: the studio replays the upload from the org files, the new click takes the drifted one, the next run succeeds', async () => {
    site.version = 2;
    try {
      const drift = await gateway(h, key, 'receipt', { note: 'drift' });
      expect([drift.body.status, drift.body.error?.code, drift.body.error?.step]).toEqual(['failed', 'locator_drift', 'click_4']);
      expect((await owner.call('POST', `/api/authoring/${automationId}/edit`)).status).toBe(200);

      const v = await Viewer.open(`${h.url.replace(/^http/, 'ws')}/api/authoring/${automationId}/live?width=800&height=600&from_step=click_4`, {
        origin: h.url,
        cookie: `svc_session=${owner.cookie}`,
      });
      const ready = await v.next((m) => m.type === 'ready' || m.type === 'closed');
      expect([ready.type, ready.message]).toEqual(['ready', undefined]);
      expect(v.messages.filter((m) => m.type === 'replaying').map((m) => m.id)).toEqual(['navigate_1', 'upload_2', 'fill_3']);
      // The studio page holds the file the replay set (and the replayed note): the click reads it.
      const seen = site.seen.length;
      v.click(boxAt(VERIFY_TOP));
      expect(await waitUntil(() => site.seen[seen], { what: 'the studio page to read the replayed file' })).toBe(outcome('first'));
      const op = await v.next((m) => m.type === 'op');
      expect(op).toMatchObject({ index: 3, replaced: true, op: { kind: 'click', target: { testid: 'verify' } } });
      v.close();

      expect((await owner.call('POST', `/api/authoring/${automationId}/publish`)).status).toBe(200);
      const run = await gateway(h, key, 'receipt', { note: 'after' });
      expect([run.body.status, run.body.output]).toEqual(['succeeded', { outcome: outcome('after') }]);
    } finally {
      site.version = 1;
    }
  }, 120_000);
});

describe('upload automations through the queue worker (PGlite) under the hosted tool policy', () => {
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

  it('the gateway queues it, the worker runs it with the org file', async () => {
    const owner = new Client(h.url);
    await owner.signup('queue-uploads@example.test');
    await publishUploadAutomation(owner, site, 'receipt');
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const r = await gateway(h, key, 'receipt', { note: 'queued' });
    expect([r.status, r.body.status]).toEqual([200, 'queued']);
    const done = await waitUntil(
      async () => {
        const x = await owner.call('GET', `/api/executions/${r.body.run_id}`);
        return ['succeeded', 'failed', 'canceled'].includes(x.body.execution?.status) ? x.body : undefined;
      },
      { what: 'the queued upload run to end' },
    );
    expect([done.execution.dispatch, done.execution.status, done.run.output]).toEqual(['queue', 'succeeded', { outcome: outcome('queued') }]);
    expectUploaded(done.journal);
  }, 120_000);
});
