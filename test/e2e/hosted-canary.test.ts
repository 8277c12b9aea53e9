import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleHostedService, type HostedAssembly } from '../../adapters/hosted/index.js';
import type { Digest } from '../../src/canonical.js';
import { compile } from '../../src/flow/compile.js';
import type { HostedSettings } from '../../src/service/settings.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { byteFormsIn, canaryByteForms, canaryForms, copyEscaped, formsIn, makeCanary, type CanaryForm } from '../helpers/canary-forms.js';
import { checkScreenshots, type Hook, type Site, startReceiver, startSite } from '../helpers/canary-site.js';
import { closeStack, filesUnder, logicalDump, type Stack, startStack } from '../helpers/canary-stack.js';
import { createRecorder } from '../helpers/output-recorder.js';
import { publishSpecAutomation } from '../helpers/pure-automation.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { scheduleOnce } from '../helpers/schedule-once.js';
import { testSeed } from '../helpers/seeded.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The hosted secret canary (issue 19; docs/hosted-api.md, "Security tests"). One org secret, a long
 * seeded random value with characters that every encoder writes differently, is used by a browser
 * flow (typed into a password field and a plain text field of a loopback page, which also reads it
 * back into the DOM) and an HTTP flow (sent to a loopback endpoint in the query and a JSON body; the
 * endpoint echoes it back plain, percent-encoded and in base64), each in a succeeding and a failing
 * variant (the endpoint answers 500; the page lacks the button clicked after the fill). They run
 * through the gateway, MCP (the official SDK client, JSON and SSE with progress) and a schedule,
 * with sync dispatch and then queue dispatch (pg-boss, a worker), with a webhook endpoint on
 * 127.0.0.1 registered. Then every answer (body and headers) the test received, every run's SSE
 * stream, every webhook delivery, every log line (an injected logger at debug level, console,
 * stdout and stderr), a logical dump of every table, the database files (PGlite) or pg_dump
 * (Postgres, when TEST_DATABASE_URL is set: the whole test runs there), and every artifact (the
 * stored screenshot bytes; decoded, the pixels of both fields are the mask's black) hold the canary
 * in none of the forms of test/helpers/canary-forms.ts. What the loopback site received is not
 * searched: delivering the secret there is the flows' job (and is checked to have happened).
 */

const SEED = testSeed(0xca_2a_19);
const CANARY = makeCanary(SEED);
const FORMS = canaryForms(CANARY);
const BYTE_FORMS = canaryByteForms(CANARY);
/** A non-secret string stored in plain columns: the searches must find it (they see the data). */
const CONTROL = `CONTROL-${SEED.toString(36)}-automation-task-text`;
const run = promisify(execFile);
/** What the test saw: every answer, log line and output, searched for the canary at the end. */
const { seen, pendingReads, logs, recFetch, logger, teeOutput } = createRecorder();

// ---------------------------------------------------------------------------------------------
// The stack: the database (Postgres when TEST_DATABASE_URL is set, else PGlite in a folder) and the
// shipped assembly on it (engine under the hosted tool policy, egress guard, Playwright executor with
// screenshots, pg-boss queue, scheduler), as `npm start` builds it. The assembly is replaced between
// the sync and the queue phase: a second one on the same database, as a redeploy with
// SVC_RUN_DISPATCH=queue would run.

let stack: Stack;
/** The assembly serving the current phase. */
let api: HostedAssembly | undefined;
let site: Site;
let receiver: { url: string; server: Server; hooks: Hook[] };
let restoreOutput: () => void;
/** The API's URL in the current phase. */
const apiUrl = (): string => api!.url;

const SESSION_SECRET = 'c'.repeat(40);
/** Shared by both assemblies, as every process of a deployment shares SVC_SECRETS_KEY. */
const SECRETS_KEY = Buffer.alloc(32, 7);

/** The shipped assembly on the stack's database; the browser steps' drift window is the shipped one. */
function startService(runDispatch: 'sync' | 'queue'): Promise<HostedAssembly> {
  const settings: Partial<HostedSettings> = {
    sessionSecrets: [SESSION_SECRET],
    secretsKeys: [SECRETS_KEY],
    runDispatch,
    minCronIntervalSeconds: 1,
    egressAllow: ['127.0.0.1'],
    webhookRetrySeconds: [1, 1, 1],
    streamHeartbeatSeconds: 1,
    ipLimitPerMinute: 100_000,
    orgLimitPerMinute: 100_000,
  };
  return assembleHostedService({ database: stack.database, settings, logger, web: false, screenshots: true });
}

// ---------------------------------------------------------------------------------------------
// Calls

class Session {
  cookie: string | undefined;
  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.cookie = `svc_session=${this.cookie}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await recFetch(apiUrl() + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    for (const c of res.headers.getSetCookie()) {
      const m = /^svc_session=([^;]*)/.exec(c);
      if (m) this.cookie = m[1] || undefined;
    }
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  }
  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await this.call(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }
}

const owner = new Session();
let liveKey = '';
let orgId = '';
const automations: Record<string, { id: string; expect: 'succeeded' | 'failed'; code?: string }> = {};

async function mcp(mode: 'json' | 'sse'): Promise<McpClient> {
  const client = new McpClient({ name: 'canary', version: '1.0.0' });
  // The SDK client lists JSON first; an SSE-first client is a custom fetch (docs/mcp.md).
  const doFetch: typeof fetch =
    mode === 'json'
      ? recFetch
      : (input, init) => {
          const headers = new Headers(init?.headers);
          if (init?.method === 'POST') headers.set('accept', 'text/event-stream, application/json');
          return recFetch(input, { ...init, headers });
        };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${apiUrl()}/mcp`), { requestInit: { headers: { authorization: `Bearer ${liveKey}` } }, fetch: doFetch }),
  );
  return client;
}

