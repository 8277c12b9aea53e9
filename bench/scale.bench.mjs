// Scale-out benchmark (issue 19): the hosted service as deployed (examples/hosted-service/main.mjs,
// the same process `npm start` and `npm run worker` run) on one Postgres, in one run:
//
// 1. Sync gateway throughput and p99 of a pure flow with 1, 2 and 4 API processes (SVC_ROLE=api),
//    16 connections split evenly across them, interleaved rounds.
// 2. Queue throughput with 1 and 2 worker processes (SVC_ROLE=worker): a burst of queued runs
//    (SVC_RUN_DISPATCH=queue on the API process), from the first request to the last run terminal.
// 3. Idle RSS: an API process (no browser) after start-up and after the load; a worker after it ran
//    a browser flow (its warm Chromium counted: the process and every descendant).
//
// Needs Postgres: TEST_DATABASE_URL or DATABASE_URL. Everything runs in a fresh schema, dropped at the end.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { waitForLine } from '../test/helpers/child-line.mjs';
import { GREET_FLOW, median, processTree, publishSpec, writeSection } from './results.mjs';

const databaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
const MAIN = fileURLToPath(new URL('../examples/hosted-service/main.mjs', import.meta.url));
const CONNECTIONS = 16;
const WARMUP_S = 1;
const DURATION_S = Number(process.env.SCALE_DURATION || 4);
const ROUNDS = Number(process.env.SCALE_ROUNDS || 3);
const API_COUNTS = [1, 2, 4];
const QUEUE_BURST = Number(process.env.SCALE_BURST || 600);
const QUEUE_SENDERS = 16;
const WORKER_COUNTS = [1, 2];
const RSS_TARGET_MB = 120;
/** V8's young generation capped (default 32 MB per semi-space on Node 24): docs/deploy.md, "Memory". */
const SMALL_YOUNG = ['--max-semi-space-size=4'];
const BODY = JSON.stringify({ inputs: { who: 'Ada', times: 2 } });
const schema = `bench_scale_${process.pid}_${randomBytes(3).toString('hex')}`;
const secrets = { SVC_SESSION_SECRETS: randomBytes(32).toString('base64url'), SVC_SECRETS_KEY: randomBytes(32).toString('base64') };

/** The loopback page the browser flow reads (the worker's Chromium warms up on it). */
function startSite() {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Scale</title><main><h1 data-testid="title">Hello from the site</h1></main>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })));
}

const children = new Set();
let loadAtStart = '';

/** One process of the example service; resolves with its URL once it listens. */
function startProcess(role, extraEnv = {}, nodeArgs = []) {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowctl-scale-'));
  const env = {
    ...process.env,
    ...secrets,
    ...extraEnv,
    DATABASE_URL: databaseUrl,
    FLOWCTL_DB_SCHEMA: schema,
    SVC_ROLE: role,
    SVC_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    SVC_IP_LIMIT: '100000000',
    SVC_ORG_LIMIT: '100000000',
    SVC_AUTH_IP_LIMIT: '1000000',
    SVC_AUTH_ACCOUNT_LIMIT: '1000000',
    SVC_AUTH_IP_FAILURES: '1000000',
  };
  const child = spawn(process.execPath, [...nodeArgs, MAIN], { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return waitForLine(child, /flowctl hosted (?:service|worker) on (http:\/\/\S+)/, { stream: 'stderr', what: role }).then(({ match }) => ({
    child,
    url: match[1],
    role,
    dataDir,
  }));
}

async function stopProcess(p) {
  if (p.child.exitCode !== null) return;
  const gone = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    try {
      process.kill(-p.child.pid, 'SIGKILL');
    } catch {}
  }, 40_000);
  await gone;
  clearTimeout(timer);
  try {
    process.kill(-p.child.pid, 'SIGKILL'); // the process group: a worker's Chromium too
  } catch {}
  rmSync(p.dataDir, { recursive: true, force: true });
}

/** Resident set of a process and of every process below it (MB). */
function treeRssMb(pid) {
  const tree = processTree(pid);
  let kb = 0;
  for (const p of tree) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {}
  }
  return { mb: kb / 1024, processes: tree.length };
}

