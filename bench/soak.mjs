// Soak of the hosted service (issue 27, point 7). Not part of `npm run bench` (its name does not end in
// .bench.mjs) and not run in CI: `node bench/soak.mjs [--minutes 30] [--no-write]` after a build.
//
// Four processes of examples/hosted-service/main.mjs on one Postgres (DATABASE_URL, default the local
// test database, a schema of its own dropped at the end): API A (SVC_RUN_DISPATCH=sync), API B
// (SVC_RUN_DISPATCH=queue) and two workers (SVC_ROLE=worker). For the whole duration, steady mixed load
// to 127.0.0.1 only: gateway runs on A (sync) and on B (queued), MCP tools/call on both, SSE readers of
// queued runs' streams (GET /api/runs/{id}/stream, on the other API than the one that queued them),
// and studio live capture sessions (WebSocket, a page served here) on both. The runs are of a pure
// published automation (one core/template step); the studio sessions use the studio's Chromium.
//
// Every 10 s it samples each process's RSS, open file descriptors (/proc/<pid>/fd) and Postgres
// connections (its sockets to the database port, from /proc/<pid>/fd and /proc/net/tcp), and the
// database's connections on this schema's application (pg_stat_activity). At the end (after a drain)
// it counts runs not terminal long after they were made. Exits 1 on a violation: any 5xx, any stuck
// run, or RSS / fds / connections not flat (the last quarter's median against the second quarter's,
// after warm-up; the live heap after a full GC, from bench/soak-probe.mjs, likewise; connections: the
// quarters' medians, and at most DB_CONN_BOUND per process at any sample). Figures go to bench/RESULTS.md (section `soak`) unless --no-write.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import WebSocket from 'ws';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { median, percentile, writeSection } from './results.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const MINUTES = Number(opt('--minutes', process.env.SOAK_MINUTES ?? '30'));
if (!(MINUTES > 0)) throw new Error('--minutes must be a positive number');
const DB_URL = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SAMPLE_MS = 10_000;
const STUCK_AFTER_MS = 120_000;
/** Per process: the storage pool (10), the queue's pool (4) and its LISTEN connections (2). */
const DB_CONN_BOUND = 16;
const SCHEMA = `soak_${randomBytes(4).toString('hex')}`;
const SECRET = randomBytes(32).toString('base64url');
const KEY = randomBytes(32).toString('base64');
const loadAtStart = os.loadavg();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (line) => process.stderr.write(`[soak] ${line}\n`);

// --- The studio's page, on loopback ---
const site = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<!doctype html><html><body><h1>Soak</h1><input aria-label="Name"><button>Go</button></body></html>');
});
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const siteUrl = `http://127.0.0.1:${site.address().port}/`;

// --- The four processes ---
const procs = [];
async function startProcess(name, extra) {
  const dataDir = mkdtempSync(join(os.tmpdir(), `flowctl-soak-${name}-`));
  const probeFile = join(dataDir, 'heap.json');
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', pathToFileURL(join(ROOT, 'bench/soak-probe.mjs')).href, join(ROOT, 'examples/hosted-service/main.mjs')],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        NODE_ENV: 'development',
        DATABASE_URL: DB_URL,
        FLOWCTL_DB_SCHEMA: SCHEMA,
        SVC_SESSION_SECRETS: SECRET,
        SVC_SECRETS_KEY: KEY,
        SVC_DATA_DIR: dataDir,
        SVC_SCHEDULER: '0',
        SVC_IP_LIMIT: '1000000',
        SVC_ORG_LIMIT: '1000000',
        SVC_AUTH_IP_LIMIT: '100000',
        SVC_RUN_SCREENSHOTS: 'off',
        SVC_EGRESS_ALLOW: `127.0.0.1:${site.address().port}`,
        SOAK_PROBE_FILE: probeFile,
        PORT: '0',
        HOST: '127.0.0.1',
        ...extra,
      },
    },
  );
  const p = { name, child, dataDir, probeFile, url: undefined, samples: [] };
  procs.push(p);
  child.once('close', (code, signal) => {
    p.exited = `${code ?? signal}`;
  });
  const { match } = await waitForLine(child, /flowctl hosted (?:service|worker) on (http:\/\/127\.0\.0\.1:\d+)/, { stream: 'stderr', what: name });
  p.url = match[1];
  return p;
}

