import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, digestOf } from '../../../src/canonical.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { buildPack } from '../../../src/packs/build.js';
import { flowSpecBody } from '../../../src/packs/flowspec-body.js';
import { DRAFT_FORMAT, type BuiltPack, type PackDraft } from '../../../src/packs/types.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

export const runtimeTools = createToolRegistry(builtinTools());
const template = runtimeTools.get('core/template', '1.0.0')!;

/** A real FlowSpec: one core/template step pinned to the runtime's contract. */
export function greetingSpec(name: string, greeting = 'Hello'): FlowSpec {
  return {
    flowspec: 1,
    name,
    inputs: {
      who: { type: 'string', required: true, secret: false, schema: { type: 'string' } },
    },
    steps: [
      {
        id: 'greet',
        tool: { ref: 'core/template', version: '1.0.0', contract_digest: digestOf(template.contract) },
        capabilities: [],
        args: { template: `${greeting}, {{ who }}!`, values: { who: '${ inputs.who }' } },
        retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 2 },
        timeout_ms: 30000,
      },
    ],
    output: '${ steps.greet.output.text }',
  };
}

/** A draft with one flow (as a FlowSpec body) and one composite tool implemented by it. */
export function greetingDraft(name: string, version = '1.0.0', greeting = 'Hello'): PackDraft {
  return {
    format: DRAFT_FORMAT,
    name,
    version,
    flows: [{ name: 'greet', file: 'out/greet.flowspec.json', source_kind: 'flowspec', source: `${canonicalJson(greetingSpec('greet', greeting))}\n` }],
    tools: [{ ref: `${name}/greet`, version: '1.0.0', description: 'Greets someone.', implementation: { flow: 'greet' } }],
  };
}

export function build(draft: PackDraft): Promise<BuiltPack> {
  return buildPack(draft, { tools: runtimeTools, compileFlow: (flow, tools) => flowSpecBody(flow.source, flow.file, tools) });
}

/** sha256 over every file path and its bytes under `dir`: equal hashes mean a byte-identical tree. */
export async function treeHash(dir: string): Promise<string> {
  const h = createHash('sha256');
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p, `${rel}${e.name}/`);
      else {
        h.update(`${rel}${e.name}\0`);
        h.update(await readFile(p));
        h.update('\0');
      }
    }
  };
  await walk(dir, '');
  return h.digest('hex');
}