async function json(res, what) {
  const body = await res.json();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Sign up, publish `greet` (pure) and `page-title` (browser) as a publish leaves them, mint a live key. */
async function setup(url, siteOrigin) {
  const res = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `scale-${randomBytes(4).toString('hex')}@example.test`, password: 'a long bench passphrase', org_name: 'Scale' }),
  });
  const signup = await json(res, 'signup');
  const cookie = `svc_session=${/svc_session=([^;]*)/.exec(res.headers.getSetCookie().join(';'))[1]}`;
  const { createEngine, createToolRegistry, builtinTools, compile } = await import('../dist/index.js');
  const { createPlaywrightExecutor } = await import('../dist/adapters/executor-playwright.js');
  const { createSqlStorage, createSqlServiceStorage } = await import('../dist/adapters/storage-sql.js');
  const browser = createPlaywrightExecutor();
  const tools = createToolRegistry(builtinTools(), browser.tools);
  const engineStorage = createSqlStorage({ databaseUrl, schema });
  const engine = createEngine({ storage: engineStorage, tools });
  const storage = createSqlServiceStorage(engineStorage);
  const flows = {
    greet: GREET_FLOW,
    'page-title': `name: page-title
steps:
  - id: open
    tool: browser/navigate@1
    args: {url: ${siteOrigin}/}
  - id: title
    tool: browser/extract@1
    args: {target: {testid: title}}
output:
  title: \${steps.title.output.value}
`,
  };
  try {
    for (const [name, yaml] of Object.entries(flows)) {
      const r = compile(yaml, { file: `${name}.yaml`, tools });
      if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
      await publishSpec({ engine, storage }, { orgId: signup.org.id, userId: signup.user.id, name, spec: r.spec, site: `${siteOrigin}/` });
    }
  } finally {
    await engineStorage.dispose();
    await browser.dispose();
  }
  const key = (
    await json(
      await fetch(`${url}/api/keys`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'live' }) }),
      'key',
    )
  ).secret;
  return { cookie, key };
}

function load(url, key, connections, duration) {
  return autocannon({
    url: `${url}/v1/run/greet`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: BODY,
    connections,
    duration,
  });
}

/** 16 connections split across `n` API processes at once; total runs/s, worst p99 among them. */
async function syncRound(apis, n, key) {
  const targets = apis.slice(0, n);
  const per = CONNECTIONS / n;
  await Promise.all(targets.map((a) => load(a.url, key, per, WARMUP_S)));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await Promise.all(targets.map((a) => load(a.url, key, per, DURATION_S)));
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  for (const r of results) if (r.non2xx > 0 || r.errors > 0) throw new Error(`${n} api: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return {
    rps: results.reduce((s, r) => s + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    loadGenCpu: (cpu.user + cpu.system) / 1000 / wall,
  };
}

async function terminalCount(client, since) {
  const r = await client.query(
    `select count(*)::int as n from "${schema}".svc_executions where dispatch = 'queue' and status in ('succeeded', 'failed') and created_at >= $1`,
    [since],
  );
  return r.rows[0].n;
}

/** QUEUE_BURST queued runs sent by QUEUE_SENDERS concurrent callers; time to the last terminal run. */
async function queueBurst(api, key, client) {
  const since = new Date(Date.now() - 1000).toISOString();
  const before = await terminalCount(client, since);
  const t0 = performance.now();
  let next = 0;
  const send = async () => {
    while (next < QUEUE_BURST) {
      next++;
      const res = await fetch(`${api.url}/v1/run/greet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: BODY,
      });
      const ack = await res.json();
      if (ack.status !== 'queued') throw new Error(`queue ack: ${JSON.stringify(ack)}`);
    }
  };
  await Promise.all(Array.from({ length: QUEUE_SENDERS }, send));
  const acked = performance.now() - t0;
  // Poll the executions index (bounded: 10 minutes at 50 ms).
  for (let i = 0; i < 12_000; i++) {
    if ((await terminalCount(client, since)) - before >= QUEUE_BURST) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const done = performance.now() - t0;
  if ((await terminalCount(client, since)) - before < QUEUE_BURST) throw new Error('queued runs did not finish');
  return { runsPerS: QUEUE_BURST / (done / 1000), ackPerS: QUEUE_BURST / (acked / 1000), ms: done };
}

