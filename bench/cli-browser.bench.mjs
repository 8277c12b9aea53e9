// `flowctl run` of a recorded browser task on real apps versus the handwritten playwright-core script
// of the same task, each a whole process with one cold Chromium launch (issue 30, point 4). Three apps
// of the corpus (docs/corpus.md), served as they ship on 127.0.0.1 from node_modules; per app the task
// is recorded once with `flowctl record --ops`, then, interleaved with the order rotating:
// - script: `node <app>.mjs`, Playwright's own waits, the same launch flags as flowctl;
// - flowctl run: `flowctl run <name> --yes --json` in the project, the compiled spec cached (the state
//   of every run after the first);
// - flowctl run, no cache: the same with FLOWCTL_SPEC_CACHE=off (compiles each time), for reference.
// Every output is checked equal to the script's. Target: flowctl run / script <= 1.10 on each app.
// Section <!-- bench:cli-browser --> of bench/RESULTS.md. BENCH_QUICK=1: 3 runs instead of 7.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import { extname, join, normalize } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LAUNCH_FLAGS, resolveBrowser } from '../dist/adapters/executor-playwright.js';
import { median, percentile, writeSection } from './results.mjs';

const RUNS = process.env.BENCH_QUICK ? 3 : Number(process.env.BENCH_CLI_BROWSER_RUNS ?? 7);
const TARGET = 1.1;
const BIN = process.env.FLOWCTL_TEST_BIN ?? new URL('../bin/flowctl.mjs', import.meta.url).pathname;
const PW = new URL('../node_modules/playwright-core/index.mjs', import.meta.url).pathname;
const MODULES = new URL('../node_modules/', import.meta.url).pathname;

/** Whitespace differs between textContent and innerText (a `<br>`); the words must not. */
const squash = (v) => JSON.stringify(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))).replace(/\s+|\\n/g, '');

/**
 * Each app: its page under node_modules, the ops recorded (flowctl record --ops) and the body of the
 * handwritten script (it ends by printing the same named values the recording extracts).
 */
const APPS = [
  {
    id: 'todomvc',
    name: 'TodoMVC (vanilla JS)',
    path: '/todomvc/examples/vanillajs/index.html',
    ops: async (url) => (await readFile(new URL('../test/fixtures/todomvc/ops.yaml', import.meta.url), 'utf8')).replaceAll('{{APP}}', url),
    script: `const input = page.locator('#new-todo');
for (const title of ['Buy milk', 'Write report', 'Call Bob']) {
  await input.fill(title);
  await input.press('Enter');
}
await page.locator('#todo-list > li:nth-child(2) .toggle').check();
await page.locator('#todo-list > li:nth-child(3)').hover();
await page.locator('#todo-list > li:nth-child(3) .destroy').click();
await page.locator('#todo-list > li:nth-child(1) label').dblclick();
await page.locator('#todo-list > li.editing .edit').fill('Buy oat milk');
await page.locator('#todo-list > li.editing .edit').press('Enter');
await page.locator('#todo-list > li.editing').waitFor({ state: 'detached' });
const items = await page.locator('#todo-list > li label').evaluateAll(text);
const done = await page.locator('#todo-list > li.completed label').evaluateAll(text);
const left = (await page.locator('#todo-count').textContent()).replace(/\\s+/g, ' ').trim();
out = { items, done, left };`,
  },
  {
    id: 'jsonlint',
    name: 'JSON Lint',
    path: '/jsonlint/web/jsonlint.html',
    ops: (url) => `- kind: navigate
  url: "${url}"
- kind: fill
  target: "#source"
  value: '{"order": 42, "items": ["tea", "milk"]}'
  slot: document
- kind: check
  target: "#reformat"
- kind: click
  target: "#button"
- kind: extract
  target: "#result"
  name: verdict
`,
    script: `await page.locator('#source').fill('{"order": 42, "items": ["tea", "milk"]}');
await page.locator('#reformat').check();
await page.locator('#button').click();
await page.locator('#result').filter({ hasText: /\\S/ }).waitFor();
out = { verdict: (await page.locator('#result').textContent()).trim() };`,
  },
  {
    id: 'jsonform',
    name: 'JSON Form (getting started example)',
    path: '/jsonform/example.html',
    ops: (url) => `- kind: navigate
  url: "${url}"
- kind: fill
  target: "input[name=name]"
  value: Ada Lovelace
  slot: name
- kind: fill
  target: "input[name=age]"
  value: "36"
  slot: age
- kind: click
  target: "form [type=submit]"
- kind: extract
  target: "#res"
  name: greeting
`,
    script: `await page.locator('input[name=name]').fill('Ada Lovelace');
await page.locator('input[name=age]').fill('36');
await page.locator('form [type=submit]').click();
await page.locator('#res').filter({ hasText: /\\S/ }).waitFor();
out = { greeting: (await page.locator('#res').textContent()).trim() };`,
  },
];

function serve() {
  const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png' };
  const server = createServer(async (req, res) => {
    let path = normalize(join(MODULES, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (!path.startsWith(MODULES)) return res.writeHead(404).end();
    try {
      if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(await readFile(path));
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function spawnTimed(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`${args.join(' ')}: exit ${code}\n${err}`))));
  });
}

