// Run gateway and queue dispatch benchmark (issue 16), on PGlite and (when TEST_DATABASE_URL or
// DATABASE_URL is set) on Postgres, side by side in one run:
//
// 1. Sync `POST /v1/run/greet` through the hosted service (bearer key check, rate limits, the
//    executions index row and its outcome update) against `POST /flows/greet/runs` of the engine
//    launcher (createLauncher) on the same engine and store, same pure 3-step flow, 16 connections
//    (autocannon), interleaved rounds. Target: the gateway's auth, limits and index cost under 15%
//    of throughput (gateway/launcher runs/s >= 0.85).
// 2. Queue dispatch: `SVC_RUN_DISPATCH=queue`, one request at a time, the time from the enqueue (the
//    execution row's `created_at`, just before the pg-boss send) to the run's `run_started` entry
//    written by the worker, p50/p99. On Postgres the worker is another process; on PGlite it is the
//    same process (one embedded database). Anchor: graphile-worker publishes 4.16 ms average from add
//    to start; target p50 under 20 ms on Postgres.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { GREET_FLOW, median, percentile, publishSpec, writeSection } from './results.mjs';

const CONNECTIONS = 16;
const WARMUP_S = 1;
const DURATION_S = 3;
const ROUNDS = 4;
const QUEUE_WARMUP = 20;
const QUEUE_SAMPLES = 200;
const TARGET_RATIO = 0.85;
const TARGET_QUEUE_P50_MS = 20;
const SECRET = 'g'.repeat(40);
const SECRETS_KEY = Buffer.alloc(32, 3).toString('base64');
const BODY = JSON.stringify({ inputs: { who: 'Ada', times: 2 } });
const LAUNCHER_BODY = JSON.stringify({ who: 'Ada', times: 2 });

const databaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;

/** Child: the hosted service and the launcher over one engine and store; role api, worker or all. */
async function child([store, role, schema, dispatch]) {
  const { createHostedService, createEngine, createLauncher, createToolRegistry, builtinTools, compile } = await import('../dist/index.js');
  const { createSqlStorage, createSqlServiceStorage } = await import('../dist/adapters/storage-sql.js');
  const { createPgBossQueue } = await import('../dist/adapters/queue-pgboss.js');
  const { serveNodeHttp } = await import('../dist/adapters/node-http.js');
  const engineStorage = store === 'postgres' ? createSqlStorage({ databaseUrl, schema, poolSize: 16 }) : createSqlStorage({ pglite: {} });
  const tools = createToolRegistry(builtinTools());
  const engine = createEngine({ storage: engineStorage, tools });
  const storage = createSqlServiceStorage(engineStorage);
  await storage.init();
  const queue = dispatch === 'queue' || role === 'worker' ? createPgBossQueue({ storage: engineStorage }) : undefined;
  const service = createHostedService({
    storage,
    engine,
    tools,
    ...(queue ? { queue } : {}),
    settings: {
      sessionSecrets: [SECRET],
      secretsKeys: [Buffer.from(SECRETS_KEY, 'base64')],
      runDispatch: dispatch,
      scheduler: false,
      authIpLimitPerMinute: 1_000_000,
      ipLimitPerMinute: 100_000_000,
      orgLimitPerMinute: 100_000_000,
    },
  });
  if (queue && role !== 'api') await service.startWorker({ concurrency: 4 });
  const r = compile(GREET_FLOW, { file: 'greet.yaml', tools });
  if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
  const launcher = createLauncher({ engine, flows: [{ name: 'greet', spec: r.spec }] });
  const server = await serveNodeHttp({
    fetch: async (req, env) => {
      const path = new URL(req.url).pathname;
      if (path === '/bench/publish') {
        const { org_id, user_id } = await req.json();
        const { digest } = await publishSpec({ engine, storage }, { orgId: org_id, userId: user_id, name: 'greet', spec: r.spec });
        return Response.json({ digest });
      }
      if (path.startsWith('/flows') || path.startsWith('/runs')) return launcher.fetch(req, env);
      return service.fetch(req, env);
    },
  });
  process.stdout.write(`${server.url}\n`);
  process.on('SIGTERM', async () => {
    await server.close();
    await service.dispose();
    await queue?.stop();
    await engineStorage.dispose();
    process.exit(0);
  });
}

