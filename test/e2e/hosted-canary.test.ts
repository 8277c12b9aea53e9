import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBrowser } from '../../adapters/executor-playwright/resolve-browser.js';
import { assembleHostedService, type HostedAssembly } from '../../adapters/hosted/index.js';
import type { SqlStorageOptions } from '../../adapters/storage-sql/index.js';
import type { Digest } from '../../src/canonical.js';
import { compile } from '../../src/flow/compile.js';
import type { Logger } from '../../src/ports/clock.js';
import type { HostedSettings } from '../../src/service/settings.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { byteFormsIn, canaryByteForms, canaryForms, copyEscaped, formsIn, makeCanary, type CanaryForm } from '../helpers/canary-forms.js';
import { dropSchema, pgQuery, TEST_DATABASE_URL, uniqueSchemaName } from '../helpers/postgres.js';
import { testSeed } from '../helpers/seeded.js';
import { waitUntil } from '../helpers/wait.js';
import { imageRegions } from '../helpers/image-pixels.js';

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

// ---------------------------------------------------------------------------------------------
// What the test saw

const seen: { where: string; text: string }[] = [];
const pendingReads: Promise<unknown>[] = [];
const logs: string[] = [];

/** fetch that keeps a copy of every answer: status, headers and the whole body (streams too). */
const recFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const where = `${init?.method ?? 'GET'} ${String(input instanceof Request ? input.url : input)} -> ${res.status}`;
  const copy = res.clone();
  pendingReads.push(
    copy
      .text()
      .then((text) => seen.push({ where, text: `${JSON.stringify([...res.headers])}\n${text}` }))
      .catch((err: unknown) => seen.push({ where: `${where} (read failed)`, text: String(err) })),
  );
  return res;
};

const capture = (level: string) => (message: string, data?: unknown) => {
  let extra = '';
  if (data !== undefined) {
    try {
      extra = ` ${JSON.stringify(data)}`;
    } catch {
      extra = ` ${String(data)}`;
    }
  }
  logs.push(`${level}: ${message}${extra}`);
};
const logger: Logger = { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') };

/** Tee stdout, stderr and console into `logs` for the test's duration. */
function teeOutput(): () => void {
  const restore: (() => void)[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      logs.push(`${stream === process.stdout ? 'stdout' : 'stderr'}: ${typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')}`);
      return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => (stream.write = original as typeof stream.write));
  }
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[level];
    console[level] = (...args: unknown[]) => {
      logs.push(`console.${level}: ${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`);
      original.apply(console, args);
    };
    restore.push(() => (console[level] = original));
  }
  return () => restore.forEach((r) => r());
}

// ---------------------------------------------------------------------------------------------
// Loopback: the site the flows talk to, the webhook receiver

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