const apiA = await startProcess('api-sync', { SVC_ROLE: 'api', SVC_RUN_DISPATCH: 'sync' });
const apiB = await startProcess('api-queue', { SVC_ROLE: 'api', SVC_RUN_DISPATCH: 'queue' });
await startProcess('worker-1', { SVC_ROLE: 'worker', SVC_RUN_DISPATCH: 'queue' });
await startProcess('worker-2', { SVC_ROLE: 'worker', SVC_RUN_DISPATCH: 'queue' });
say(`4 processes up on schema ${SCHEMA}: ${procs.map((p) => `${p.name} pid ${p.child.pid}`).join(', ')}`);

// --- Counters ---
const counts = { requests: 0, by: {}, status5xx: 0, failures: 0, errors: [] };
const latency = {};
function record(kind, status, ms) {
  counts.requests++;
  const b = (counts.by[kind] ??= { n: 0, ok: 0, other: {} });
  b.n++;
  if (status >= 200 && status < 300) b.ok++;
  else b.other[status] = (b.other[status] ?? 0) + 1;
  if (status >= 500) {
    counts.status5xx++;
    if (counts.errors.length < 20) counts.errors.push(`${kind}: ${status}`);
  }
  (latency[kind] ??= []).push(ms);
}
function failure(kind, err) {
  counts.failures++;
  if (counts.errors.length < 20) counts.errors.push(`${kind}: ${err?.message ?? err}`);
}

// --- Setup: an owner, a live key, a pure published automation, a draft for the studio ---
let cookie = '';
async function call(base, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', origin: base, ...(cookie ? { cookie } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const set = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
  if (set) cookie = set.split(';')[0];
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}
const signup = await call(apiA.url, 'POST', '/api/auth/signup', { email: 'soak@example.test', password: 'correct horse battery', org_name: 'Soak' });
const key = (await call(apiA.url, 'POST', '/api/keys', { mode: 'live' })).secret;
const draft = (await call(apiA.url, 'POST', '/api/automations', { name: 'studio-soak', site: siteUrl, task: 'soak' })).automation;
{
  // The pure automation, stored as publish leaves it (the golden hello FlowSpec: one template step).
  const { createEngine, createToolRegistry, builtinTools } = await import('../dist/index.js');
  const { createSqlStorage, createSqlServiceStorage } = await import('../dist/adapters/storage-sql.js');
  const engineStorage = createSqlStorage({ databaseUrl: DB_URL, schema: SCHEMA, poolSize: 2 });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  const engine = createEngine({ storage: engineStorage, tools: createToolRegistry(builtinTools()) });
  const spec = JSON.parse(readFileSync(join(ROOT, 'test/golden/hello.flowspec.json'), 'utf8'));
  const digest = await engine.putSpec(spec);
  const now = new Date().toISOString();
  const id = randomUUID();
  await storage.automations.create({
    id,
    org_id: signup.org.id,
    name: 'greet',
    task: 'Greet someone',
    site: 'https://example.test',
    mcp_enabled: true,
    created_at: now,
    status: 'published',
    live_digest: digest,
    needs_attention: false,
    example: false,
    params: [],
  });
  await storage.versions.add({ automation_id: id, org_id: signup.org.id, flow_digest: digest, created_at: now, created_by: signup.user.id });
  await engine.dispose();
  await engineStorage.dispose();
}

// --- The load ---
const deadline = Date.now() + MINUTES * 60_000;
const queuedRuns = [];
const bearer = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
async function timed(kind, fn) {
  const t0 = performance.now();
  try {
    const res = await fn();
    record(kind, res.status, performance.now() - t0);
    return res;
  } catch (err) {
    failure(kind, err);
    return undefined;
  }
}
async function loop(pauseMs, body) {
  let i = 0;
  while (Date.now() < deadline) {
    await body(i++);
    await sleep(pauseMs);
  }
}

const gatewaySync = (lane) =>
  loop(250, async (i) => {
    const res = await timed('gateway sync (A)', () =>
      fetch(`${apiA.url}/v1/run/greet`, { method: 'POST', headers: bearer, body: JSON.stringify({ inputs: { who: `s${lane}-${i}` } }) }),
    );
    await res?.text();
  });
