import { defineTool } from '../../../src/tools/contract.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import type { Tool, ToolRegistry } from '../../../src/tools/types.js';

/**
 * Real tools for compiler tests, beside the built-ins: one that declares `secrets` (no built-in does)
 * and one published in several versions, for range resolution and the lock.
 */
export const secretEcho = defineTool<{ secret: string }, { length: number }>(
  {
    ref: 'test/secret-echo',
    version: '1.0.0',
    description: 'Receives a resolved secret and returns only its length.',
    input_schema: { type: 'object', properties: { secret: { type: 'string' } }, required: ['secret'], additionalProperties: false },
    output_schema: { type: 'object', properties: { length: { type: 'integer' } }, required: ['length'] },
    capabilities: ['net', 'secrets'],
  },
  async (input) => ({ length: input.secret.length }),
);

function versioned(version: string): Tool {
  return defineTool<{ n: number }, { n: number; version: string }>(
    {
      ref: 'test/versioned',
      version,
      description: `Returns n and its own version (${version}).`,
      input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      output_schema: { type: 'object', properties: { n: { type: 'integer' }, version: { type: 'string' } } },
      capabilities: [],
    },
    async (input) => ({ n: input.n, version }),
  );
}

export const versionedTools: Tool[] = ['1.0.0', '1.2.0', '1.10.1', '2.0.0'].map(versioned);

export function testRegistry(extra: Tool[] = []): ToolRegistry {
  return createToolRegistry(builtinTools(), [secretEcho, ...versionedTools], extra);
}