const server = await serve();
const origin = `http://127.0.0.1:${server.address().port}`;
const { executablePath } = await resolveBrowser();
const project = await mkdtemp(join(os.tmpdir(), 'flowctl-bench-cli-browser-'));
const loads = [];
try {
  await spawnTimed([BIN, 'init'], project);
  await mkdir(join(project, 'ops'));
  const rows = [];
  for (const app of APPS) {
    const url = `${origin}${app.path}`;
    const name = `bench-${app.id}`;
    const ops = await app.ops(url);
    await writeFile(join(project, `ops/${app.id}.yaml`), ops);
    await spawnTimed([BIN, 'record', '--name', name, '--task', app.name, '--ops', `ops/${app.id}.yaml`], project);
    const scriptFile = join(project, `${app.id}.mjs`);
    await writeFile(
      scriptFile,
      `import { chromium } from ${JSON.stringify(PW)};
const browser = await chromium.launch({ executablePath: ${JSON.stringify(executablePath)}, args: ${JSON.stringify([...LAUNCH_FLAGS])} });
const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block' });
const page = await context.newPage();
await page.goto(${JSON.stringify(url)}, { waitUntil: 'load' });
const text = (els) => els.map((el) => el.textContent.replace(/\\s+/g, ' ').trim());
let out;
${app.script}
await browser.close();
process.stdout.write(JSON.stringify(out));
`,
    );
    const viaScript = async () => {
      const r = await spawnTimed([scriptFile], project);
      return { ms: r.ms, output: JSON.parse(r.out) };
    };
    const viaCli = (env) => async () => {
      const r = await spawnTimed([BIN, 'run', name, '--yes', '--json'], project, env);
      const run = JSON.parse(r.out);
      if (run.status !== 'succeeded') throw new Error(`${app.id}: run ${run.status}: ${JSON.stringify(run.journal.at(-1))}`);
      return { ms: r.ms, output: run.output };
    };
    const cached = viaCli({});
    const uncached = viaCli({ FLOWCTL_SPEC_CACHE: 'off' });
    // One of each first, unmeasured (disk caches, the app's first load, the cache entry written).
    const expected = squash((await viaScript()).output);
    const check = (o) => {
      if (squash(o) !== expected) throw new Error(`${app.id}: flowctl output ${JSON.stringify(o)}, the script's ${expected}`);
    };
    check((await cached()).output);
    check((await uncached()).output);
    const ms = new Map([
      [viaScript, []],
      [cached, []],
      [uncached, []],
    ]);
    const order = [...ms.keys()];
    for (let i = 0; i < RUNS; i++) {
      for (let j = 0; j < order.length; j++) {
        const fn = order[(i + j) % order.length];
        const r = await fn();
        if (fn === viaScript) {
          if (squash(r.output) !== expected) throw new Error(`${app.id}: the script's output changed: ${JSON.stringify(r.output)}`);
        } else check(r.output);
        ms.get(fn).push(r.ms);
      }
      loads.push(os.loadavg()[0]);
    }
    const row = { app, ops: ops.match(/^- kind:/gm).length, script: ms.get(viaScript), cli: ms.get(cached), nocache: ms.get(uncached) };
    row.ratio = median(row.cli) / median(row.script);
    row.nocacheRatio = median(row.nocache) / median(row.script);
    rows.push(row);
    process.stderr.write(`[bench] cli-browser ${app.id}: flowctl run/script ${row.ratio.toFixed(3)} (no cache ${row.nocacheRatio.toFixed(3)})\n`);
  }

  const fmt = (xs) => `${median(xs).toFixed(0)} (${percentile(xs, 90).toFixed(0)})`;
  const worst = Math.max(...rows.map((r) => r.ratio));
  const body = `\`flowctl run\` of a recorded browser task against the handwritten playwright-core script of the same task, on
three apps of the corpus (docs/corpus.md) served as they ship on 127.0.0.1. Each sample is a whole process (spawn to exit)
with one cold Chromium launch; ${RUNS} samples each after one unmeasured run of each, interleaved with the order rotating;
every flowctl output checked equal to the script's.

- **script**: \`node <app>.mjs\`: playwright-core, the launch flags flowctl uses, Playwright's own waits;
- **flowctl run**: \`flowctl run bench-<app> --yes --json\` in a project (file store in .flowctl/, the run journaled), its
  compiled spec taken from the compiled-spec cache (the state of every run of an unchanged flow after the first), and
  its modules from Node's compile cache, which the \`flowctl\` bin turns on (the script runs as written, without it);
- **no cache**: the same with \`FLOWCTL_SPEC_CACHE=off\` (compiles the Recording on every run), for reference.

The machine is shared with other work while this runs (other builds, tests and benchmarks), so wall-clock numbers are
high and noisy; the interleaving puts that load on every side alike. 1-minute load average during the runs: min
${Math.min(...loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)} (2 cores).
Target: flowctl run / script at most ${TARGET.toFixed(2)} per app. Result: worst **${worst.toFixed(3)}** (${worst <= TARGET ? 'meets' : 'misses'} the target).

| App | ops | script median ms (p90) | \`flowctl run\` median ms (p90) | **flowctl run / script** | no cache median ms (p90) | no cache / script |
|---|---|---|---|---|---|---|
${rows
  .map((r) => `| ${r.app.name} | ${r.ops} | ${fmt(r.script)} | ${fmt(r.cli)} | **${r.ratio.toFixed(3)}** | ${fmt(r.nocache)} | ${r.nocacheRatio.toFixed(3)} |`)
  .join('\n')}
`;
  writeSection('cli-browser', 'flowctl run vs the cold script (browser flows)', body);
  process.stdout.write(`${body}\n`);
} finally {
  server.close();
  await rm(project, { recursive: true, force: true });
}
