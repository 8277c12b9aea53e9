import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestOf, prettyJson } from '../../../src/canonical.js';
import { compile } from '../../../src/flow/compile.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

/**
 * The example flows' FlowSpecs and digests are committed in test/golden (written by the CLI through
 * `node test/golden/regenerate.mjs`). If one moves, every deployed digest of that shape moves too:
 * this test fails until the change is deliberate and the goldens are regenerated.
 */
const flowsDir = resolve(import.meta.dirname, '../../fixtures/flows');
const goldenDir = resolve(import.meta.dirname, '../../golden');
const digests = JSON.parse(readFileSync(join(goldenDir, 'digests.json'), 'utf8')) as Record<string, string>;
const files = readdirSync(flowsDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const tools = createToolRegistry(builtinTools());

describe('golden FlowSpecs', () => {
  it('has a golden for every example flow and no stale golden', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(Object.keys(digests).sort()).toEqual(files.map((f) => f.replace(/\.yaml$/, '')));
  });

  it.each(files)('%s compiles to its committed FlowSpec and digest', (file) => {
    const name = file.replace(/\.yaml$/, '');
    const result = compile(readFileSync(join(flowsDir, file), 'utf8'), { file: `flows/${file}`, tools });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics, null, 2));
    const golden = readFileSync(join(goldenDir, `${name}.flowspec.json`), 'utf8');
    expect(`${prettyJson(result.spec)}\n`).toBe(golden);
    expect(result.flow_digest).toBe(digests[name]);
    expect(digestOf(JSON.parse(golden))).toBe(digests[name]);
  });
});
