import { RESOURCE_MIME_TYPE as EXT_APPS_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { describe, expect, it } from 'vitest';
import { META, RUN_VIEW_URI, toolMeta } from '../../../src/mcp/results.js';
import {
  MAX_VIEW_SCREENSHOT_BYTES,
  queuedView,
  RESOURCE_MIME_TYPE,
  readRunViewResource,
  RUN_VIEW_RESOURCE,
  runView,
  withRunView,
} from '../../../src/mcp/run-view.js';
import type { JournalEntry } from '../../../src/run/types.js';

// The MCP Apps run view (src/mcp/run-view.ts): what a result carries for the app, from the journal.

const pin = (ref: string) => ({ ref, version: '1.0.0', contract_digest: 'sha256:c' as never });
const base = { run_id: 'r1', ts: '2026-11-26T00:00:00.000Z', seq: 0, prev_hash: '', hash: '' } as const;
const entries = (list: Record<string, unknown>[]) => list.map((e, i) => ({ ...base, seq: i, ...e }) as unknown as JournalEntry);

describe('run view (src/mcp/run-view.ts)', () => {
  it('serves the app with the media type the ext-apps SDK defines', () => {
    expect(RESOURCE_MIME_TYPE).toBe(EXT_APPS_MIME_TYPE);
  });

  it('the step timeline: a retried step ends as its last attempt, skipped steps listed, the run error kept', async () => {
    const journal = entries([
      { event: 'run_started', flow_name: 'f', inputs: {}, contracts: [] },
      { event: 'step_started', step: 'open', tool: pin('browser/navigate'), attempt: 1, input: {}, input_digest: 'sha256:i', provider: 'p' },
      { event: 'step_succeeded', step: 'open', attempt: 1, output: {}, output_digest: 'sha256:o', duration_ms: 12, artifacts: ['sha256:shot1'] },
      { event: 'step_started', step: 'click', tool: pin('browser/click'), attempt: 1, input: {}, input_digest: 'sha256:i', provider: 'p' },
      { event: 'step_failed', step: 'click', attempt: 1, error: { code: 'timeout', message: 'first' }, will_retry: true, duration_ms: 5 },
      { event: 'step_started', step: 'click', tool: pin('browser/click'), attempt: 2, input: {}, input_digest: 'sha256:i', provider: 'p' },
      { event: 'step_failed', step: 'click', attempt: 2, error: { code: 'timeout', message: 'second' }, will_retry: false, duration_ms: 7 },
      { event: 'step_skipped', step: 'read', reason: 'an earlier step failed' },
      { event: 'run_finished', status: 'failed', error: { code: 'timeout', message: 'second', step: 'click' } },
    ]);
    const reads: string[] = [];
    const view = await runView('f', { id: 'r1', status: 'failed', journal }, async (d) => {
      reads.push(d);
      return { bytes: new Uint8Array([1, 2, 3]), mediaType: 'image/jpeg' };
    });
    expect(view).toEqual({
      run_id: 'r1',
      flow: 'f',
      status: 'failed',
      steps: [
        { id: 'open', status: 'succeeded', tool: 'browser/navigate', duration_ms: 12 },
        { id: 'click', status: 'failed', tool: 'browser/click', duration_ms: 7, error: { code: 'timeout', message: 'second' } },
        { id: 'read', status: 'skipped' },
      ],
      error: { code: 'timeout', message: 'second', step: 'click' },
      screenshot: { step: 'open', media_type: 'image/jpeg', data: 'AQID' },
    });
    // Only the last stored screenshot is read.
    expect(reads).toEqual(['sha256:shot1']);
  });

  it('a screenshot too large, or not an image, is not inlined; no reader, no screenshot', async () => {
    const journal = entries([{ event: 'step_succeeded', step: 's', attempt: 1, output: {}, output_digest: 'sha256:o', artifacts: ['sha256:a'] }]);
    const big = await runView('f', { id: 'r', status: 'succeeded', journal }, async () => ({
      bytes: new Uint8Array(MAX_VIEW_SCREENSHOT_BYTES + 1),
      mediaType: 'image/jpeg',
    }));
    expect(big.screenshot).toBeUndefined();
    expect(big.screenshot_omitted).toMatch(/larger than/);
    const other = await runView('f', { id: 'r', status: 'succeeded', journal }, async () => ({ bytes: new Uint8Array(1), mediaType: 'text/html' }));
    expect(other.screenshot).toBeUndefined();
    expect((await runView('f', { id: 'r', status: 'succeeded', journal })).screenshot).toBeUndefined();
  });

  it('results keep their content and _meta, with the view added; a queued call has no steps', () => {
    const r = withRunView({ content: [{ type: 'text', text: 'x' }], _meta: { [META.runId]: 'q1' } }, queuedView('f', 'q1'));
    expect(r).toEqual({
      content: [{ type: 'text', text: 'x' }],
      _meta: { [META.runId]: 'q1', [META.runView]: { run_id: 'q1', flow: 'f', status: 'queued', steps: [] } },
    });
  });

  it('the resource: listed and read as text/html;profile=mcp-app, one URI only; tools link it', () => {
    expect(RUN_VIEW_RESOURCE).toMatchObject({ uri: RUN_VIEW_URI, mimeType: 'text/html;profile=mcp-app' });
    const read = readRunViewResource(RUN_VIEW_URI)!;
    expect(read.contents[0]).toMatchObject({ uri: RUN_VIEW_URI, mimeType: 'text/html;profile=mcp-app', text: expect.stringMatching(/^<!doctype html>/) });
    expect(readRunViewResource('ui://flowctl/other.html')).toBeUndefined();
    expect(toolMeta('sha256:d', [])).toEqual({ [META.flowDigest]: 'sha256:d', ui: { resourceUri: RUN_VIEW_URI }, 'ui/resourceUri': RUN_VIEW_URI });
    expect(toolMeta('sha256:d', ['token'])).toMatchObject({ [META.secretInputs]: ['token'] });
  });
});
