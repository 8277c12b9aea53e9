import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assembleHostedService, type HostedAssembly } from '../../adapters/hosted/index.js';
import { compile } from '../../src/flow/compile.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { Client, FIXTURE_SITES } from '../helpers/hosted.js';
import { bundleChildScript, describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';
import { waitUntil } from '../helpers/wait.js';
import { holdFlow } from '../helpers/hold-flow.js';
import { waitForLine } from '../helpers/child-line.mjs';

/**
 * The kill test of queue dispatch (docs/hosted-api.md, "Queue dispatch"): this process is the API
 * (the shipped assembly, SVC_ROLE=api, SVC_RUN_DISPATCH=queue, no worker); two spawned worker
 * processes (the shipped assembly, SVC_ROLE=worker, as `npm run worker`) share one Postgres. A bounded load
 * of queued runs (a pure flow whose HTTP step waits on a loopback endpoint this test holds, and the
 * starter browser automation against the service's own demo page) is sent through the gateway; once
 * worker A executes some of them, A is SIGKILLed. Afterwards every run is terminal (none `queued` or
 * `running`), the executions index agrees with the engine runs, and no run was executed twice (one
 * `run_started` per journal). The figures are printed.
 */

const SESSION_SECRET = 'k'.repeat(40);
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

const CHILD_SOURCE = `
import { assembleHostedService } from '@root/adapters/hosted/index.ts';

const [url, schema, secret, secretsKey, apiUrl, exampleSiteUrl] = process.argv.slice(2);
const warn = (level) => (m) => process.stderr.write('[worker ' + process.pid + '] ' + level + ': ' + m + '\\n');
const logger = { debug() {}, info() {}, warn: warn('warn'), error: warn('error') };
const assembly = await assembleHostedService({
  role: 'worker',
  database: { databaseUrl: url, schema, poolSize: 4 },
  // The loopback hold endpoint is allowed as a fixture site; the API (its public URL) stays denied.
  settings: { sessionSecrets: [secret], secretsKeys: [Buffer.from(secretsKey, 'base64')], runDispatch: 'queue', egressAllow: ['127.0.0.1'], publicUrl: apiUrl },
  // The starter example's site is the API process's, as a worker deployment names it.
  exampleSite: { url: exampleSiteUrl },
  web: false,
  logger,
});
await assembly.service.startWorker({ concurrency: 3 });
process.stdout.write('ready\\n');
process.on('SIGTERM', async () => {
  await assembly.close();
  process.exit(0);
});
`;

const HOLD_FLOW = holdFlow(120_000);

describePostgres('queue dispatch: SIGKILL of a worker (two worker processes on Postgres)', (dbUrl) => {
  const schema = uniqueSchemaName('svc_qkill');
  let api: HostedAssembly;
  let hold: Server;
  let holdUrl: string;
  const held: ServerResponse[] = [];
  let releaseAll = false;
  const workers: { child: ChildProcess; stderr: () => string }[] = [];

  beforeAll(async () => {
    hold = createServer((_req: IncomingMessage, res: ServerResponse) => {
      if (releaseAll) res.end('ok');
      else held.push(res);
    });
    await new Promise<void>((r) => hold.listen(0, '127.0.0.1', r));
    holdUrl = `http://127.0.0.1:${(hold.address() as AddressInfo).port}/wait`;

    api = await assembleHostedService({
      role: 'api',
      database: { databaseUrl: dbUrl, schema, poolSize: 4 },
      settings: {
        sessionSecrets: [SESSION_SECRET],
        secretsKeys: [Buffer.from(SECRETS_KEY, 'base64')],
        runDispatch: 'queue',
        authIpLimitPerMinute: 10_000,
        scheduler: false,
        egressAllow: FIXTURE_SITES,
      },
      web: false,
    });
    const script = await bundleChildScript('hosted-worker', CHILD_SOURCE);
    for (let i = 0; i < 2; i++) {
      const child = spawn(process.execPath, [script, dbUrl, schema, SESSION_SECRET, SECRETS_KEY, api.url, api.exampleSiteUrl!], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
      await waitForLine(child, /^ready$/, { what: `worker ${i + 1}`, alsoShow: () => err });
      workers.push({ child, stderr: () => err });
    }
  }, 180_000);

  afterAll(async () => {
    releaseAll = true;
    for (const res of held.splice(0)) res.end('ok');
    for (const { child } of workers) {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('close', r));
        child.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 45_000).unref())]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
    await api?.close();
    await new Promise((r) => hold?.close(r));
    await dropSchema(dbUrl, schema);
    await dropSchema(dbUrl, `${schema}_pgboss`);
  }, 120_000);

  const q = (text: string, values: unknown[] = []) => pgQuery(dbUrl, text.replaceAll('%s.', `"${schema}".`), values);

  /** An org with the `hold` pure automation, the starter browser automation and a live key. */
  async function setupOrg(email: string) {
    const owner = new Client(api.url);
    const { user, org } = await owner.signup(email);
    // The pure flow, published as the service's publish leaves it; and the starter browser automation.
    // Compiled against the tools the assembly's engine runs (the built-ins and its executor's).
    const compiled = compile(HOLD_FLOW, { tools: createToolRegistry(builtinTools(), api.executor.tools), file: 'hold.yaml' });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled));
    const digest = await api.engine.putSpec(compiled.spec);
    const now = new Date().toISOString();
    const holdId = randomUUID();
    await api.storage.automations.create({
      id: holdId,
      org_id: org.id,
      name: 'hold',
      task: 'Hold then greet',
      site: 'https://example.test',
      mcp_enabled: true,
      created_at: now,
      status: 'published',
      live_digest: digest,
      needs_attention: false,
      example: false,
      params: [],
    });
    await api.storage.versions.add({ automation_id: holdId, org_id: org.id, flow_digest: digest, created_at: now, created_by: user.id });
    expect((await owner.call('POST', '/api/automations/example')).status).toBe(201);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret as string;
    const gateway = async (flow: string, inputs: Record<string, unknown>) => {
      const res = await fetch(`${api.url}/v1/run/${flow}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs }),
      });
      const body = (await res.json()) as { run_id: string; status: string };
      expect([res.status, body.status]).toEqual([200, 'queued']);
      return body.run_id;
    };

    return { owner, org, key, gateway };
  }

  it('the run stream in this process follows a run a worker process executes: every entry, in order, then the end', async () => {
    const { owner, gateway } = await setupOrg('stream@example.test');
    const runId = await gateway('hold', { url: holdUrl, n: 1 });
    const res = await fetch(`${api.url}/api/runs/${runId}/stream`, { headers: { cookie: `svc_session=${owner.cookie}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let released = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (value) text += decoder.decode(value, { stream: true });
      // The worker is inside the held HTTP step: let it go on.
      if (!released && text.includes('event: step_started')) {
        await waitUntil(() => held.length > 0, { what: 'the held request of the run' });
        released = true;
        for (const r of held.splice(0)) r.end('ok');
      }
      if (done) break;
    }
    const frames = text.split('\n\n').filter((f) => f.startsWith('id: '));
    const events = frames.map((f) => {
      const [id, event, data] = f.split('\n');
      return { id: Number(id!.slice(4)), event: event!.slice(7), entry: JSON.parse(data!.slice(6)) };
    });
    const journal = (await q(`select seq, entry from %s.journal where run_id = $1 order by seq`, [runId])) as { seq: number; entry: { event: string } }[];
    expect(journal.length).toBeGreaterThanOrEqual(6);
    expect(events.map((e) => e.id)).toEqual(journal.map((j) => j.seq));
    expect(events.map((e) => e.event)).toEqual(journal.map((j) => j.entry.event));
    expect(events.map((e) => e.entry)).toEqual(journal.map((j) => j.entry));
    expect(events.at(-1)!.event).toBe('run_finished');
    expect(events.at(-1)!.entry.status).toBe('succeeded');
  }, 180_000);

  it('every run ends terminal, the index agrees with the engine, and no run is executed twice', async () => {
    const { org, gateway } = await setupOrg('kill@example.test');
    // The load: 12 held pure runs and 4 browser runs, interleaved.
    const runIds: string[] = [];
    for (let i = 0; i < 16; i++)
      runIds.push(i % 4 === 3 ? await gateway('example-forecast', { city: `City${i}` }) : await gateway('hold', { url: holdUrl, n: i }));

    // Wait until worker A executes runs (their leases carry its pid), then SIGKILL it mid-run.
    const [a, b] = workers as [(typeof workers)[0], (typeof workers)[0]];
    const leasedBy = async (pid: number) =>
      (await q(`select id from %s.runs where status = 'running' and lease->>'pid' = $1`, [String(pid)])) as { id: string }[];
    const inFlightOfA = await waitUntil(
      async () => {
        const rows = await leasedBy(a.child.pid!);
        return rows.length > 0 ? rows : undefined;
      },
      { what: 'worker A to execute a run' },
    );
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('close', r));
    // The held requests can now be answered (A's were on connections that died with it).
    releaseAll = true;
    for (const res of held.splice(0)) res.end('ok');

    const terminal = new Set(['succeeded', 'failed', 'canceled']);
    const executions = await waitUntil(
      async () => {
        const rows = (await q(`select run_id, status, error_code from %s.svc_executions where org_id = $1`, [org.id])) as {
          run_id: string;
          status: string;
          error_code: string | null;
        }[];
        return rows.length === runIds.length && rows.every((r) => terminal.has(r.status)) ? rows : undefined;
      },
      { what: 'every execution terminal after the kill', capMs: 240_000 },
    );
    const recoveredInMs = Date.now() - killedAt;

    // Every engine run terminal, its status the execution's; one run_started per journal.
    const runs = (await q(`select id, status from %s.runs where id = any($1)`, [runIds])) as { id: string; status: string }[];
    expect(runs).toHaveLength(runIds.length);
    const byRun = new Map(runs.map((r) => [r.id, r.status]));
    for (const e of executions) expect([e.run_id, e.status]).toEqual([e.run_id, byRun.get(e.run_id)]);
    expect(runs.filter((r) => !terminal.has(r.status))).toEqual([]);
    const starts = (await q(`select run_id, count(*)::int as n from %s.journal where run_id = any($1) and entry->>'event' = 'run_started' group by run_id`, [
      runIds,
    ])) as { run_id: string; n: number }[];
    const duplicates = starts.filter((s) => s.n > 1).length;
    expect(duplicates).toBe(0);
    // The runs A held end as worker_lost; the others succeed.
    const lost = executions.filter((e) => e.error_code === 'worker_lost').map((e) => e.run_id);
    for (const r of inFlightOfA) expect(lost).toContain(r.id);
    const failedOther = executions.filter((e) => e.status !== 'succeeded' && e.error_code !== 'worker_lost');
    expect(failedOther, b.stderr()).toEqual([]);
    const byStatus: Record<string, number> = {};
    for (const e of executions) byStatus[e.error_code ?? e.status] = (byStatus[e.error_code ?? e.status] ?? 0) + 1;
    console.log(
      `[worker kill] ${runIds.length} queued runs (12 pure, 4 browser), worker A killed holding ${inFlightOfA.length}: ${JSON.stringify(byStatus)}; ` +
        `all terminal ${recoveredInMs} ms after the kill (queue recovery bound ${api.queue!.recoveryBoundSeconds} s); duplicate executions: ${duplicates}`,
    );
  }, 420_000);
});