type Execution = { id: string; run_id: string; flow: string; dispatch: string; status: string; error_code?: string | null };
const executions = async (): Promise<Execution[]> => (await owner.ok('GET', '/api/executions?limit=200')).executions;
const terminal = (s: string) => s === 'succeeded' || s === 'failed' || s === 'canceled';

/** Every run of one phase, through each surface; waits for their ends and their webhooks. */
async function phase(mode: 'sync' | 'queue'): Promise<void> {
  const before = new Set((await executions()).map((e) => e.id));
  const names = Object.keys(automations);
  // Gateway.
  for (const name of names) {
    const res = await recFetch(`${apiUrl()}/v1/run/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const body = await res.json();
    expect([name, res.status, body.status], JSON.stringify(body)).toEqual([name, 200, mode === 'queue' ? 'queued' : automations[name]!.expect]);
  }
  // MCP, the official SDK client (JSON mode); in sync mode also SSE with progress notifications.
  const json = await mcp('json');
  try {
    const tools = (await json.listTools()).tools.map((t) => t.name);
    for (const name of names) expect(tools).toContain(name);
    for (const name of names) {
      const result = await json.callTool({ name, arguments: {} });
      if (mode === 'sync') {
        expect([name, Boolean(result.isError)]).toEqual([name, automations[name]!.expect === 'failed']);
      } else {
        const runId = (result.structuredContent as { run_id: string }).run_id;
        await waitUntil(
          async () => {
            const s = await json.callTool({ name: 'get-run-status', arguments: { run_id: runId } });
            return terminal((s.structuredContent as { status: string }).status);
          },
          { what: `get-run-status of ${name} to be terminal` },
        );
      }
    }
  } finally {
    await json.close();
  }
  if (mode === 'sync') {
    const sse = await mcp('sse');
    try {
      for (const name of names) {
        const progress: unknown[] = [];
        const result = await sse.callTool({ name, arguments: {} }, undefined, { onprogress: (p) => progress.push(p) });
        expect([name, Boolean(result.isError)]).toEqual([name, automations[name]!.expect === 'failed']);
        seen.push({ where: `MCP progress of ${name}`, text: JSON.stringify(progress) });
      }
    } finally {
      await sse.close();
    }
  }
  // A schedule per automation, firing once (a per-second cron deleted after its first fire would
  // start as many runs as the machine took seconds to see it: test/helpers/schedule-once.ts).
  const { ids: schedules } = await scheduleOnce(
    owner,
    names.map((n) => automations[n]!.id),
  );
  await waitUntil(
    async () => {
      const fired = new Set((await executions()).filter((e) => !before.has(e.id) && e.dispatch === 'schedule').map((e) => e.flow));
      return names.every((n) => fired.has(n));
    },
    { what: `a schedule fire of each automation (${mode})` },
  );
  for (const id of schedules) await owner.ok('DELETE', `/api/schedules/${id}`);
  // Every run ends, as expected, and its webhooks arrive.
  const mine = await waitUntil(
    async () => {
      const list = (await executions()).filter((e) => !before.has(e.id));
      return list.every((e) => terminal(e.status)) && list;
    },
    { what: `every ${mode} run to end` },
  );
  for (const e of mine) {
    const want = automations[e.flow]!;
    expect([e.flow, e.dispatch, e.status, e.status === 'failed' ? e.error_code : undefined]).toEqual([
      e.flow,
      e.dispatch,
      want.expect,
      want.expect === 'failed' ? want.code : undefined,
    ]);
  }
  const dispatches = new Set(mine.map((e) => e.dispatch));
  expect([...dispatches].sort()).toEqual(mode === 'sync' ? ['mcp', 'schedule', 'sync'] : ['mcp', 'queue', 'schedule']);
  await waitUntil(
    () => {
      const events = receiver.hooks.map((h) => JSON.parse(h.body) as { type: string; data: { run_id?: string } });
      return mine.every(
        (e) =>
          events.some((ev) => ev.type === 'run.finished' && ev.data.run_id === e.run_id) &&
          (e.status !== 'failed' || events.some((ev) => ev.type === 'run.failed' && ev.data.run_id === e.run_id)),
      );
    },
    { what: `the webhooks of every ${mode} run` },
  );
}

/** Publish an HTTP flow: compiled from Flow YAML, stored as publish stores a version. */
async function publishHttpFlow(name: string, path: string, userId: string): Promise<string> {
  const source = `name: ${name}
description: Send the canary to the loopback API
inputs:
  canary: {type: string, secret: true}
steps:
  - id: send
    tool: http/request@1
    args:
      method: POST
      url: ${site.url}${path}
      query: {k: "\${inputs.canary}"}
      json: {token: "\${inputs.canary}", note: sent}
output:
  status: \${steps.send.output.status}
  body: \${steps.send.output.body}
  url: \${steps.send.output.url}
`;
  // Compiled against the tools the assembly's engine runs (the built-ins and its executor's).
  const compiled = compile(source, { file: `${name}.yaml`, tools: createToolRegistry(builtinTools(), api!.executor.tools) });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const published = await publishSpecAutomation(api!.storage, api!.engine, {
    orgId,
    userId,
    name,
    spec: compiled.spec,
    task: CONTROL,
    site: site.url,
    id: `auto-${name}`,
  });
  return published.id;
}

/** Publish a browser flow through the hosted API: captured ops with the canary as a secret slot. */
async function publishBrowserFlow(name: string, page: string): Promise<string> {
  const a = (await owner.ok('POST', '/api/automations', { name, site: `${site.url}${page}`, task: CONTROL })).automation;
  await owner.ok('PATCH', `/api/authoring/${a.id}`, {
    captured_ops: [
      { kind: 'navigate', url: `${site.url}${page}` },
      { kind: 'fill', target: { label: 'Password' }, slot: 'canary' },
      { kind: 'fill', target: { label: 'Name' }, slot: 'canary' },
      { kind: 'click', target: { role: 'button', name: 'Save' } },
      { kind: 'extract', target: '#status', name: 'status' },
      { kind: 'extract', target: '#echo', attribute: 'data-typed', name: 'echo' },
    ],
    secret_slots: ['canary'],
  });
  await owner.ok('POST', `/api/authoring/${a.id}/publish`);
  return a.id;
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  restoreOutput = teeOutput();
  site = await startSite();
  receiver = await startReceiver();
  stack = await startStack();
  api = await startService('sync');
  await api.service.startWorker();
  const { user, org } = await owner.ok('POST', '/api/auth/signup', { email: 'canary@example.test', password: 'correct horse battery', org_name: 'Canary org' });
  orgId = org.id;
  await owner.ok('PUT', '/api/secrets/canary', { value: CANARY });
  liveKey = (await owner.ok('POST', '/api/keys', { mode: 'live', name: 'canary-key' })).secret;
  await owner.ok('POST', '/api/webhooks', { url: `${receiver.url}/hook`, description: 'canary receiver' });
  automations['canary-browser-ok'] = { id: await publishBrowserFlow('canary-browser-ok', '/form'), expect: 'succeeded' };
  automations['canary-browser-fail'] = { id: await publishBrowserFlow('canary-browser-fail', '/form-missing'), expect: 'failed', code: 'locator_drift' };
  automations['canary-http-ok'] = { id: await publishHttpFlow('canary-http-ok', '/api/ok', user.id), expect: 'succeeded' };
  automations['canary-http-fail'] = { id: await publishHttpFlow('canary-http-fail', '/api/fail', user.id), expect: 'failed', code: 'http_status' };
}, 180_000);

afterAll(async () => {
  restoreOutput?.();
  await api?.close();
  await closeStack(stack);
  await new Promise((r) => site?.server.close(r));
  await new Promise((r) => receiver?.server.close(r));
});

/** The searches find what is there: each form, embedded in other text and bytes. */
function selfCheck(): void {
  for (const f of FORMS) expect([f.name, formsIn(`xx${f.text}yy`, FORMS)]).toEqual([f.name, expect.arrayContaining([f.name])]);
  for (const f of BYTE_FORMS)
    expect([f.name, byteFormsIn(Buffer.concat([Buffer.from([0, 1]), f.bytes, Buffer.from([2])]), BYTE_FORMS)]).toEqual([
      f.name,
      expect.arrayContaining([f.name]),
    ]);
  expect(formsIn(CONTROL, FORMS)).toEqual([]);
}

describe(`hosted secret canary (${TEST_DATABASE_URL ? 'Postgres' : 'PGlite'})`, () => {
  it('every surface, sync and queued, succeeding and failing: the canary is in no answer, stream, webhook, log line, table, file or artifact', async () => {
    selfCheck();
    process.stdout.write(`[canary] seed ${SEED}, ${CANARY.length} characters, ${FORMS.length} text forms, ${BYTE_FORMS.length} byte forms\n`);

    await phase('sync');
    // Queue dispatch: a new assembly on the same database; its worker runs the runs.
    await api!.close();
    api = await startService('queue');
    await api.service.startWorker({ concurrency: 2 });
    await phase('queue');

    // The flows did deliver the secret where it belongs: the loopback site got the exact value.
    for (const path of ['/typed pw', '/typed name', '/api/ok query', '/api/ok body', '/api/fail query', '/api/fail body']) {
      const got = site.received.filter((r) => r.path === path);
      expect([path, got.length > 0, got.every((r) => r.value === CANARY)]).toEqual([path, true, true]);
    }

    // Read everything back through the API: every run's stream and record, every resource.
    const all = await executions();
    for (const e of all) {
      const res = await recFetch(`${apiUrl()}/api/runs/${e.id}/stream`, { headers: { cookie: `svc_session=${owner.cookie}` } });
      const text = await res.text();
      expect([e.id, res.status, text.includes('event: run_finished')]).toEqual([e.id, 200, true]);
    }
    const journals: { flow: string; journal: { event: string; step?: string; artifacts?: string[] }[] }[] = [];
    for (const e of all) journals.push({ flow: e.flow, journal: (await owner.ok('GET', `/api/executions/${e.id}`)).journal });
    for (const [name, a] of Object.entries(automations)) {
      await owner.ok('GET', `/api/automations/${a.id}`);
      await owner.ok('GET', `/api/automations/${a.id}/versions`);
      await owner.ok('GET', `/api/automations/${a.id}/schedules`);
      await owner.ok('GET', `/api/flowspecs/${name}`);
      if (name.startsWith('canary-browser')) await owner.ok('GET', `/api/authoring/${a.id}`);
    }
    for (const p of ['/api/automations', '/api/audit?limit=200', '/api/secrets', '/api/keys', '/api/session', '/api/members']) await owner.ok('GET', p);
    for (const w of (await owner.ok('GET', '/api/webhooks')).webhooks) {
      const deliveries = (await owner.ok('GET', `/api/webhooks/${w.id}/deliveries?limit=200`)).deliveries as { status: string }[];
      expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
    }
    await Promise.all(pendingReads);

    // Artifacts: every screenshot the journals name, as stored.
    const shots: { image: Uint8Array; afterNameFill: boolean; afterPasswordFill: boolean }[] = [];
    for (const { flow, journal } of journals) {
      if (!flow.startsWith('canary-browser')) continue;
      const stepsDone = journal.filter((x) => x.event === 'step_succeeded');
      for (const [i, entry] of stepsDone.entries()) {
        for (const digest of entry.artifacts ?? []) {
          const stored = await api!.engineStorage.artifacts!.get(digest as Digest);
          expect(stored?.mediaType).toBe('image/jpeg');
          // Steps in order: navigate, fill the password, fill the name, click, extracts.
          shots.push({ image: stored!.bytes, afterPasswordFill: i >= 1, afterNameFill: i >= 2 });
        }
      }
    }
    expect(shots.length).toBeGreaterThanOrEqual(8);
    const artifactHits = shots.flatMap((s, i) => byteFormsIn(s.image, BYTE_FORMS).map((f) => `screenshot ${i}: ${f}`));
    await checkScreenshots(site.url, shots);

    // Stop everything that writes, then read the database.
    await api!.close();
    const dump = await logicalDump(stack);
    expect(dump).toContain(CONTROL);
    const dumpHits = formsIn(dump, FORMS);
    let storeHits: string[] = [];
    let storeWhat: string;
    if (stack.schema) {
      const { stdout } = await run('pg_dump', ['--schema', stack.schema, '--schema', `${stack.schema}_pgboss`, TEST_DATABASE_URL!], {
        maxBuffer: 512 * 1024 * 1024,
      });
      expect(stdout).toContain(CONTROL);
      const copyForms: CanaryForm[] = FORMS.map((f) => ({ name: `${f.name} (COPY-escaped)`, text: copyEscaped(f.text) }));
      storeHits = [...formsIn(stdout, FORMS), ...formsIn(stdout, copyForms)];
      storeWhat = `pg_dump (${stdout.length} characters)`;
    } else {
      await stack.pglite!.close();
      const files = await filesUnder(join(stack.dataDir!, 'db'));
      let control = 0;
      for (const file of files) {
        const bytes = await readFile(file);
        if (bytes.includes(CONTROL)) control++;
        storeHits.push(...byteFormsIn(bytes, BYTE_FORMS).map((f) => `${file}: ${f}`));
      }
      expect(control).toBeGreaterThan(0);
      storeWhat = `${files.length} files of the PGlite data folder`;
    }

    // The search.
    await Promise.all(pendingReads);
    const streams = seen.filter((s) => s.where.includes('/stream'));
    expect(streams.length).toBe(all.length);
    const answerHits = seen.flatMap((s) => formsIn(s.text, FORMS).map((f) => `${s.where}: ${f}`));
    const hookHits = receiver.hooks.flatMap((h) => formsIn(`${JSON.stringify(h.headers)}\n${h.body}`, FORMS).map((f) => `webhook ${h.path}: ${f}`));
    const logHits = logs.flatMap((l) => formsIn(l, FORMS).map((f) => `log "${l.slice(0, 120)}": ${f}`));
    process.stdout.write(
      `[canary] searched ${seen.length} answers (${streams.length} run streams), ${receiver.hooks.length} webhook deliveries, ${logs.length} log lines, ${dump.length} characters of table rows, ${storeWhat}, ${shots.length} screenshots; ${all.length} runs\n`,
    );
    const hits = { answers: answerHits, webhooks: hookHits, logs: logHits, tables: dumpHits, store: storeHits, artifacts: artifactHits };
    const found = Object.entries(hits).filter(([, h]) => h.length > 0);
    expect(found, `the canary was found: ${JSON.stringify(Object.fromEntries(found.map(([k, h]) => [k, h.slice(0, 10)])), null, 1)}`).toEqual([]);
  }, 600_000);
});
