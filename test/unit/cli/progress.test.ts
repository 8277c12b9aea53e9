import { describe, expect, it } from 'vitest';
import { createProgressPrinter } from '../../../cli/progress.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { memoryIO } from './io-helpers.js';

const D = `sha256:${'0'.repeat(64)}` as const;
const spec = {
  flowspec: 1,
  name: 'p',
  inputs: {},
  steps: [
    {
      id: 'a',
      tool: { ref: 'core/template', version: '1.0.0', contract_digest: D },
      capabilities: [],
      args: {},
      retry: { max_attempts: 2, backoff_ms: 0, backoff_factor: 2 },
      timeout_ms: 1000,
    },
    {
      id: 'b',
      tool: { ref: 'fs/write', version: '1.0.0', contract_digest: D },
      capabilities: ['fs'],
      args: {},
      retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 2 },
      timeout_ms: 1000,
    },
  ],
} as FlowSpec;
const base = { at: '2026-01-01T00:00:00.000Z', flow_digest: D, inputs_digest: D, prev: null, digest: D };
const pin = { ref: 'core/template', version: '1.0.0', contract_digest: D };
const entries = [
  { ...base, seq: 1, event: 'step_started', step: 'a', tool: pin, attempt: 1, input: {}, input_digest: D, provider: 'in-process' },
  { ...base, seq: 2, event: 'step_failed', step: 'a', attempt: 1, error: { code: 'boom', message: 'it broke', retryable: true }, will_retry: true },
  { ...base, seq: 3, event: 'step_started', step: 'a', tool: pin, attempt: 2, input: {}, input_digest: D, provider: 'in-process' },
  { ...base, seq: 4, event: 'step_succeeded', step: 'a', attempt: 2, output: {}, output_digest: D, duration_ms: 5 },
  { ...base, seq: 5, event: 'step_skipped', step: 'b', reason: 'condition false' },
  { ...base, seq: 6, event: 'run_finished', status: 'succeeded' },
] as JournalEntry[];

describe('progress printer', () => {
  it('writes plain lines when stderr is not a terminal', () => {
    const { io, err, out } = memoryIO({ stderrTTY: false });
    const p = createProgressPrinter(io, spec);
    for (const e of entries) p.onEntry(e);
    expect(err().split('\n').filter(Boolean)).toEqual([
      'flowctl: [1/2] a core/template@1.0.0 running',
      'flowctl: [1/2] a failed: boom: it broke, retrying',
      'flowctl: [1/2] a core/template@1.0.0 running (attempt 2)',
      'flowctl: [1/2] a succeeded (5 ms)',
      'flowctl: [2/2] b skipped (condition false)',
    ]);
    expect(err()).not.toContain('\r');
    expect(out()).toBe('');
  });

  it('rewrites one line in place on a terminal and clears it at the end', () => {
    const { io, err } = memoryIO({ stderrTTY: true });
    const p = createProgressPrinter(io, spec);
    for (const e of entries) p.onEntry(e);
    const text = err();
    expect(text).toContain('\r\x1b[2K[1/2] a core/template@1.0.0 running');
    // failures stay on screen as their own line
    expect(text).toContain('flowctl: [1/2] a failed: boom: it broke, retrying\n');
    expect(text.endsWith('\r\x1b[2K')).toBe(true);
    // only the failure line ends with a newline: the rest is one live line
    expect(text.split('\n')).toHaveLength(2);
  });
});
