// Packs: publish and verify of a registry with 500 packs (target: verify under 2 s).
// Each pack: 3 flows (FlowSpec bodies over core/template) and 1 composite tool, so 8 blobs per pack.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { builtinTools, canonicalJson, createToolRegistry, digestOf } from '../dist/index.js';
import { buildPack, compileDraftFlow, publishPack, verifyRegistry } from '../dist/packs.js';
import { median, writeSection } from './results.mjs';

const PACKS = 500;
const FLOWS = 3;
const ROUNDS = 5;
const tools = createToolRegistry(builtinTools());
const template = tools.get('core/template', '1.0.0');

function spec(name, text) {
  return {
    flowspec: 1,
    name,
    inputs: { who: { type: 'string', required: true, secret: false, schema: { type: 'string' } } },
    steps: [
      {
        id: 'greet',
        tool: { ref: 'core/template', version: '1.0.0', contract_digest: digestOf(template.contract) },
        capabilities: [],
        args: { template: `${text}, {{ who }}!`, values: { who: '${ inputs.who }' } },
        retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 2 },
        timeout_ms: 30000,
      },
    ],
    output: '${ steps.greet.output.text }',
  };
}

function draft(i) {
  const name = `bench-${String(i).padStart(3, '0')}`;
  const flows = Array.from({ length: FLOWS }, (_, j) => ({
    name: `f${j}`,
    file: `out/f${j}.flowspec.json`,
    source_kind: 'flowspec',
    source: `${canonicalJson(spec(`f${j}`, `Hello ${i}.${j}`))}\n`,
  }));
  return {
    format: 'flowctl-pack-draft/1',
    name,
    version: '1.0.0',
    flows,
    tools: [{ ref: `${name}/greet`, version: '1.0.0', description: 'greet', implementation: { flow: 'f0' } }],
  };
}

const t0 = performance.now();
const packs = [];
for (let i = 0; i < PACKS; i++) packs.push(await buildPack(draft(i), { tools, compileFlow: compileDraftFlow }));
const buildMs = performance.now() - t0;

const root = await mkdtemp(join(tmpdir(), 'flowctl-bench-packs-'));
const publishTimes = [];
const republishTimes = [];
const verifyTimes = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const reg = join(root, `r${r}`);
    let t = performance.now();
    for (const p of packs) await publishPack(reg, p);
    publishTimes.push(performance.now() - t);
    t = performance.now();
    for (const p of packs) await publishPack(reg, p);
    republishTimes.push(performance.now() - t);
    t = performance.now();
    const report = await verifyRegistry(reg);
    verifyTimes.push(performance.now() - t);
    if (!report.ok || report.packs.length !== PACKS) throw new Error('[bench] verify failed');
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const fmt = (ms) => `${Math.round(ms)} ms`;
const verify = median(verifyTimes);
const body = `
| Operation (${PACKS} packs, ${FLOWS} flows + 1 tool each, ${PACKS * (FLOWS * 2 + 2)} blobs) | Median of ${ROUNDS} |
|---|---|
| build all packs in memory (compile FlowSpec bodies, manifests) | ${fmt(buildMs)} (once) |
| publish all into an empty registry (temp + fsync + rename per blob, exclusive index link) | ${fmt(median(publishTimes))} |
| republish all (every pack alreadyPresent) | ${fmt(median(republishTimes))} |
| \`registry verify\` of the whole registry | ${fmt(verify)} |

Target: verify under 2 s: ${verify < 2000 ? 'met' : 'NOT met'}. Runs: publish ${publishTimes.map(fmt).join(', ')}; verify ${verifyTimes.map(fmt).join(', ')}.
`;
writeSection('packs', 'Packs: publish and verify of a 500-pack registry', body);
process.stderr.write(body);
