import type { FlowSpec } from '../src/engine-entry.js';
import { precompileSchema } from '../src/tools/contract.js';
import type { JsonSchema, ToolRegistry } from '../src/tools/types.js';

/**
 * A browser flow's run waits for Chromium to start (hundreds of ms, the main thread idle); the
 * validators of its step tools' contracts (~10 ms each to compile, on the first step that uses the
 * tool otherwise) compile in that time. The built-in and browser tools' validators were generated at
 * build time (src/tools/tool-validators.generated.ts): for them this is a cache lookup, so what it
 * still compiles are packs' tools' schemas. One schema per macrotask, so the engine's own start-up work
 * interleaves; unref'd, so they never keep the process alive. A flow without browser steps has
 * nothing to wait on and compiles its validators as it uses them.
 */
export function warmValidators(spec: FlowSpec, tools: ToolRegistry): void {
  if (!spec.steps.some((s) => s.capabilities.includes('browser'))) return;
  const schemas = new Set<JsonSchema>();
  for (const step of spec.steps) {
    const tool = tools.get(step.tool.ref, step.tool.version);
    if (!tool) continue;
    schemas.add(tool.contract.input_schema);
    schemas.add(tool.contract.output_schema);
  }
  const queue = [...schemas];
  const next = (): void => {
    const schema = queue.shift();
    if (schema === undefined) return;
    precompileSchema(schema);
    setImmediate(next).unref();
  };
  setImmediate(next).unref();
}
