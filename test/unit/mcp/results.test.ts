import { describe, expect, it } from 'vitest';
import { toolTitle } from '../../../src/mcp/presentation.js';
import { argumentIssues, failedRunResult, invalidInputsResult, META } from '../../../src/mcp/results.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { batchRevision, claimsModernRevision } from '../../../src/service/routes/mcp.js';

// The pieces both MCP servers share: the result vocabulary, titles, and the batch rule's revision.

const textOf = (r: { content: unknown[] }) => JSON.parse((r.content[0] as { text: string }).text);

describe('MCP results (src/mcp/results.ts)', () => {
  it('invalid_inputs: a message listing every issue, and the issues', () => {
    const r = invalidInputsResult('greet', [
      { path: 'who', message: 'must be string' },
      { path: '', message: 'the arguments must be an object' },
    ]);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toEqual({
      error: {
        code: 'invalid_inputs',
        message: '[flowctl] [mcp] arguments of greet violate its inputs contract; no run started: who must be string; the arguments must be an object',
        issues: [
          { path: 'who', message: 'must be string' },
          { path: '', message: 'the arguments must be an object' },
        ],
      },
    });
  });

  it('argument issues name undeclared arguments and secret inputs, never echoing a value', () => {
    const shape = {
      inputSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'], additionalProperties: false },
      secretInputs: ['token'],
    };
    expect(argumentIssues('greet', shape, { who: 'Ada' })).toEqual([]);
    expect(argumentIssues('greet', shape, [])).toEqual([{ path: '', message: 'the arguments must be an object' }]);
    const issues = argumentIssues('greet', shape, { who: 1, token: 'hunter2', other: true });
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'who' }),
        { path: 'token', message: 'is a secret input: it resolves from the secret store and is never an argument' },
        { path: 'other', message: 'is not an input of flow "greet"' },
      ]),
    );
    expect(JSON.stringify(issues)).not.toContain('hunter2');
  });

  it('a failed run: code, message, run_id, status, step and flow_digest from the journal, and the _meta keys', () => {
    const base = { seq: 0, at: '2026-01-01T00:00:00Z', flow_digest: 'sha256:abc', inputs_digest: 'sha256:def' };
    const journal = [
      {
        ...base,
        event: 'step_failed',
        step: 'open',
        attempt: 1,
        error: { code: 'navigation_failed', message: 'refused', retryable: false },
        will_retry: false,
      },
      { ...base, event: 'run_finished', status: 'failed', error: { code: 'navigation_failed', message: 'refused', retryable: false, step: 'open' } },
    ] as unknown as JournalEntry[];
    const r = failedRunResult('go', { id: 'r1', status: 'failed', flow_digest: 'sha256:abc', journal });
    expect(textOf(r)).toEqual({
      error: {
        code: 'navigation_failed',
        message: '[flowctl] [mcp] run r1 of go failed at step open: refused',
        run_id: 'r1',
        status: 'failed',
        step: 'open',
        flow_digest: 'sha256:abc',
      },
    });
    expect(r._meta).toEqual({ [META.runId]: 'r1', [META.status]: 'failed', [META.flowDigest]: 'sha256:abc' });
    // A canceled run without an error entry still names its run.
    expect(textOf(failedRunResult('go', { id: 'r2', status: 'canceled', flow_digest: 'sha256:abc', journal: [] })).error).toEqual({
      code: 'run_canceled',
      message: '[flowctl] [mcp] run r2 of go canceled',
      run_id: 'r2',
      status: 'canceled',
      flow_digest: 'sha256:abc',
    });
  });

  it('tool titles are the name as words', () => {
    expect(toolTitle('example-forecast')).toBe('Example forecast');
    expect(toolTitle('read_title.v2')).toBe('Read title v2');
    expect(toolTitle('x')).toBe('X');
    expect(toolTitle('--')).toBe('--');
  });

  it('the revision a batch is sent under: header, else the initialize it holds, else 2025-03-26', () => {
    expect(batchRevision('2025-06-18', [])).toBe('2025-06-18');
    expect(batchRevision('1999-01-01', [])).toBeUndefined(); // left to the SDK's unsupported-version answer
    expect(batchRevision(undefined, [{ method: 'tools/list' }])).toBe('2025-03-26');
    expect(batchRevision(undefined, [{ method: 'initialize', params: { protocolVersion: '2024-11-05' } }])).toBe('2024-11-05');
    expect(batchRevision(undefined, [{ method: 'initialize', params: { protocolVersion: '2030-01-01' } }])).toBe('2025-11-25');
    expect(batchRevision(undefined, [null, 3])).toBe('2025-03-26');
  });
});

describe('which requests go to revision 2026-07-28 (claimsModernRevision)', () => {
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
  it('the header or the _meta envelope claims it; the 2025-era handshake and junk do not', () => {
    expect(claimsModernRevision('2026-07-28', undefined)).toBe(true);
    expect(claimsModernRevision(undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } })).toBe(true);
    expect(claimsModernRevision(undefined, [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: envelope } }])).toBe(true);
    expect(claimsModernRevision('2025-11-25', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(false);
    expect(claimsModernRevision(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } })).toBe(false);
    expect(claimsModernRevision(undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 1 } } })).toBe(false);
    for (const junk of [undefined, null, 5, 'x', [], [null], {}, { params: 'x' }, { params: { _meta: null } }])
      expect(claimsModernRevision(undefined, junk)).toBe(false);
  });
});