function startChild(args) {
  const c = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return waitForLine(c, /http:\/\/\S+/, { what: `child ${args.join(' ')}` }).then(({ match }) => ({ child: c, url: match[0] }));
}

async function stopChild(c) {
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await Promise.race([gone, new Promise((r) => setTimeout(r, 40_000))]);
  if (c.exitCode === null) c.kill('SIGKILL');
}

/** Sign up, publish greet, mint a live key: the session cookie and the key. */
async function setup(url) {
  const res = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-${randomBytes(4).toString('hex')}@example.test`, password: 'a long bench passphrase', org_name: 'Bench' }),
  });
  const signup = await res.json();
  if (res.status !== 201) throw new Error(`signup: ${res.status} ${JSON.stringify(signup)}`);
  const cookie = /svc_session=([^;]*)/.exec(res.headers.getSetCookie().join(';'))[1];
  const headers = { cookie: `svc_session=${cookie}`, 'content-type': 'application/json' };
  await (await fetch(`${url}/bench/publish`, { method: 'POST', headers, body: JSON.stringify({ org_id: signup.org.id, user_id: signup.user.id }) })).json();
  const key = (await (await fetch(`${url}/api/keys`, { method: 'POST', headers, body: JSON.stringify({ mode: 'live' }) })).json()).secret;
  return { cookie, key };
}

function load(url, path, body, headers, duration) {
  return autocannon({
    url: `${url}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: CONNECTIONS,
    duration,
  });
}

async function gatewayVsLauncher(store, schema) {
  const { child: c, url } = await startChild([store, 'all', schema, 'sync']);
  try {
    const { key } = await setup(url);
    const auth = { authorization: `Bearer ${key}` };
    const probe = await (await fetch(`${url}/v1/run/greet`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: BODY })).json();
    if (probe.status !== 'succeeded') throw new Error(`gateway probe: ${JSON.stringify(probe)}`);
    const side = async (name) => {
      const [path, body, headers] = name === 'gateway' ? ['/v1/run/greet', BODY, auth] : ['/flows/greet/runs', LAUNCHER_BODY, {}];
      await load(url, path, body, headers, WARMUP_S);
      const r = await load(url, path, body, headers, DURATION_S);
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${store} ${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
    };
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? ['launcher', 'gateway'] : ['gateway', 'launcher'];
      const round = {};
      for (const name of order) round[name] = await side(name);
      rounds.push(round);
      process.stderr.write(`[bench] gateway ${store} round ${i + 1}: launcher ${round.launcher.rps.toFixed(0)}/s, gateway ${round.gateway.rps.toFixed(0)}/s\n`);
    }
    return rounds;
  } finally {
    await stopChild(c);
  }
}

