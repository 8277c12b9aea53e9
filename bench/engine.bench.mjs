// Engine benchmarks (docs/journal.md): per-step overhead of a 1,000-step pure flow on memory storage,
// and hermetic `verify` replay of a 1,000-step journal. Targets: < 0.2 ms per step, < 100 ms per
// verify. Imports the built package (npm run bench builds first). Writes bench/RESULTS.md#engine.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { contractDigest, createEngine, createToolRegistry, defineTool } from '../dist/index.js';
import { createMemoryStorage } from '../dist/adapters/storage-memory.js';
import { createFsStorage } from '../dist/adapters/storage-fs.js';
import { median, percentile, writeSection } from './results.mjs';

const STEPS = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

const add = defineTool(
  {
    ref: 'bench/add',
    version: '1.0.0',
    description: 'n + 1',
    input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    output_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    capabilities: [],
  },
  async ({ n }) => ({ n: n + 1 }),
);
const tools = createToolRegistry([add]);
const pin = { ref: 'bench/add', version: '1.0.0', contract_digest: contractDigest(add.contract) };

function spec(steps) {
  return {
    flowspec: 1,
    name: `bench-${steps}`,
    inputs: { start: { type: 'integer', required: true, secret: false, schema: { type: 'integer' } } },
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${i}`,
      tool: pin,
      capabilities: [],
      args: { n: i === 0 ? '${inputs.start}' : `\${steps.s${i - 1}.output.n}` },
      retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 1 },
      timeout_ms: 10_000,
    })),
    output: { n: `\${steps.s${steps - 1}.output.n}` },
  };
}

// Wall time and this process's CPU time (user + system): on a shared, loaded machine the CPU time is
// what the engine itself costs, the wall time also includes waiting for a core.
async function time(fn) {
  globalThis.gc?.();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpu: (c.user + c.system) / 1000, value };
}

const big = spec(STEPS);

// The tool's own cost (input and output schema checks inside defineTool included), to separate it
// from the engine's overhead.
const toolOnly = [];
const toolOnlyCpu = [];
for (let r = 0; r < ROUNDS + 2; r++) {
  const { ms, cpu } = await time(async () => {
    let n = 0;
    for (let i = 0; i < STEPS; i++) n = (await add.run({ n }, {})).n;
  });
  if (r >= 2) {
    toolOnly.push(ms);
    toolOnlyCpu.push(cpu);
  }
}

const load = loadavg()[0];
const runMs = [];
const runCpu = [];
const replayMs = [];
const replayCpu = [];
const hermeticMs = [];
let journalLength = 0;
for (let r = 0; r < ROUNDS + 2; r++) {
  const engine = createEngine({ storage: createMemoryStorage(), tools });
  const run = await time(() => engine.run({ spec: big }, { start: 0 }));
  if (run.value.status !== 'succeeded' || run.value.output.n !== STEPS) throw new Error('bench run failed');
  journalLength = run.value.journal.length;
  // A fresh engine without tools replays from the journal alone, as a fixture replay does.
  const replayer = createEngine({ storage: createMemoryStorage(), tools: createToolRegistry() });
  const verify = await time(() => replayer.replay({ journal: run.value.journal }, { mode: 'verify', spec: big }));
  if (verify.value.status !== 'succeeded') throw new Error('bench verify failed');
  const hermetic = await time(() => replayer.replay({ journal: run.value.journal }, { spec: big }));
  await engine.dispose();
  await replayer.dispose();
  if (r >= 2) {
    runMs.push(run.ms);
    runCpu.push(run.cpu);
    replayMs.push(verify.ms);
    replayCpu.push(verify.cpu);
    hermeticMs.push(hermetic.ms);
  }
}

// For reference: the same engine on storage-fs (fsync per journal append), 200 steps.
const FS_STEPS = 200;
const fsMs = [];
const dir = await mkdtemp(join(tmpdir(), 'flowctl-bench-'));
try {
  const fsSpec = spec(FS_STEPS);
  for (let r = 0; r < 3; r++) {
    const engine = createEngine({ storage: createFsStorage({ dir }), tools });
    const run = await time(() => engine.run({ spec: fsSpec }, { start: 0 }));
    await engine.dispose();
    fsMs.push(run.ms);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const f = (v) => v.toFixed(3);
const verdict = (v, limit) => (v < limit ? 'met' : 'missed');
const overhead = (median(runMs) - median(toolOnly)) / STEPS;
const overheadCpu = (median(runCpu) - median(toolOnlyCpu)) / STEPS;
const verify = median(replayMs);
const verifyCpu = median(replayCpu);
const rows = [
  ['Run, 1,000-step pure flow, memory storage: wall time per step', `${f(median(runMs) / STEPS)} ms`, '', ''],
  ['Engine overhead per step, wall (run minus the tool calls alone)', `${f(overhead)} ms`, '< 0.2 ms', verdict(overhead, 0.2)],
  ['Engine overhead per step, CPU time', `${f(overheadCpu)} ms`, '< 0.2 ms', verdict(overheadCpu, 0.2)],
  [`Verify replay of a 1,000-step journal (${journalLength} entries), wall, median`, `${verify.toFixed(1)} ms`, '< 100 ms', verdict(verify, 100)],
  ['Verify replay, CPU time, median', `${verifyCpu.toFixed(1)} ms`, '< 100 ms', verdict(verifyCpu, 100)],
  ['Verify replay, wall, p90', `${percentile(replayMs, 90).toFixed(1)} ms`, '', ''],
  ['Hermetic replay of the same journal, wall, median', `${median(hermeticMs).toFixed(1)} ms`, '', ''],
  [`Run, ${FS_STEPS}-step flow, storage-fs (fsync per append): wall per step`, `${f(median(fsMs) / FS_STEPS)} ms`, '', ''],
];
const body = [
  `Median of ${ROUNDS} rounds after 2 warm-up rounds; \`bench/engine.bench.mjs\`, built package, one process;`,
  `1-minute load average ${load.toFixed(1)} on ${cpus().length} cores when it started (CPU time is the engine's own cost; wall time adds waiting for a core).`,
  'A step journals two entries (step_started, step_succeeded), each masked, sealed (canonical JSON + sha256)',
  'and appended; input and output are checked against the contract schemas; every returned Run is parsed by the',
  'strict Run schema.',
  '',
  '| Measure | Result | Target | |',
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
writeSection('engine', 'Engine: per-step overhead and verify replay', body);
process.stderr.write(`${body}\n`);
