import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/canonical.js';
import { FlowError } from '../../../src/errors.js';
import { abortError, checkContract, contractDigest, defineTool, isRetryableError, toolError, validateAgainstSchema } from '../../../src/tools/contract.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';
import type { ToolContract } from '../../../src/tools/types.js';

const contract: ToolContract = {
  ref: 'test/echo',
  version: '1.2.3',
  description: 'Echo a name.',
  input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
  output_schema: { type: 'object', properties: { hello: { type: 'string' } }, required: ['hello'], additionalProperties: false },
  capabilities: [],
};

describe('contractDigest', () => {
  it('is the digest of exactly the six contract fields', () => {
    const { ref, version, description, input_schema, output_schema, capabilities } = contract;
    expect(contractDigest(contract)).toBe(digestOf({ ref, version, description, input_schema, output_schema, capabilities }));
    expect(contractDigest({ ...contract, extra: 'ignored' } as ToolContract)).toBe(contractDigest(contract));
  });

  it('does not depend on key order but changes with any field', () => {
    const reordered = Object.fromEntries(Object.entries(contract).reverse()) as unknown as ToolContract;
    expect(contractDigest(reordered)).toBe(contractDigest(contract));
    const variants: Partial<ToolContract>[] = [
      { ref: 'test/echo2' },
      { version: '1.2.4' },
      { description: 'Echo.' },
      { input_schema: { ...contract.input_schema, required: [] } },
      { output_schema: { type: 'object' } },
      { capabilities: ['net'] },
    ];
    const digests = new Set(variants.map((v) => contractDigest({ ...contract, ...v })));
    expect(digests.size).toBe(variants.length);
    expect(digests.has(contractDigest(contract))).toBe(false);
  });
});

describe('checkContract', () => {
  it.each([
    [{ ref: 'NoSlash' }, 'ref'],
    [{ version: '1.0' }, 'version'],
    [{ description: ' ' }, 'description'],
    [{ capabilities: ['net', 'net'] }, 'duplicates'],
    [{ capabilities: ['disk'] }, 'unknown capability'],
    [{ input_schema: { type: 'string' } }, 'root type "object"'],
    [{ output_schema: { type: 'object', properties: { a: { type: 'nope' } } } }, 'output_schema'],
  ])('refuses %j', (patch, words) => {
    const bad = { ...contract, ...patch } as ToolContract;
    const err = (() => {
      try {
        checkContract(bad);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(FlowError);
    expect((err as FlowError).code).toBe('invalid_contract');
    expect((err as FlowError).message).toContain(words);
  });
});

describe('validateAgainstSchema', () => {
  const schema = {
    type: 'object',
    properties: {
      url: { type: 'string' },
      method: { enum: ['GET', 'POST'] },
      items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
    },
    required: ['url'],
    additionalProperties: false,
  };

  it('accepts a valid value', () => {
    expect(validateAgainstSchema(schema, { url: 'x', items: [{ id: 1 }] })).toEqual({ ok: true, issues: [] });
  });

  it('reports every issue with a dotted path', () => {
    const r = validateAgainstSchema(schema, { method: 'PUT', items: [{ id: 1 }, { id: 'two' }], extra: 1 });
    expect(r.ok).toBe(false);
    expect(r.issues).toEqual(
      expect.arrayContaining([
        { path: 'url', message: 'is required' },
        { path: 'extra', message: 'is not an allowed property' },
        { path: 'method', message: 'must be one of "GET", "POST"' },
        { path: 'items[1].id', message: 'must be integer' },
      ]),
    );
    expect(r.issues).toHaveLength(4);
  });

  it('uses draft 2020-12 keywords (prefixItems)', () => {
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false };
    expect(validateAgainstSchema(tuple, ['a', 1]).ok).toBe(true);
    expect(validateAgainstSchema(tuple, ['a', 'b']).ok).toBe(false);
    expect(validateAgainstSchema(tuple, ['a', 1, 2]).ok).toBe(false);
  });

  it('gives the same answers from its cache for an equal schema object', () => {
    const copy = JSON.parse(JSON.stringify(schema));
    expect(validateAgainstSchema(copy, {}).issues).toEqual(validateAgainstSchema(schema, {}).issues);
  });

  it('throws invalid_schema for a schema Ajv cannot compile', () => {
    expect(() => validateAgainstSchema({ type: 'banana' }, 1)).toThrow(expect.objectContaining({ code: 'invalid_schema' }));
  });
});

describe('defineTool', () => {
  const tool = defineTool<{ name: string }, unknown>(contract, async (input) => (input.name === 'bad' ? { hello: 1 } : { hello: input.name }));

  it('freezes the contract', () => {
    expect(Object.isFrozen(tool.contract)).toBe(true);
    expect(Object.isFrozen(tool.contract.input_schema)).toBe(true);
    expect(contractDigest(tool.contract)).toBe(contractDigest(contract));
  });

  it('runs with valid input', async () => {
    await expect(tool.run({ name: 'ada' }, createTestToolContext())).resolves.toEqual({ hello: 'ada' });
  });

  it('refuses invalid input before running, not retryable', async () => {
    const err = await tool.run({ name: 3 }, createTestToolContext()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'invalid_tool_input', data: { retryable: false, issues: [{ path: 'name', message: 'must be string' }] } });
  });

  it('refuses output that breaks the contract', async () => {
    await expect(tool.run({ name: 'bad' }, createTestToolContext())).rejects.toMatchObject({ code: 'invalid_tool_output' });
  });
});

describe('error helpers', () => {
  it('carry retryable in data', () => {
    expect(isRetryableError(toolError('x', 'm', { retryable: true }))).toBe(true);
    expect(isRetryableError(toolError('x', 'm', { retryable: false }))).toBe(false);
    expect(isRetryableError(new Error('plain'))).toBe(false);
  });

  it('abortError keeps a FlowError reason, maps timeouts, else aborted', () => {
    const reason = new FlowError('step_timeout', 'late');
    const c1 = new AbortController();
    c1.abort(reason);
    expect(abortError(c1.signal, 't')).toBe(reason);
    const c2 = new AbortController();
    c2.abort(new DOMException('t', 'TimeoutError'));
    expect(abortError(c2.signal, 't')).toMatchObject({ code: 'step_timeout', data: { retryable: true } });
    const c3 = new AbortController();
    c3.abort();
    expect(abortError(c3.signal, 't')).toMatchObject({ code: 'aborted', data: { retryable: false } });
  });
});
