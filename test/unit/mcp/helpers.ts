import { parse } from 'yaml';
import { compileFlow } from '../../../src/flow/compile.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { defineTool } from '../../../src/tools/contract.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import type { ToolRegistry } from '../../../src/tools/types.js';

/** A tool that receives a secret and reports only its length (proves the store resolved it). */
export const secretLength = defineTool<{ token: string }, { length: number }>(
  {
    ref: 'test/secret-length',
    version: '1.0.0',
    description: 'Returns the length of a secret.',
    input_schema: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] },
    output_schema: { type: 'object', properties: { length: { type: 'integer' } }, required: ['length'] },
    capabilities: ['secrets'],
  },
  async (input) => ({ length: input.token.length }),
);

export function testRegistry(): ToolRegistry {
  return createToolRegistry(builtinTools(), [secretLength]);
}

/** Compile a YAML flow against the built-in tools (plus test/secret-length); throws with the diagnostics. */
export function compileYaml(text: string, tools: ToolRegistry = testRegistry()): FlowSpec {
  const result = compileFlow(parse(text), { file: 'flows/test.yaml', tools });
  if (!result.ok) throw new Error(result.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n'));
  return result.spec;
}
