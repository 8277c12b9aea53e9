import { describe, expect, it } from 'vitest';
import { createProgressPrinter } from '../../../cli/progress.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { memoryIO } from './io-helpers.js';

/** The live output of `flowctl run` shows locator drift in full, with a hint to re-record, once. */

const D = `sha256:${'0'.repeat(64)}` as const;
const pin = { ref: 'browser/fill', version: '1.0.0', contract_digest: D };
const step = (id: string) => ({
  id,
  tool: pin,
  capabilities: ['browser'],
  args: {},
  retry: { max_attempts: 1, backoff_ms: 0, backoff_factor: 2 },
  timeout_ms: 1000,
});
const spec = { flowspec: 1, name: 'signup', inputs: {}, steps: [step('fill_1'), step('fill_2'), step('click_3')] } as FlowSpec;
const base = { at: '2026-01-01T00:00:00.000Z', flow_digest: D, inputs_digest: D, prev: null, digest: D };
const drift = (locator: string, fallback: string) => ({
  code: 'drift',
  message: `fill: primary ${locator} matched 0; fallback ${fallback} matched`,
  data: {
    matched: fallback,
    tried: [
      { locator, count: 0 },
      { locator: fallback, count: 1 },
    ],
  },
});
const entries = [
  { ...base, seq: 1, event: 'step_started', step: 'fill_1', tool: pin, attempt: 1, input: {}, input_digest: D, provider: 'in-process' },
  {
    ...base,
    seq: 2,
    event: 'step_succeeded',
    step: 'fill_1',
    attempt: 1,
    output: {},
    output_digest: D,
    duration_ms: 40,
    warnings: [drift('css=#name', 'label="Your name"')],
  },
  { ...base, seq: 3, event: 'step_started', step: 'fill_2', tool: pin, attempt: 1, input: {}, input_digest: D, provider: 'in-process' },
  {
    ...base,
    seq: 4,
    event: 'step_succeeded',
    step: 'fill_2',
    attempt: 1,
    output: {},
    output_digest: D,
    duration_ms: 30,
    warnings: [drift('css=#mail', 'label="Email"')],
  },
  { ...base, seq: 5, event: 'step_started', step: 'click_3', tool: pin, attempt: 1, input: {}, input_digest: D, provider: 'in-process' },
  {
    ...base,
    seq: 6,
    event: 'step_failed',
    step: 'click_3',
    attempt: 1,
    error: { code: 'locator_drift', message: 'click: no locator matched exactly one element (tried css=#go: 0)', retryable: false },
    will_retry: false,
  },
  { ...base, seq: 7, event: 'run_finished', status: 'failed' },
] as JournalEntry[];
const HINT =
  'flowctl: hint: the page changed since signup was recorded; re-record it (flowctl record --name signup --task <task> --ops <ops file>) or update the locator';

describe('progress printer: locator drift', () => {
  it('prints each drift in full and the re-record hint once (plain lines)', () => {
    const { io, err } = memoryIO({ stderrTTY: false });
    const p = createProgressPrinter(io, spec);
    for (const e of entries) p.onEntry(e);
    expect(err().split('\n').filter(Boolean)).toEqual([
      'flowctl: [1/3] fill_1 browser/fill@1.0.0 running',
      'flowctl: [1/3] fill_1 succeeded (40 ms), 1 warning(s): drift',
      'flowctl: [1/3] fill_1 drift: fill: primary css=#name matched 0; fallback label="Your name" matched',
      HINT,
      'flowctl: [2/3] fill_2 browser/fill@1.0.0 running',
      'flowctl: [2/3] fill_2 succeeded (30 ms), 1 warning(s): drift',
      'flowctl: [2/3] fill_2 drift: fill: primary css=#mail matched 0; fallback label="Email" matched',
      'flowctl: [3/3] click_3 browser/fill@1.0.0 running',
      'flowctl: [3/3] click_3 failed: locator_drift: click: no locator matched exactly one element (tried css=#go: 0)',
    ]);
  });

  it('keeps the drift lines on screen on a terminal', () => {
    const { io, err } = memoryIO({ stderrTTY: true });
    const p = createProgressPrinter(io, spec);
    for (const e of entries.slice(0, 2)) p.onEntry(e);
    expect(err()).toContain('\nflowctl: [1/3] fill_1 drift: fill: primary css=#name matched 0; fallback label="Your name" matched\n');
    expect(err()).toContain(`${HINT}\n`);
  });

  it('gives the hint on a locator_drift failure when no drift was warned before', () => {
    const { io, err } = memoryIO({ stderrTTY: false });
    const p = createProgressPrinter(io, spec);
    for (const e of entries.slice(4)) p.onEntry(e);
    expect(err().split('\n').filter(Boolean).slice(-1)).toEqual([HINT]);
  });
});
