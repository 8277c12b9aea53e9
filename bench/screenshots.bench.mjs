// Step screenshots (issue 30, point 1): what a run pays for its per-step screenshots. The TodoMVC task
// of test/fixtures/todomvc/ops.yaml (13 steps) on three apps of the todomvc package, run by the engine
// as the hosted service runs it (SQL storage on PGlite, where the screenshots are stored; one warm
// Chromium, a fresh context per run), with screenshots on and off, interleaved; median run time of
// RUNS each and the per-step cost of the screenshots. BENCH_DIST=<folder> runs another build (a
// before/after); BENCH_QUICK=1: a few runs. Prints its table; writes nothing.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { median } from './results.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const RUNS = QUICK ? 3 : 9;
const APPS = ['vanillajs', 'backbone', 'react'];
const dist = (f) => new URL(`${process.env.BENCH_DIST ?? '..'}/dist/${f}`, new URL('./', import.meta.url)).href;
const { builtinTools, buildRecording, compileFlow, createEngine, createToolRegistry, recordingToFlow } = await import(dist('index.js'));
const { createPlaywrightExecutor } = await import(dist('adapters/executor-playwright.js'));
const { createSqlStorage } = await import(dist('adapters/storage-sql.js'));

const root = new URL('../node_modules/todomvc/', import.meta.url).pathname;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };
const server = createServer(async (req, res) => {
  const path = normalize(join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
  if (!path.startsWith(root.replace(/\/$/, '') + sep)) return res.writeHead(404).end();
  try {
    const body = await readFile(path);
    res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'text/plain' }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;

const executor = createPlaywrightExecutor();
const tools = createToolRegistry(builtinTools(), executor.tools);
const storage = createSqlStorage({ pglite: {} });
const engine = (screenshots) => createEngine({ storage, tools, cwd: process.cwd(), toolOptions: { browser: { screenshots } } });
const engines = { off: engine(false), on: engine(true) };
const template = await readFile(new URL('../test/fixtures/todomvc/ops.yaml', import.meta.url), 'utf8');

const rows = [];
for (const app of APPS) {
  const ops = parse(template.replaceAll('{{APP}}', `${origin}/examples/${app}/index.html`));
  const { recording } = await buildRecording({ name: `todo-${app}`, task: 'Manage todos', ops, readFile: () => Promise.reject(new Error('no uploads')) });
  const compiled = compileFlow(recordingToFlow(recording), { file: `${app}.json`, tools });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const times = { off: [], on: [] };
  let shots = 0;
  for (let i = -1; i < RUNS; i++) {
    for (const mode of i % 2 === 0 ? ['off', 'on'] : ['on', 'off']) {
      const t0 = performance.now();
      const run = await engines[mode].run({ spec: compiled.spec }, {});
      const ms = performance.now() - t0;
      if (run.status !== 'succeeded') throw new Error(`${app} ${mode}: ${run.status} ${JSON.stringify(run.error)}`);
      if (mode === 'on') shots = run.journal.filter((e) => e.event === 'step_succeeded' && e.artifacts?.length).length;
      if (i >= 0) times[mode].push(ms);
    }
  }
  const steps = compiled.spec.steps.length;
  const [off, on] = [median(times.off), median(times.on)];
  rows.push(`| ${app} | ${steps} | ${off.toFixed(0)} | ${on.toFixed(0)} | ${(on / off).toFixed(2)} | ${((on - off) / steps).toFixed(1)} | ${shots} |`);
}
console.log(`screenshots bench (${process.env.BENCH_DIST ?? 'this build'}), median of ${RUNS} runs each, interleaved`);
console.log('| app | steps | off ms | on ms | on/off | ms per step | steps with a screenshot |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
await executor.dispose();
await storage.dispose();
server.close();