async function main() {
  if (!databaseUrl) {
    process.stderr.write('[bench] scale: needs Postgres (TEST_DATABASE_URL or DATABASE_URL); skipped\n');
    return;
  }
  loadAtStart = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ');
  const site = await startSite();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const procs = [];
  try {
    // Sync: four API processes (the first migrates the schema before the others start).
    const first = await startProcess('api');
    procs.push(first);
    const { cookie, key } = await setup(first.url, site.origin);
    await new Promise((r) => setTimeout(r, 2000)); // settle after start-up and sign-up
    const apiIdle = treeRssMb(first.child.pid);
    for (let i = 1; i < 4; i++) procs.push(await startProcess('api'));
    const apis = procs.slice(0, 4);
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? API_COUNTS : [...API_COUNTS].reverse();
      const round = {};
      for (const n of order) round[n] = await syncRound(apis, n, key);
      rounds.push(round);
      process.stderr.write(`[bench] scale round ${i + 1}: ${API_COUNTS.map((n) => `${n} api ${round[n].rps.toFixed(0)}/s`).join(', ')}\n`);
    }
    const apiAfterLoad = treeRssMb(first.child.pid);
    // The same API process with a small young generation: idle RSS, and what it costs in throughput.
    const small = await startProcess('api', {}, SMALL_YOUNG);
    procs.push(small);
    await fetch(`${small.url}/api/automations`, { headers: { cookie } });
    await new Promise((r) => setTimeout(r, 2000)); // settle after start-up, as for the first one
    const smallIdle = treeRssMb(small.child.pid);
    const smallRounds = [];
    for (let i = 0; i < ROUNDS; i++) smallRounds.push(await syncRound([small], 1, key));
    const smallAfterLoad = treeRssMb(small.child.pid);
    procs.splice(procs.indexOf(small), 1);
    await stopProcess(small);
    process.stderr.write('[bench] scale: stopping three API processes\n');
    for (const p of procs.splice(1)) await stopProcess(p);
    process.stderr.write('[bench] scale: queue dispatch\n');

    // Queue: a queue-dispatch API process, then one worker, then two.
    const qapi = await startProcess('api', { SVC_RUN_DISPATCH: 'queue' });
    procs.push(qapi);
    const queue = {};
    const workers = [];
    for (const w of WORKER_COUNTS) {
      while (workers.length < w) {
        const worker = await startProcess('worker', { SVC_EGRESS_ALLOW: new URL(site.origin).host });
        workers.push(worker);
        procs.push(worker);
      }
      await queueBurst(qapi, key, client); // warm-up burst
      queue[w] = await queueBurst(qapi, key, client);
      process.stderr.write(`[bench] scale queue ${w} worker(s): ${queue[w].runsPerS.toFixed(0)} runs/s (acked ${queue[w].ackPerS.toFixed(0)}/s)\n`);
    }
    const workerNoBrowser = workers.map((w) => treeRssMb(w.child.pid)).sort((a, b) => a.mb - b.mb)[0];
    // A worker with a warm Chromium: browser runs through the queue until every worker ran one.
    const browserRuns = [];
    for (let i = 0; i < 6; i++) {
      const ack = await json(
        await fetch(`${qapi.url}/v1/run/page-title`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: '{"inputs":{}}',
        }),
        'browser run',
      );
      await (await fetch(`${qapi.url}/api/runs/${ack.run_id}/stream`, { headers: { cookie } })).text();
      // The stream ends at run_finished; the worker records the outcome in the index just after.
      let one;
      for (let j = 0; j < 600; j++) {
        one = await json(await fetch(`${qapi.url}/api/executions/${ack.run_id}`, { headers: { cookie } }), 'execution');
        if (one.execution.status !== 'running' && one.execution.status !== 'queued') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      if (one.execution.status !== 'succeeded') throw new Error(`browser run: ${JSON.stringify(one.execution)}`);
      browserRuns.push(one);
    }
    const workerWarm = workers.map((w) => treeRssMb(w.child.pid)).sort((a, b) => b.mb - a.mb)[0];

    const med = (n, k) => median(rounds.map((r) => r[n][k]));
    const base = med(1, 'rps');
    const rows = API_COUNTS.map(
      (n) =>
        `| ${n} | ${med(n, 'rps').toFixed(0)} | ${(med(n, 'rps') / base).toFixed(2)} | ${med(n, 'p50')} / ${med(n, 'p99')} | ${(med(n, 'loadGenCpu') * 100).toFixed(0)}% |`,
    );
    const qrows = WORKER_COUNTS.map(
      (w) => `| ${w} | ${queue[w].runsPerS.toFixed(0)} | ${(queue[w].runsPerS / queue[1].runsPerS).toFixed(2)} | ${queue[w].ackPerS.toFixed(0)} |`,
    );
    const body = `
Load average when the run started: ${loadAtStart} (2 cores; above 2 means other work shared the machine).

The example service as deployed (\`examples/hosted-service/main.mjs\`, what \`npm start\` and
\`npm run worker\` run), every process on one Postgres (127.0.0.1) in one schema; a pure 3-step flow
(\`greet\`, 8 journal entries per run). \`bench/scale.bench.mjs\`.

**Sync gateway, N API processes** (\`SVC_ROLE=api\`): autocannon in the bench process, ${CONNECTIONS}
connections split evenly across the N processes, ${ROUNDS} interleaved rounds of ${DURATION_S} s after
${WARMUP_S} s of warm-up, medians of the rounds; p50/p99 are the worst of the N processes.

| API processes | runs/s | vs 1 | p50 / p99 ms | load generator CPU (of one core) |
|---|---|---|---|---|
${rows.join('\n')}

**Queue, M workers** (\`SVC_ROLE=worker\`, \`SVC_WORKER_CONCURRENCY\` default): one API process with
\`SVC_RUN_DISPATCH=queue\`, a burst of ${QUEUE_BURST} requests from ${QUEUE_SENDERS} concurrent callers, from the
first request to the last run terminal in the executions index (after one warm-up burst).

| workers | runs/s | vs 1 | requests acked/s |
|---|---|---|---|
${qrows.join('\n')}

**Idle RSS** (\`/proc/<pid>/status\` VmRSS, the process and its descendants):

| process | RSS MB |
|---|---|
| API process, idle after start-up and sign-up (no browser; target < ${RSS_TARGET_MB}) | **${apiIdle.mb.toFixed(0)}** (${apiIdle.mb < RSS_TARGET_MB ? 'met' : 'NOT met'}) |
| the same API process after the sync rounds | ${apiAfterLoad.mb.toFixed(0)} |
| API process started with \`${SMALL_YOUNG.join(' ')}\`, idle | **${smallIdle.mb.toFixed(0)}** (${smallIdle.mb < RSS_TARGET_MB ? 'met' : 'NOT met'}) |
| the same after ${ROUNDS} rounds of the 1-process load (${median(smallRounds.map((r) => r.rps)).toFixed(0)} runs/s vs ${base.toFixed(0)} with V8's default) | ${smallAfterLoad.mb.toFixed(0)} |
| worker after the queue bursts, no browser run yet | ${workerNoBrowser.mb.toFixed(0)} (${workerNoBrowser.processes} process${workerNoBrowser.processes > 1 ? 'es' : ''}) |
| worker with a warm Chromium (after ${browserRuns.length} browser runs through the queue) | ${workerWarm.mb.toFixed(0)} (${workerWarm.processes} processes) |

Why it scales as it does: this machine has 2 cores, shared by the API processes, Postgres and the
load generator; a sync gateway run is CPU in Node (auth, limits, the engine's steps and hashing)
plus about seven statements in Postgres. More API processes than cores add no CPU, so past two
the figure measures contention, not the service; on a machine with more cores the API tier is
stateless (every limit and lock is in Postgres) and the ceiling moves to Postgres.
`;
    writeSection('scale', 'Scale-out: API processes, workers and memory on one Postgres', body);
    process.stderr.write(body);
  } finally {
    for (const p of procs.reverse()) await stopProcess(p).catch(() => {});
    await client.query(`drop schema if exists "${schema}" cascade`).catch(() => {});
    await client.query(`drop schema if exists "${schema}_pgboss" cascade`).catch(() => {});
    await client.end();
    site.server.close();
  }
}

process.on('exit', () => {
  for (const c of children) {
    try {
      process.kill(-c.pid, 'SIGKILL');
    } catch {}
  }
});
await main();
