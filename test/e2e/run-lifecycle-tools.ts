import type { Digest } from '../../src/canonical.js';
import type { FlowSpec } from '../../src/flow/types.js';
import { contractDigest, defineTool } from '../../src/tools/contract.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { ToolContract } from '../../src/tools/types.js';

// Shared by run-lifecycle.test.ts and its child process: a tool that waits until its run is aborted.
const waitContract: ToolContract = {
  ref: 'lifecycle/wait',
  version: '1.0.0',
  description: 'Waits until the run is aborted (cancel, shutdown).',
  input_schema: { type: 'object' },
  output_schema: { type: 'object' },
  capabilities: [],
};
const echoContract: ToolContract = { ...waitContract, ref: 'lifecycle/echo', description: 'Echoes its input.' };

export function lifecycleTools() {
  return createToolRegistry([
    defineTool(waitContract, async (_input: unknown, ctx) => {
      await new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }));
      return {};
    }),
    defineTool(echoContract, async (input: Record<string, unknown>) => ({ ...input })),
  ]);
}

const step = (id: string, contract: ToolContract, args: Record<string, unknown>) => ({
  id,
  tool: { ref: contract.ref, version: contract.version, contract_digest: contractDigest(contract) as Digest },
  capabilities: [],
  args,
  retry: { max_attempts: 1, backoff_ms: 10, backoff_factor: 2 },
  timeout_ms: 3_600_000,
});

/** echo, then (when `wait`) a step that only ends when the run is aborted. */
export function lifecycleSpec(wait: boolean): FlowSpec {
  return {
    flowspec: 1,
    name: wait ? 'lifecycle-wait' : 'lifecycle-echo',
    inputs: { who: { type: 'string', required: true, secret: false, schema: { type: 'string' } } },
    steps: [step('hello', echoContract, { who: '${inputs.who}' }), ...(wait ? [step('wait', waitContract, {})] : [])],
    output: '${steps.hello.output.who}',
  } as FlowSpec;
}