const gatewayQueue = (lane) =>
  loop(250, async (i) => {
    const res = await timed('gateway queue (B)', () =>
      fetch(`${apiB.url}/v1/run/greet`, { method: 'POST', headers: bearer, body: JSON.stringify({ inputs: { who: `q${lane}-${i}` } }) }),
    );
    if (res?.status === 200) {
      const body = await res.json();
      queuedRuns.push(body.run_id);
    } else await res?.text();
  });
const mcp = () =>
  loop(300, async (i) => {
    const base = i % 2 ? apiA.url : apiB.url;
    const res = await timed(`mcp tools/call (${i % 2 ? 'A' : 'B'})`, () =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { ...bearer, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'greet', arguments: { who: `m${i}` } } }),
      }),
    );
    await res?.text();
  });
const sseReader = (lane) =>
  loop(500, async () => {
    const runId = queuedRuns[queuedRuns.length - 1 - lane];
    if (!runId) return;
    // The run was queued through B: follow it on A (a worker executes it, the stream crosses processes).
    const controller = new AbortController();
    const cap = setTimeout(() => controller.abort(), 60_000);
    const t0 = performance.now();
    try {
      const res = await fetch(`${apiA.url}/api/runs/${runId}/stream`, { headers: { cookie }, signal: controller.signal });
      const text = await res.text();
      record('SSE run stream (A)', res.status, performance.now() - t0);
      if (res.status === 200 && !text.includes('event: run_finished')) failure('SSE run stream (A)', new Error('stream ended without run_finished'));
    } catch (err) {
      failure('SSE run stream (A)', err);
    } finally {
      clearTimeout(cap);
    }
  });