function formPage(withButton: boolean): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Canary form</title><style>
body{margin:0;font:16px sans-serif;background:#fff}
label,input,button,#status{position:absolute}
label{left:20px} input{left:140px;width:300px;height:30px;border:1px solid #888;background:#fff;color:#000;font-size:16px;padding:0 4px}
#l1,#pw{top:20px} #l2,#name{top:80px} button{left:140px;top:140px} #status{left:20px;top:190px;margin:0}
#echo{position:absolute;left:20px;top:240px;display:inline-block;width:2px;height:2px}
</style></head><body>
<label id="l1" for="pw">Password</label><input id="pw" type="password" autocomplete="off">
<label id="l2" for="name">Name</label><input id="name" type="text" autocomplete="off">
${withButton ? '<button id="save" type="button">Save</button>' : ''}
<p id="status">waiting</p><span id="echo" data-typed=""></span>
<script>
for (const id of ['pw', 'name']) document.getElementById(id).addEventListener('input', (e) => fetch('/typed?field=' + id, { method: 'POST', body: e.target.value }));
const save = document.getElementById('save');
if (save) save.addEventListener('click', () => {
  document.getElementById('status').textContent = 'saved';
  document.getElementById('echo').dataset.typed = document.getElementById('name').value;
});
</script></body></html>`;
}

interface Site {
  url: string;
  /** What the site received (the secret's legitimate destination: never searched for leaks). */
  received: { path: string; value: string }[];
  server: Server;
}

async function startSite(): Promise<Site> {
  const received: Site['received'] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = await readBody(req);
      if (req.method === 'GET' && (url.pathname === '/form' || url.pathname === '/form-missing')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(formPage(url.pathname === '/form'));
        return;
      }
      if (req.method === 'POST' && url.pathname === '/typed') {
        received.push({ path: `/typed ${url.searchParams.get('field')}`, value: body });
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'POST' && (url.pathname === '/api/ok' || url.pathname === '/api/fail')) {
        const k = url.searchParams.get('k') ?? '';
        let token = '';
        try {
          token = (JSON.parse(body) as { token?: string }).token ?? '';
        } catch {
          // not JSON
        }
        received.push({ path: `${url.pathname} query`, value: k }, { path: `${url.pathname} body`, value: token });
        // A careless API: it echoes what it got, plain, percent-encoded and in base64.
        const echo = { echo: token, echo_uri: encodeURIComponent(token), echo_b64: Buffer.from(token).toString('base64'), note: 'echoed' };
        res
          .writeHead(url.pathname === '/api/ok' ? 200 : 500, { 'content-type': 'application/json', 'x-echo-b64': Buffer.from(k).toString('base64') })
          .end(JSON.stringify(echo));
        return;
      }
      res.writeHead(404).end();
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

interface Hook {
  path: string;
  headers: Record<string, unknown>;
  body: string;
}
const hooks: Hook[] = [];

async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      hooks.push({ path: req.url ?? '/', headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

// ---------------------------------------------------------------------------------------------
// The stack: the database (Postgres when TEST_DATABASE_URL is set, else PGlite in a folder) and the
// shipped assembly on it (engine under the hosted tool policy, egress guard, Playwright executor with
// screenshots, pg-boss queue, scheduler), as `npm start` builds it. The assembly is replaced between
// the sync and the queue phase: a second one on the same database, as a redeploy with
// SVC_RUN_DISPATCH=queue would run.

interface Stack {
  database: SqlStorageOptions;
  pglite?: PGlite;
  dataDir?: string;
  schema?: string;
}

let stack: Stack;
/** The assembly serving the current phase. */
let api: HostedAssembly | undefined;
let site: Site;
let receiver: { url: string; server: Server };
let restoreOutput: () => void;
/** The API's URL in the current phase. */
const apiUrl = (): string => api!.url;

async function startStack(): Promise<Stack> {
  if (TEST_DATABASE_URL) {
    const schema = uniqueSchemaName('svc_canary');
    return { database: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 }, schema };
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'flowctl-canary-'));
  // An instance the test opens (and the assemblies leave open): the files are searched after they close.
  const pglite = await PGlite.create(join(dataDir, 'db'));
  return { database: { pglite }, pglite, dataDir };
}

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
  // A schedule per automation, firing every second: deleted once it has fired.
  const schedules: string[] = [];
  for (const name of names)
    schedules.push((await owner.ok('POST', `/api/automations/${automations[name]!.id}/schedules`, { cron: '* * * * * *' })).schedule.id);
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
      const events = hooks.map((h) => JSON.parse(h.body) as { type: string; data: { run_id?: string } });
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
  const digest = await api!.engine.putSpec(compiled.spec);
  const now = new Date().toISOString();
  const id = `auto-${name}`;
  await api!.storage.automations.create({
    id,
    org_id: orgId,
    name,
    task: CONTROL,
    site: site.url,
    mcp_enabled: true,
    created_at: now,
    status: 'published',
    live_digest: digest,
    needs_attention: false,
    example: false,
    params: [],
  });
  await api!.storage.versions.add({ automation_id: id, org_id: orgId, flow_digest: digest, created_at: now, created_by: userId });
  return id;
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
  await stack?.pglite?.close().catch(() => undefined);
  if (stack?.dataDir) await rm(stack.dataDir, { recursive: true, force: true });
  if (stack?.schema && TEST_DATABASE_URL) {
    await dropSchema(TEST_DATABASE_URL, stack.schema);
    await dropSchema(TEST_DATABASE_URL, `${stack.schema}_pgboss`);
  }
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

/** Rows of every table of the service's database, one JSON text per row (no compression, no COPY escapes). */
async function logicalDump(): Promise<string> {
  const query = async (sql: string): Promise<Record<string, unknown>[]> =>
    stack.pglite ? ((await stack.pglite.query(sql)).rows as Record<string, unknown>[]) : await pgQuery(TEST_DATABASE_URL!, sql);
  const schemas = stack.schema ? [stack.schema, `${stack.schema}_pgboss`] : undefined;
  const tables = await query(
    `select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE' and ${
      schemas ? `table_schema in (${schemas.map((s) => `'${s}'`).join(', ')})` : `table_schema not in ('pg_catalog', 'information_schema')`
    } order by 1, 2`,
  );
  const out: string[] = [];
  for (const t of tables) {
    const name = `"${String(t.table_schema)}"."${String(t.table_name)}"`;
    for (const row of await query(`select row_to_json(t)::text as j from ${name} t`)) out.push(`${name} ${String(row.j)}`);
  }
  return out.join('\n');
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true, recursive: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Decode each screenshot in Chromium and read the pixels of both fields: the mask's black, or (before the fill) no text. */
async function checkScreenshots(shots: { png: Uint8Array; afterNameFill: boolean; afterPasswordFill: boolean }[]): Promise<void> {
  const { executablePath } = await resolveBrowser();
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`${site.url}/form`);
    const box = async (sel: string) => (await page.locator(sel).boundingBox())!;
    const fields = { pw: await box('#pw'), name: await box('#name') };
    for (const [i, shot] of shots.entries()) {
      // The fields' insides (a pixel clear of each edge).
      const inner = (r: { x: number; y: number; width: number; height: number }) => ({
        x: Math.ceil(r.x) + 1,
        y: Math.ceil(r.y) + 1,
        width: Math.floor(r.width) - 2,
        height: Math.floor(r.height) - 2,
      });
      const decoded = await imageRegions(page, `data:image/png;base64,${Buffer.from(shot.png).toString('base64')}`, [inner(fields.pw), inner(fields.name)]);
      const count = (d: Uint8Array) => {
        let black = 0;
        let dark = 0;
        for (let p = 0; p < d.length; p += 4) {
          if (d[p] === 0 && d[p + 1] === 0 && d[p + 2] === 0) black++;
          else if (d[p]! < 128) dark++;
        }
        return { pixels: d.length / 4, black, dark };
      };
      const stats = { width: decoded.width, height: decoded.height, pw: count(decoded.regions[0]!), name: count(decoded.regions[1]!) };
      expect([i, stats.width, stats.height]).toEqual([i, 1280, 720]);
      // A masked field is all black; an empty one has no dark pixel (no text, no dots).
      if (shot.afterPasswordFill) expect([i, 'pw', stats.pw.black]).toEqual([i, 'pw', stats.pw.pixels]);
      else expect([i, 'pw', stats.pw.dark]).toEqual([i, 'pw', 0]);
      if (shot.afterNameFill) expect([i, 'name', stats.name.black]).toEqual([i, 'name', stats.name.pixels]);
      else expect([i, 'name', stats.name.dark]).toEqual([i, 'name', 0]);
    }
  } finally {
    await browser.close();
  }
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
    const shots: { png: Uint8Array; afterNameFill: boolean; afterPasswordFill: boolean }[] = [];
    for (const { flow, journal } of journals) {
      if (!flow.startsWith('canary-browser')) continue;
      const stepsDone = journal.filter((x) => x.event === 'step_succeeded');
      for (const [i, entry] of stepsDone.entries()) {
        for (const digest of entry.artifacts ?? []) {
          const stored = await api!.engineStorage.artifacts!.get(digest as Digest);
          expect(stored?.mediaType).toBe('image/png');
          // Steps in order: navigate, fill the password, fill the name, click, extracts.
          shots.push({ png: stored!.bytes, afterPasswordFill: i >= 1, afterNameFill: i >= 2 });
        }
      }
    }
    expect(shots.length).toBeGreaterThanOrEqual(8);
    const artifactHits = shots.flatMap((s, i) => byteFormsIn(s.png, BYTE_FORMS).map((f) => `screenshot ${i}: ${f}`));
    await checkScreenshots(shots);

    // Stop everything that writes, then read the database.
    await api!.close();
    const dump = await logicalDump();
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
    const hookHits = hooks.flatMap((h) => formsIn(`${JSON.stringify(h.headers)}\n${h.body}`, FORMS).map((f) => `webhook ${h.path}: ${f}`));
    const logHits = logs.flatMap((l) => formsIn(l, FORMS).map((f) => `log "${l.slice(0, 120)}": ${f}`));
    process.stdout.write(
      `[canary] searched ${seen.length} answers (${streams.length} run streams), ${hooks.length} webhook deliveries, ${logs.length} log lines, ${dump.length} characters of table rows, ${storeWhat}, ${shots.length} screenshots; ${all.length} runs\n`,
    );
    const hits = { answers: answerHits, webhooks: hookHits, logs: logHits, tables: dumpHits, store: storeHits, artifacts: artifactHits };
    const found = Object.entries(hits).filter(([, h]) => h.length > 0);
    expect(found, `the canary was found: ${JSON.stringify(Object.fromEntries(found.map(([k, h]) => [k, h.slice(0, 10)])), null, 1)}`).toEqual([]);
  }, 600_000);
});
