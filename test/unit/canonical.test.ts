import fc from 'fast-check';
import stringify from 'fast-json-stable-stringify';
import { describe, expect, it } from 'vitest';
import { canonicalJson, deepFreeze, digestOf, inCanonicalForm } from '../../src/canonical.js';
import { entryDigest, sealEntry, sealEntryText } from '../../src/run/journal.js';

// Keys that stress ordering: integer-like keys (objects list them first, numerically), prefixes,
// non-ASCII and astral characters (UTF-16 order), the empty key.
const key = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('0', '1', '9', '10', '01', '-1', '4294967294', '4294967295', 'a', 'aa', 'B', 'é', '😀', '\uffff', ''),
);
const jsonish = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, undefined, Number.NaN, -0, Infinity),
    fc.double(),
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
    fc.date({ noInvalidDate: true }),
  ),
})).value;

describe('canonicalJson', () => {
  it('gives exactly the bytes of fast-json-stable-stringify, on the fast path and off it', () => {
    fc.assert(
      fc.property(jsonish, (v) => {
        expect(canonicalJson(v === undefined ? null : v)).toBe(stringify(v === undefined ? null : v));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts integer-like keys as strings, as Array#sort does', () => {
    expect(canonicalJson({ 10: 'a', 9: 'b', x: 1 })).toBe('{"10":"a","9":"b","x":1}');
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
  });

  it('rejects cyclic values with a TypeError', () => {
    const a: Record<string, unknown> = { a: 1 };
    a.self = a;
    expect(() => canonicalJson(a)).toThrow(TypeError);
  });

  it('serialises values deeper than the fast path the same way', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = { z: i, a: deep };
    expect(canonicalJson(deep)).toBe(stringify(deep));
  });
});

describe('inCanonicalForm', () => {
  it('keeps the JSON value and its canonical bytes', () => {
    fc.assert(
      fc.property(jsonish, (v) => {
        const value = v === undefined ? null : v;
        const form = inCanonicalForm(value);
        expect(canonicalJson(form)).toBe(stringify(value));
        expect(JSON.parse(JSON.stringify(form))).toEqual(JSON.parse(stringify(value)));
        expect(canonicalJson(inCanonicalForm(form))).toBe(canonicalJson(form));
      }),
      { numRuns: 1000 },
    );
  });

  it('returns a value already in canonical order as it is, and never changes its argument', () => {
    const sorted = { a: [1, { b: 2, c: 3 }], d: 'x' };
    expect(inCanonicalForm(sorted)).toBe(sorted);
    const unsorted = { d: 'x', a: { c: 3, b: 2 }, u: undefined };
    const form = inCanonicalForm(unsorted);
    expect(Object.keys(form)).toEqual(['a', 'd']);
    expect(Object.keys(form.a)).toEqual(['b', 'c']);
    expect(Object.keys(unsorted)).toEqual(['d', 'a', 'u']);
  });
});

describe('deepFreeze', () => {
  it('freezes every level, also past the fast-path depth, and ends on cycles', () => {
    let deep: Record<string, unknown> = { leaf: { x: 1 } };
    for (let i = 0; i < 100; i++) deep = { next: deep };
    deepFreeze(deep);
    let node: Record<string, unknown> | undefined = deep;
    while (node) {
      expect(Object.isFrozen(node)).toBe(true);
      node = (node.next ?? node.leaf) as Record<string, unknown> | undefined;
      if (node && 'x' in node) {
        expect(Object.isFrozen(node)).toBe(true);
        break;
      }
    }
    const cyclic: Record<string, unknown> = { a: { b: 1 } };
    cyclic.self = cyclic;
    expect(deepFreeze(cyclic)).toBe(cyclic);
    expect(Object.isFrozen(cyclic.a)).toBe(true);
  });
});

describe('sealEntry', () => {
  const unsealed = {
    event: 'step_succeeded',
    step: 's',
    attempt: 1,
    output: { z: 1, a: { y: [{ q: 1, p: 2 }] }, 10: 'ten', 9: 'nine' },
    output_digest: digestOf({ z: 1 }),
    at: '2026-01-01T00:00:00.000Z',
    flow_digest: `sha256:${'a'.repeat(64)}`,
    inputs_digest: `sha256:${'b'.repeat(64)}`,
    seq: 0,
    prev: null,
  };

  it('puts at and digest first, then the members in canonical order, and its digest is its entryDigest', () => {
    const entry = sealEntry(unsealed as never);
    const keys = Object.keys(entry);
    expect(keys.slice(0, 2)).toEqual(['at', 'digest']);
    expect(keys.slice(2)).toEqual([...keys.slice(2)].sort());
    expect(entry.digest).toBe(entryDigest(entry));
    // The digest does not depend on the key order the entry was written in.
    const { at: _at, digest: _d, ...rest } = entry as unknown as Record<string, unknown>;
    expect(entry.digest).toBe(digestOf(Object.fromEntries(Object.entries(rest).reverse())));
  });

  it('gives the JSON text of exactly the sealed entry, one line, members in canonical order', () => {
    const { entry, text } = sealEntryText(unsealed as never);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(entry)));
    expect(text).not.toContain('\n');
    const { at: _at, digest: _d, ...rest } = JSON.parse(text) as Record<string, unknown>;
    expect(text.endsWith(canonicalJson(rest).slice(1))).toBe(true);
  });

  it('seals entries with members outside the journal format too, in canonical order', () => {
    const { entry, text } = sealEntryText({ ...unsealed, zeta: { b: 1, a: 2 }, alpha: true } as never);
    expect(entry.digest).toBe(entryDigest(entry));
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(entry)));
    expect(Object.keys(entry).slice(2)[0]).toBe('alpha');
  });
});
