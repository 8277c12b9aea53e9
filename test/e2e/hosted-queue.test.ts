import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_QUEUE } from '../../src/service/domain/dispatch.js';
import type { RunWorker } from '../../src/service/worker.js';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Queue dispatch on the embedded default (PGlite, pg-boss in the same database, the worker in this
 * process): the gateway acknowledges `{run_id, status: "queued"}` and the execution reaches a
 * terminal state through a worker; inputs are still checked before anything is queued; MCP
 * tools/call answers `queued` and `get-run-status` follows it to `succeeded`; a redelivered message
 * never executes a run twice; a schedule fire goes through the queue too.
 */

let h: HostedFixture;
let owner: Client;
let live: string;
let scopedOther: string;
let worker: RunWorker;
let orgId: string;
let userId: string;

const gateway = async (key: string, flow: string, body?: unknown) => {
  const res = await fetch(`${h.url}/v1/run/${flow}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  return { status: res.status, body: await res.json() };
};

const terminalExecution = (runId: string) =>
  waitUntil(
    async () => {
      const r = await owner.call('GET', `/api/executions/${runId}`);
      return r.status === 200 && ['succeeded', 'failed', 'canceled'].includes(r.body.execution.status) ? r.body : undefined;
    },
    { what: `run ${runId} to end through the worker` },
  );

async function mcpClient(key: string): Promise<McpClient> {
  const client = new McpClient({ name: 'queue-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

beforeAll(async () => {
  h = await startHosted({ runDispatch: 'queue', minCronIntervalSeconds: 1, streamHeartbeatSeconds: 1 }, {}, { queue: true });
  owner = new Client(h.url);
  const { user, org } = await owner.signup('queue@example.test');
  orgId = org.id;
  userId = user.id;
  await publishPureAutomation(h.storage, h.engine, orgId, userId, 'greet');
  live = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  scopedOther = (await owner.call('POST', '/api/keys', { mode: 'live', automations: ['something-else'] })).body.secret;
  worker = await h.service.startWorker({ concurrency: 2 });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('queue dispatch (SVC_RUN_DISPATCH=queue) on PGlite', () => {
  it('the gateway answers {run_id, status: "queued"} at once; a worker runs it; the execution is terminal with dispatch "queue"', async () => {
    const r = await gateway(live, 'greet', { inputs: { who: 'queue' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ run_id: expect.any(String), status: 'queued' });
    const done = await terminalExecution(r.body.run_id);
    expect(done.execution).toMatchObject({ run_id: r.body.run_id, flow: 'greet', dispatch: 'queue', status: 'succeeded' });
    expect(done.run.output).toEqual({ greeting: 'Hello, queue!' });
    expect(done.journal.filter((e: { event: string }) => e.event === 'run_started')).toHaveLength(1);
  });

  it('inputs are checked before anything is queued: 422, and no execution', async () => {
    const before = (await owner.call('GET', '/api/executions?limit=100')).body.executions.length;
    const r = await gateway(live, 'greet', { inputs: { who: 42 } });
    expect([r.status, r.body.error]).toEqual([422, 'invalid_request']);
    expect((await owner.call('GET', '/api/executions?limit=100')).body.executions.length).toBe(before);
    // The key scope and unknown names are the same 404 as in sync mode.
    expect((await gateway(scopedOther, 'greet')).status).toBe(404);
  });

  it('a redelivered message never executes its run again: the worker counts a duplicate and the journal has one run_started', async () => {
    const r = await gateway(live, 'greet', { inputs: { who: 'twice' } });
    const first = await terminalExecution(r.body.run_id);
    const duplicatesBefore = worker.stats.duplicates;
    const executedBefore = worker.stats.executed;
    await h.queue!.send(RUN_QUEUE, { execution_id: first.execution.id, org_id: orgId });
    await waitUntil(() => worker.stats.duplicates > duplicatesBefore, { what: 'the duplicate delivery handled' });
    expect(worker.stats.executed).toBe(executedBefore);
    const again = (await owner.call('GET', `/api/executions/${r.body.run_id}`)).body;
    expect(again.execution.status).toBe('succeeded');
    expect(again.journal).toHaveLength(first.journal.length);
    // A message naming nothing of this database is dropped, not retried forever.
    const droppedBefore = worker.stats.dropped;
    await h.queue!.send(RUN_QUEUE, { execution_id: 'no-such-execution', org_id: orgId });
    await waitUntil(() => worker.stats.dropped > droppedBefore, { what: 'the unknown message dropped' });
  });

  it('MCP: tools declare no outputSchema, tools/call answers queued, get-run-status follows it to succeeded', async () => {
    const client = await mcpClient(live);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['get-run-status', 'greet']);
      expect(tools.find((t) => t.name === 'greet')!.outputSchema).toBeUndefined();
      const call = await client.callTool({ name: 'greet', arguments: { who: 'mcp' } });
      expect(call.isError).toBeFalsy();
      expect(call.structuredContent).toEqual({ run_id: expect.any(String), status: 'queued' });
      const runId = (call.structuredContent as { run_id: string }).run_id;
      const status = await waitUntil(
        async () => {
          const s = await client.callTool({ name: 'get-run-status', arguments: { run_id: runId } });
          const body = s.structuredContent as { status: string };
          return body.status === 'succeeded' ? body : undefined;
        },
        { what: 'get-run-status to say succeeded' },
      );
      expect(status).toMatchObject({ run_id: runId, status: 'succeeded', output: { greeting: 'Hello, mcp!' }, flow: 'greet' });
      // MCP Apps: both tools link the run view; the queued answer shows no step yet, the polled one the run.
      for (const t of tools) expect([t.name, t._meta?.ui]).toEqual([t.name, { resourceUri: 'ui://flowctl/run-view.html' }]);
      expect(call._meta?.['flowctl/run_view']).toEqual({ run_id: runId, flow: 'greet', status: 'queued', steps: [] });
      const polled = await client.callTool({ name: 'get-run-status', arguments: { run_id: runId } });
      expect(polled._meta?.['flowctl/run_view']).toMatchObject({
        run_id: runId,
        flow: 'greet',
        status: 'succeeded',
        steps: [expect.objectContaining({ status: 'succeeded' })],
      });
      const exec = (await owner.call('GET', `/api/executions/${runId}`)).body.execution;
      expect(exec.dispatch).toBe('mcp');
      // Unknown runs, bad arguments: tool errors, not protocol errors.
      const unknown = await client.callTool({ name: 'get-run-status', arguments: { run_id: 'nope' } });
      expect(unknown.isError).toBe(true);
      const bad = await client.callTool({ name: 'get-run-status', arguments: {} });
      expect(bad.isError).toBe(true);
      // Invalid arguments of an automation are a tool result with every issue, nothing queued.
      const invalid = await client.callTool({ name: 'greet', arguments: { who: 5 } });
      expect(invalid.isError).toBe(true);
    } finally {
      await client.close();
    }
    // A key scoped elsewhere does not see the run.
    const other = await mcpClient(scopedOther);
    try {
      const listed = await other.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual(['get-run-status']);
    } finally {
      await other.close();
    }
  });

  it('with an automation named get-run-status, the extra tool is not registered: the automation is the tool', async () => {
    const named = await publishPureAutomation(h.storage, h.engine, orgId, userId, 'get-run-status');
    const client = await mcpClient(live);
    try {
      const { tools } = await client.listTools();
      const statusTools = tools.filter((t) => t.name === 'get-run-status');
      expect(statusTools).toHaveLength(1);
      expect(statusTools[0]!.description).toBe(named.task);
      const call = await client.callTool({ name: 'get-run-status', arguments: { who: 'named' } });
      expect(call.structuredContent).toEqual({ run_id: expect.any(String), status: 'queued' });
      const done = await terminalExecution((call.structuredContent as { run_id: string }).run_id);
      expect(done.run.output).toEqual({ greeting: 'Hello, named!' });
    } finally {
      await client.close();
    }
  });

  it('the run stream of a run no worker has taken yet sends comment heartbeats (SVC_STREAM_HEARTBEAT) until the client goes', async () => {
    // A queued run whose message is not sent: nothing will run it, the stream stays quiet.
    const automation = (await h.storage.automations.getByName(orgId, 'greet'))!;
    const prepared = await h.engine.prepare({ digest: automation.live_digest as never }, { who: 'quiet' });
    const executionId = `quiet-${Date.now()}`;
    await h.storage.executions.create({
      id: executionId,
      org_id: orgId,
      automation_id: automation.id,
      flow: 'greet',
      run_id: prepared.run_id,
      flow_digest: automation.live_digest!,
      dispatch: 'queue',
      status: 'queued',
      created_at: new Date().toISOString(),
    });
    const abort = new AbortController();
    const res = await fetch(`${h.url}/api/runs/${executionId}/stream`, { headers: { cookie: `svc_session=${owner.cookie}` }, signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    await waitUntil(
      async () => {
        const { value, done } = await reader.read();
        if (value) text += decoder.decode(value, { stream: true });
        return done || text.includes(': heartbeat\n\n');
      },
      { what: 'a heartbeat comment on the quiet stream' },
    );
    expect(text).toContain(': heartbeat\n\n');
    expect(text).not.toContain('event:');
    abort.abort();
    await h.engine.cancel(prepared.run_id);
  });

  it('a schedule fire is queued too: its execution (dispatch "schedule") ends succeeded through the worker', async () => {
    const automation = await publishPureAutomation(h.storage, h.engine, orgId, userId, 'scheduled');
    const s = await owner.call('POST', `/api/automations/${automation.id}/schedules`, { cron: '* * * * * *', inputs: { who: 'cron' } });
    expect(s.status).toBe(201);
    const exec = await waitUntil(
      async () => {
        const list = (await owner.call('GET', '/api/executions?flow=scheduled')).body.executions as { status: string; dispatch: string; run_id: string }[];
        return list.find((e) => e.status === 'succeeded');
      },
      { what: 'a scheduled run to succeed through the queue' },
    );
    expect(exec.dispatch).toBe('schedule');
    await owner.call('PATCH', `/api/schedules/${s.body.schedule.id}`, { enabled: false });
  });
});