const studio = () =>
  loop(15_000, async (i) => {
    const base = i % 2 ? apiA.url : apiB.url;
    const t0 = performance.now();
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/authoring/${draft.id}/live?width=800&height=600`, { headers: { origin: base, cookie } });
    const outcome = await new Promise((r) => {
      const cap = setTimeout(() => r('timeout'), 60_000);
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.type === 'frame') clearTimeout(cap), r('frame');
        if (m.type === 'error') clearTimeout(cap), r(`error ${m.error ?? ''}`);
      });
      ws.on('unexpected-response', (_req, res) => (clearTimeout(cap), r(`http ${res.statusCode}`)));
      ws.on('error', (err) => (clearTimeout(cap), r(`socket ${err.message}`)));
      ws.on('close', () => (clearTimeout(cap), r('closed')));
    });
    const kind = `studio session (${i % 2 ? 'A' : 'B'})`;
    if (outcome === 'frame') record(kind, 200, performance.now() - t0);
    else if (outcome.startsWith('http ')) record(kind, Number(outcome.slice(5)), performance.now() - t0);
    else failure(kind, new Error(outcome));
    ws.close();
    await new Promise((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', r)));
  });

// --- Sampling ---
function socketInodes(pid) {
  const out = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}
function dbSocketsByInode() {
  const port = Number(new URL(DB_URL).port || 5432)
    .toString(16)
    .toUpperCase()
    .padStart(4, '0');
  const inodes = new Set();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      // remote address `hex:PORT`, state 01 = ESTABLISHED
      if (cols[2].endsWith(`:${port}`) && cols[3] === '01') inodes.add(cols[9]);
    }
  }
  return inodes;
}
const timeline = [];
const db = new pg.Client({ connectionString: DB_URL, application_name: 'flowctl-soak-probe' });
await db.connect();
async function sample() {
  const at = Date.now();
  const dbInodes = dbSocketsByInode();
  const row = { at, procs: {} };
  for (const p of procs) {
    const pid = p.child.pid;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const sockets = socketInodes(pid);
      const fds = readdirSync(`/proc/${pid}/fd`).length;
      let heapMb;
      try {
        heapMb = JSON.parse(readFileSync(p.probeFile, 'utf8')).heapUsedMb;
      } catch {
        // Not written yet (the first probe comes 10 s after start).
      }
      row.procs[p.name] = { rssMb: rssKb / 1024, heapMb, fds, dbConns: [...sockets].filter((s) => dbInodes.has(s)).length };
    } catch {
      row.procs[p.name] = { gone: true };
    }
  }
  const total = await db.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
  row.dbTotal = total.rows[0].n;
  row.load = os.loadavg()[0];
  timeline.push(row);
}
const sampler = (async () => {
  while (Date.now() < deadline) {
    await sample().catch((err) => failure('sampler', err));
    await sleep(SAMPLE_MS);
  }
})();

say(`load for ${MINUTES} min: gateway sync x2 lanes, gateway queue x2, MCP x1, SSE readers x2, studio every 15 s`);
await Promise.all([gatewaySync(0), gatewaySync(1), gatewayQueue(0), gatewayQueue(1), mcp(), sseReader(0), sseReader(1), studio(), sampler]);
await sample();

// --- Drain, then stuck runs ---
say('load stopped; waiting for queued runs to drain (at most 2 min)');
const q = (text, values = []) => db.query(text.replaceAll('%s.', `"${SCHEMA}".`), values);
const drainUntil = Date.now() + STUCK_AFTER_MS;
let open = 0;
while (Date.now() < drainUntil) {
  open = (await q(`select count(*)::int as n from %s.runs where status in ('pending','running')`)).rows[0].n;
  if (open === 0) break;
  await sleep(2_000);
}
const stuckRuns = (await q(`select count(*)::int as n from %s.runs where status in ('pending','running') and started_at < now() - interval '120 seconds'`))
  .rows[0].n;
const stuckExecutions = (
  await q(`select count(*)::int as n from %s.svc_executions where status in ('queued','running') and created_at < now() - interval '120 seconds'`)
).rows[0].n;
const byStatus = Object.fromEntries((await q(`select status, count(*)::int as n from %s.runs group by status`)).rows.map((r) => [r.status, r.n]));
const exited = procs.filter((p) => p.exited).map((p) => `${p.name} (${p.exited})`);

// --- Stop ---
for (const p of procs) if (!p.exited) p.child.kill('SIGTERM');
await Promise.all(procs.map((p) => (p.exited ? undefined : Promise.race([new Promise((r) => p.child.once('close', r)), sleep(45_000)]))));
for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
await db.query(`drop schema if exists "${SCHEMA}" cascade`).catch(() => {});
await db.query(`drop schema if exists "${SCHEMA}_pgboss" cascade`).catch(() => {});
await db.end();
site.close();
for (const p of procs) rmSync(p.dataDir, { recursive: true, force: true });

// --- Flatness: the last quarter against the second (the first is warm-up) ---
const violations = [];
const quarter = (k) => timeline.slice(Math.floor((timeline.length * k) / 4), Math.floor((timeline.length * (k + 1)) / 4));
const rows = [];
for (const p of procs) {
  const series = (part, field) => part.map((r) => r.procs[p.name]?.[field]).filter((v) => typeof v === 'number');
  const at = (part) => ({
    rss: median(series(part, 'rssMb')),
    heap: median(series(part, 'heapMb')),
    fds: median(series(part, 'fds')),
    db: median(series(part, 'dbConns')),
  });
  const early = at(quarter(1));
  const late = at(quarter(3));
  const peak = {
    rss: Math.max(...series(timeline, 'rssMb')),
    heap: Math.max(...series(timeline, 'heapMb')),
    fds: Math.max(...series(timeline, 'fds')),
    db: Math.max(...series(timeline, 'dbConns')),
  };
  rows.push({ name: p.name, early, late, peak });
  if (late.rss > early.rss * 1.25 + 30) violations.push(`${p.name}: RSS grew from ${early.rss.toFixed(0)} to ${late.rss.toFixed(0)} MiB`);
  if (!(late.heap <= early.heap * 1.2 + 10)) violations.push(`${p.name}: the live heap after a full collection grew from ${early.heap} to ${late.heap} MiB`);
  if (late.fds > early.fds * 1.25 + 10) violations.push(`${p.name}: open fds grew from ${early.fds} to ${late.fds}`);
  if (late.db > early.db + 2) violations.push(`${p.name}: database connections grew from ${early.db} to ${late.db}`);
  // Pools cap what a process holds: storage 10 + queue 4 + LISTEN connections; more is a leak.
  if (peak.db > DB_CONN_BOUND) violations.push(`${p.name}: ${peak.db} database connections, above the bound of its pools (${DB_CONN_BOUND})`);
}
if (counts.status5xx > 0) violations.push(`${counts.status5xx} responses 5xx`);
if (stuckRuns > 0 || stuckExecutions > 0) violations.push(`${stuckRuns} runs and ${stuckExecutions} executions not terminal 2 min after the load`);
if (exited.length > 0) violations.push(`processes exited during the soak: ${exited.join(', ')}`);
if (timeline.length < 8) violations.push(`only ${timeline.length} samples: run longer (--minutes) for a flatness verdict`);

const kinds = Object.keys(counts.by).sort();
const table = [
  '| Traffic | requests | 2xx | other | p50 ms | p99 ms |',
  '|---|---|---|---|---|---|',
  ...kinds.map(
    (k) =>
      `| ${k} | ${counts.by[k].n} | ${counts.by[k].ok} | ${JSON.stringify(counts.by[k].other).replaceAll('"', '')} | ${median(latency[k]).toFixed(1)} | ${percentile(latency[k], 99).toFixed(1)} |`,
  ),
].join('\n');
const procTable = [
  '| Process | live heap MiB after a full GC, 2nd quarter → last (peak) | RSS MiB 2nd → last (peak) | open fds 2nd → last (peak) | DB connections 2nd → last (peak) |',
  '|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.early.heap.toFixed(1)} → ${r.late.heap.toFixed(1)} (${r.peak.heap.toFixed(1)}) | ${r.early.rss.toFixed(0)} → ${r.late.rss.toFixed(0)} (${r.peak.rss.toFixed(0)}) | ${r.early.fds} → ${r.late.fds} (${r.peak.fds}) | ${r.early.db} → ${r.late.db} (${r.peak.db}) |`,
  ),
].join('\n');
const dbTotals = timeline.map((r) => r.dbTotal);
const loads = timeline.map((r) => r.load);
const body = `${MINUTES} min of steady mixed load on Postgres (${new URL(DB_URL).host}), four processes of examples/hosted-service/main.mjs from dist: API A (sync dispatch), API B (queue dispatch), two workers. Load, all to 127.0.0.1: gateway runs of a pure automation on A (2 lanes) and queued on B (2 lanes), one pause of 250 ms between requests per lane; MCP \`tools/call\` alternating A and B (300 ms pause); two SSE readers following the latest queued runs on A; a studio live capture session (WebSocket until its first frame) every 15 s alternating A and B. Samples every ${SAMPLE_MS / 1000} s (${timeline.length} samples). 1-minute load average at the start: ${loadAtStart[0].toFixed(1)}; during the load: min ${Math.min(...loads).toFixed(1)}, median ${median(loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)} (the machine is shared with other work). Each process runs with \`--expose-gc\` and bench/soak-probe.mjs, which runs a full collection every 10 s and reports the live heap: the flatness of memory is judged on it (RSS also, with a looser bound), connections on the quarters' medians (a leaked connection stays open and moves the median; a burst moves only the peak, which is held under the pools' bound).

${table}

Network failures (no HTTP answer) and streams without an end: ${counts.failures}${counts.errors.length ? ` (first: ${counts.errors.slice(0, 5).join('; ')})` : ''}.

${procTable}

Connections of the whole database (pg_stat_activity, all clients, this machine's other work included): min ${Math.min(...dbTotals)}, median ${median(dbTotals)}, max ${Math.max(...dbTotals)}.

Runs by status at the end: ${JSON.stringify(byStatus)}; not terminal 2 min after the load: ${stuckRuns} runs, ${stuckExecutions} executions. 5xx: ${counts.status5xx}.

Verdict: ${violations.length === 0 ? '**no violation**' : `**${violations.length} violation(s)**: ${violations.join('; ')}`}.`;
process.stdout.write(`${body}\n`);
if (!flag('--no-write')) writeSection('soak', `Soak: ${MINUTES} min of mixed load, two APIs and two workers on Postgres`, body);
process.exit(violations.length === 0 ? 0 : 1);
