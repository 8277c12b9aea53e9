import { digestOf, type Digest } from '../src/canonical.js';
import type { FlowSpec } from '../src/flow/types.js';
import type { RunRecord } from '../src/ports/storage.js';
import { sealEntry, type UnsealedEntry } from '../src/run/journal.js';
import type { JournalEntry } from '../src/run/types.js';
import { contractDigest, defineTool, toolError } from '../src/tools/contract.js';
import { createToolRegistry } from '../src/tools/registry.js';
import type { Tool, ToolRegistry } from '../src/tools/types.js';

/** Data the storage conformance suite writes: small, valid, adapter-neutral. */

export const FLOW_DIGEST = digestOf({ conformance: 'flow' });
const INPUTS_DIGEST = digestOf({});

export function sampleRun(id: string, startedAt: string, flowName = 'conformance'): RunRecord {
  return { id, flow_digest: FLOW_DIGEST, flow_name: flowName, status: 'pending', started_at: startedAt };
}

/** A valid hash-chained journal of `count` entries, ending with run_finished when `finished`. */
export function sampleJournal(count: number, finished = false): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (let seq = 0; seq < count; seq++) {
    const base = {
      at: `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000Z`,
      flow_digest: FLOW_DIGEST,
      inputs_digest: INPUTS_DIGEST,
      seq,
      prev: seq === 0 ? null : out[seq - 1]!.digest,
    };
    let entry: UnsealedEntry;
    if (seq === 0) entry = { ...base, event: 'run_started', flow_name: 'conformance', inputs: {}, contracts: [] };
    else if (finished && seq === count - 1) entry = { ...base, event: 'run_finished', status: 'succeeded', output: { n: seq } };
    else entry = { ...base, event: 'step_skipped', step: `s${seq}`, reason: 'conformance' };
    out.push(sealEntry(entry));
  }
  return out;
}

function uuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}
export { uuid as conformanceId };

/** Tools for the engine-level checks: `conformance/echo` (pure) and `conformance/flaky` (fails once per key). */
export function conformanceTools(): ToolRegistry {
  const failedOnce = new Set<string>();
  const echo: Tool = defineTool(
    {
      ref: 'conformance/echo',
      version: '1.0.0',
      description: 'Returns its input value.',
      input_schema: { type: 'object', properties: { value: {} }, required: ['value'] },
      output_schema: { type: 'object', properties: { value: {} }, required: ['value'] },
      capabilities: [],
    },
    async (input: { value: unknown }) => ({ value: input.value }),
  );
  const flaky: Tool = defineTool(
    {
      ref: 'conformance/flaky',
      version: '1.0.0',
      description: 'Fails with a retryable error the first time it sees a key, then succeeds.',
      input_schema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      output_schema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      capabilities: [],
    },
    async (input: { key: string }) => {
      if (!failedOnce.has(input.key)) {
        failedOnce.add(input.key);
        throw toolError('conformance_flaky', `first attempt for ${input.key} fails`, { retryable: true });
      }
      return { key: input.key };
    },
  );
  return createToolRegistry([echo, flaky]);
}

/** A three-step pure flow: echo, a retried flaky step, and a skipped step. */
export function conformanceSpec(tools: ToolRegistry): FlowSpec {
  const pin = (ref: string) => {
    const tool = tools.get(ref, '1.0.0')!;
    return { ref, version: '1.0.0', contract_digest: contractDigest(tool.contract) as Digest };
  };
  const step = (id: string, ref: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id,
    tool: pin(ref),
    capabilities: [],
    args,
    retry: { max_attempts: 2, backoff_ms: 1, backoff_factor: 1 },
    timeout_ms: 10_000,
    ...extra,
  });
  return {
    flowspec: 1,
    name: 'conformance',
    inputs: {
      word: { type: 'string', required: true, secret: false, schema: { type: 'string' } },
    },
    steps: [
      step('first', 'conformance/echo', { value: '${inputs.word}' }),
      step('second', 'conformance/flaky', { key: '${steps.first.output.value}' }),
      step('never', 'conformance/echo', { value: 1 }, { if: 'inputs.word == "never"' }),
    ],
    output: { echoed: '${steps.second.output.key}' },
  } as FlowSpec;
}
