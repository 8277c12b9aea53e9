// Built-in tools in-process versus in the `subprocess` sandbox (one worker process per call).
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinTools } from '../dist/index.js';
import { createRunScope } from '../dist/ports.js';
import { createSubprocessSandbox } from '../dist/adapters/sandbox-subprocess.js';
import { median, percentile, writeSection } from './results.mjs';

const N = 30;
const loadBefore = loadavg()[0];
const tools = Object.fromEntries(builtinTools().map((t) => [t.contract.ref, t]));
const root = await mkdtemp(join(tmpdir(), 'flowctl-bench-tools-'));
const ctx = (scope) => ({
  runId: 'bench',
  stepId: 's',
  attempt: 1,
  signal: new AbortController().signal,
  timeoutMs: 30_000,
  cwd: root,
  effect() {},
  warn() {},
  scope,
  logger: { debug() {}, info() {}, warn() {} },
});

async function measure(run) {
  await run(N); // warm-up
  const ms = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await run(i);
    ms.push(performance.now() - t0);
  }
  return ms;
}

const server = createServer((_q, res) => res.end('{"ok":true}'));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/`;

const scope = createRunScope();
const sandbox = createSubprocessSandbox();
let rows;
try {
  rows = [
    ['core/template (in-process)', await measure(() => tools['core/template'].run({ template: 'Hi {{ n }}', values: { n: 1 } }, ctx(scope)))],
    ['http/request loopback (in-process)', await measure(() => tools['http/request'].run({ url }, ctx(scope)))],
    ['fs/write (in-process)', await measure((i) => tools['fs/write'].run({ path: `f${i}.txt`, content: 'x' }, ctx(scope)))],
    ['shell/exec `true` (in-process)', await measure(() => tools['shell/exec'].run({ command: 'true' }, ctx(scope)))],
    ['fs/write (subprocess sandbox)', await measure((i) => sandbox.execute(tools['fs/write'], { path: `f${i}.txt`, content: 'x' }, ctx(scope)))],
    ['shell/exec `true` (subprocess sandbox)', await measure(() => sandbox.execute(tools['shell/exec'], { command: 'true' }, ctx(scope)))],
  ];
} finally {
  await scope.dispose(); // removes the sandbox folder even when a call failed
  await new Promise((r) => server.close(r));
  await rm(root, { recursive: true, force: true });
}

const table = [
  '| Call | median ms | p90 ms |',
  '|---|---|---|',
  ...rows.map(([name, ms]) => `| ${name} | ${median(ms).toFixed(2)} | ${percentile(ms, 90).toFixed(2)} |`),
].join('\n');
writeSection(
  'tools-sandbox',
  'Built-in tools and the subprocess sandbox',
  `${N} calls each after one warm-up, from dist. The sandbox forks one Node worker per call (permission model on), so its cost is mostly process start-up. 1-minute load average at the start: ${loadBefore.toFixed(1)} (other work on the machine inflates the sandbox rows most).\n\n${table}`,
);
process.stdout.write(`${table}\n`);
