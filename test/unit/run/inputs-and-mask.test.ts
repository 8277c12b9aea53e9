import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/canonical.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { resolveInputs } from '../../../src/run/inputs.js';
import { SecretMask } from '../../../src/secrets/mask.js';
import { mentionsRef } from '../../../src/secrets/refs.js';

const spec = {
  flowspec: 1,
  name: 'inputs',
  steps: [],
  inputs: {
    user: {
      type: 'object',
      required: true,
      secret: false,
      schema: { type: 'object', properties: { email: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['email'] },
    },
    size: { type: 'integer', required: false, secret: false, default: 10, schema: { type: 'integer', minimum: 1 } },
    note: { type: 'string', required: false, secret: false, schema: { type: 'string' } },
    key: { type: 'string', required: false, secret: true, schema: { type: 'string' } },
  },
} as unknown as FlowSpec;

describe('resolveInputs', () => {
  it('applies defaults and secret references, leaves optional inputs absent, and digests the result', () => {
    const r = resolveInputs(spec, { user: { email: 'a@b.c' } });
    expect(r.inputs).toEqual({ user: { email: 'a@b.c' }, size: 10, key: 'secret:key' });
    expect(r.inputs_digest).toBe(digestOf(r.inputs));
    expect(resolveInputs(spec, { user: { email: 'x' }, key: 'secret:vault/key-2' }, { allowSecretRefs: true }).inputs.key).toBe('secret:vault/key-2');
  });

  it('lists every issue with its path', () => {
    try {
      resolveInputs(spec, { user: { tags: [1] }, size: 0, key: 42, extra: 'x' });
      throw new Error('should fail');
    } catch (err) {
      expect((err as { code: string }).code).toBe('invalid_inputs');
      expect((err as { data: { issues: unknown } }).data.issues).toEqual([
        { path: 'extra', message: 'is not a declared input of flow "inputs"' },
        { path: 'user.email', message: 'is required' },
        { path: 'user.tags[0]', message: 'must be string' },
        { path: 'size', message: 'must be >= 1' },
        { path: 'key', message: 'is a secret input: pass a reference secret:<name>, never the value itself' },
      ]);
    }
    expect(() => resolveInputs(spec, [] as never)).toThrow(/must be a JSON object/);
  });
});

describe('SecretMask', () => {
  it('masks every occurrence, inside strings, keys and nested values, longest value first', () => {
    const mask = new SecretMask();
    mask.add('abc');
    mask.add('abcdef');
    mask.add('');
    expect(mask.size).toBe(2);
    expect(mask.maskString('x abcdef y abc z')).toBe('x *** y *** z');
    expect(mask.mask({ abc: ['abcabc', 1, null, { u: 'https://h/?k=abc' }] })).toEqual({ '***': ['******', 1, null, { u: 'https://h/?k=***' }] });
    expect(mask.maskError(new Error('token abc rejected'))).toBe('token *** rejected');
  });

  it('finds whole references only', () => {
    expect(mentionsRef('Bearer secret:a', 'secret:a')).toBe(true);
    expect(mentionsRef('secret:ab', 'secret:a')).toBe(false);
    expect(mentionsRef('secret:ab and secret:a!', 'secret:a')).toBe(true);
  });
});