async function queueLatency(store, schema) {
  // Postgres: an API process and a worker process; PGlite: one process doing both.
  const api = await startChild([store, store === 'postgres' ? 'api' : 'all', schema, 'queue']);
  const worker = store === 'postgres' ? await startChild([store, 'worker', schema, 'queue']) : undefined;
  try {
    const { cookie, key } = await setup(api.url);
    const samples = [];
    for (let i = 0; i < QUEUE_WARMUP + QUEUE_SAMPLES; i++) {
      const res = await fetch(`${api.url}/v1/run/greet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: BODY,
      });
      const ack = await res.json();
      if (ack.status !== 'queued') throw new Error(`queue ack: ${JSON.stringify(ack)}`);
      // Wait for the end through the run stream (event-driven), then read the two times.
      const stream = await fetch(`${api.url}/api/runs/${ack.run_id}/stream`, { headers: { cookie: `svc_session=${cookie}` } });
      await stream.text();
      const one = await (await fetch(`${api.url}/api/executions/${ack.run_id}`, { headers: { cookie: `svc_session=${cookie}` } })).json();
      const started = one.journal.find((e) => e.event === 'run_started');
      if (i >= QUEUE_WARMUP) samples.push(Date.parse(started.at) - Date.parse(one.execution.created_at));
    }
    return { p50: percentile(samples, 50), p99: percentile(samples, 99), mean: samples.reduce((a, b) => a + b, 0) / samples.length, n: samples.length };
  } finally {
    if (worker) await stopChild(worker.child);
    await stopChild(api.child);
  }
}

async function main() {
  const stores = ['pglite', ...(databaseUrl ? ['postgres'] : [])];
  const results = {};
  const schemas = [];
  try {
    for (const store of stores) {
      const schema = `bench_gw_${process.pid}_${randomBytes(3).toString('hex')}`;
      schemas.push(schema);
      results[store] = { rounds: await gatewayVsLauncher(store, schema) };
      const qschema = `bench_gwq_${process.pid}_${randomBytes(3).toString('hex')}`;
      schemas.push(qschema);
      results[store].queue = await queueLatency(store, qschema);
      process.stderr.write(`[bench] queue ${store}: p50 ${results[store].queue.p50} ms, p99 ${results[store].queue.p99} ms\n`);
    }
  } finally {
    if (databaseUrl) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      for (const s of schemas) for (const suffix of ['', '_pgboss']) await client.query(`drop schema if exists "${s}${suffix}" cascade`);
      await client.end();
    }
  }
  const ok = (b) => (b ? 'met' : 'NOT met');
  const lines = [];
  for (const store of stores) {
    const { rounds, queue } = results[store];
    const ratio = median(rounds.map((r) => r.gateway.rps / r.launcher.rps));
    const med = (side, k) => median(rounds.map((r) => r[side][k]));
    lines.push(
      `| ${store === 'pglite' ? 'PGlite (in memory)' : 'Postgres (127.0.0.1)'} | ${med('launcher', 'rps').toFixed(0)} | ${med('launcher', 'p50')} / ${med('launcher', 'p99')} | ${med('gateway', 'rps').toFixed(0)} | ${med('gateway', 'p50')} / ${med('gateway', 'p99')} | **${ratio.toFixed(2)}** (${ok(ratio >= TARGET_RATIO)}) | ${queue.p50} / ${queue.p99} (mean ${queue.mean.toFixed(1)})${store === 'postgres' ? ` (${ok(queue.p50 < TARGET_QUEUE_P50_MS)})` : ''} |`,
    );
  }
  const body = `
A pure 3-step flow (core/template, core/transform, core/assert; 8 journal entries per run), one child
process serving both the hosted service and the engine launcher (createLauncher) over **the same
engine and store**. Sync: autocannon, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s
after ${WARMUP_S} s of warm-up each, medians of the rounds; the gateway checks the bearer key, the IP and
org rate limits, writes the executions index row and its outcome. Queue: \`SVC_RUN_DISPATCH=queue\`
(pg-boss, LISTEN/NOTIFY), one request at a time (${QUEUE_SAMPLES} after ${QUEUE_WARMUP} warm-up), the time from the
execution row's \`created_at\` (just before the enqueue) to the worker's \`run_started\` entry; on Postgres
the worker is another process. \`bench/gateway.bench.mjs\`.

| Store | Launcher runs/s | Launcher p50 / p99 ms | Gateway runs/s | Gateway p50 / p99 ms | Gateway / launcher (target >= ${TARGET_RATIO}) | Queue enqueue -> run_started p50 / p99 ms (target p50 < ${TARGET_QUEUE_P50_MS} on Postgres) |
|---|---|---|---|---|---|---|
${lines.join('\n')}
${databaseUrl ? '' : '\nPostgres: not measured (no TEST_DATABASE_URL or DATABASE_URL).\n'}
Anchor: graphile-worker publishes 4.16 ms average from add to job start.
`;
  writeSection('gateway', 'Run gateway and queue dispatch', body);
  process.stderr.write(body);
}

if (process.argv[2] === '--child') await child(process.argv.slice(3));
else await main();
