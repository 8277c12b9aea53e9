import { describe, expect, it } from 'vitest';
import { formatStepDetail, formatTimeline, stepDetail, stepViews } from '../../../cli/timeline.js';
import type { JournalEntry, Run } from '../../../src/run/types.js';

const D = `sha256:${'a'.repeat(64)}` as const;
const O = `sha256:${'b'.repeat(64)}` as const;
const base = { flow_digest: D, inputs_digest: D, prev: null, digest: D };
const pin = (ref: string) => ({ ref, version: '1.0.0', contract_digest: D });
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();
const journal = [
  { ...base, seq: 0, at: at(0), event: 'run_started', flow_name: 'shop', inputs: {}, contracts: [] },
  {
    ...base,
    seq: 1,
    at: at(10),
    event: 'step_started',
    step: 'login',
    tool: pin('browser/click'),
    attempt: 1,
    input: { target: '#go' },
    input_digest: D,
    provider: 'in-process',
  },
  {
    ...base,
    seq: 2,
    at: at(12),
    event: 'effect_recorded',
    step: 'login',
    attempt: 1,
    effect: { kind: 'browser', target: 'http://127.0.0.1:1', idempotency_key: 'k1' },
  },
  {
    ...base,
    seq: 3,
    at: at(40),
    event: 'step_succeeded',
    step: 'login',
    attempt: 1,
    output: { matched: 'testid=go' },
    output_digest: O,
    warnings: [{ code: 'drift', message: 'primary #go missed; matched testid=go' }],
  },
  {
    ...base,
    seq: 4,
    at: at(41),
    event: 'step_started',
    step: 'fetch',
    tool: pin('http/request'),
    attempt: 1,
    input: {},
    input_digest: D,
    provider: 'in-process',
  },
  {
    ...base,
    seq: 5,
    at: at(51),
    event: 'step_failed',
    step: 'fetch',
    attempt: 1,
    error: { code: 'http_network', message: 'refused', retryable: true },
    will_retry: true,
  },
  {
    ...base,
    seq: 6,
    at: at(60),
    event: 'step_started',
    step: 'fetch',
    tool: pin('http/request'),
    attempt: 2,
    input: {},
    input_digest: D,
    provider: 'in-process',
  },
  {
    ...base,
    seq: 7,
    at: at(65),
    event: 'step_failed',
    step: 'fetch',
    attempt: 2,
    error: { code: 'http_network', message: 'refused again', retryable: true },
    will_retry: false,
    duration_ms: 3,
  },
  { ...base, seq: 8, at: at(66), event: 'step_skipped', step: 'later', reason: 'condition false' },
  {
    ...base,
    seq: 9,
    at: at(70),
    event: 'run_finished',
    status: 'failed',
    error: { code: 'http_network', message: 'refused again', retryable: true, step: 'fetch' },
  },
] as JournalEntry[];
const run: Run = { id: 'r-1', flow_digest: D, status: 'failed', started_at: at(0), finished_at: at(70), journal };

describe('inspect timeline', () => {
  it('groups the journal by step with attempts, durations (recorded, else from the entries), effects and warnings', () => {
    const views = stepViews(journal);
    expect(views.map((v) => [v.step, v.tool, v.status, v.attempts.length, v.duration_ms])).toEqual([
      ['login', 'browser/click@1.0.0', 'succeeded', 1, 30],
      ['fetch', 'http/request@1.0.0', 'failed', 2, 13],
      ['later', undefined, 'skipped', 0, undefined],
    ]);
    expect(views[0]!.attempts[0]!.effects).toEqual([{ kind: 'browser', target: 'http://127.0.0.1:1', idempotency_key: 'k1' }]);
  });

  it('renders a readable timeline with drift warnings, per-attempt errors and the run error', () => {
    const text = formatTimeline(run);
    expect(text.split('\n')[0]).toBe('run r-1  shop  failed');
    expect(text).toMatch(
      /login +browser\/click@1\.0\.0 +succeeded +1 +30 ms\n {4}effect: browser http:\/\/127\.0\.0\.1:1\n {4}warning: drift: primary #go missed; matched testid=go/,
    );
    expect(text).toMatch(
      /fetch +http\/request@1\.0\.0 +failed +2 +13 ms\n {4}error \(attempt 1\): http_network: refused\n {4}error \(attempt 2\): http_network: refused again/,
    );
    expect(text).toMatch(/later +- +skipped +0 +-\n {4}skipped: condition false/);
    expect(text).toContain('error at step fetch: http_network: refused again');
    expect(text).not.toContain('output:');
  });

  it('one step in full', () => {
    expect(stepDetail(run, 'nope')).toBeUndefined();
    const text = formatStepDetail(stepDetail(run, 'login')!);
    expect(text).toContain('attempt 1: succeeded (30 ms) via in-process');
    expect(text).toContain(`input digest:  ${D}`);
    expect(text).toContain(`output digest: ${O}`);
    expect(text).toContain('"matched": "testid=go"');
    expect(text).toContain('effect: browser http://127.0.0.1:1 (key k1)');
    expect(text).toContain('warning: drift: primary #go missed');
    const failed = formatStepDetail(stepDetail(run, 'fetch')!);
    expect(failed).toContain('error: http_network: refused again (retryable)');
  });
});
