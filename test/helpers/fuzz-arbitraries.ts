import fc from 'fast-check';

/**
 * fast-check arbitraries for fuzzing an HTTP API from its OpenAPI document (test/e2e/hosted-fuzz.test.ts):
 * values that follow a JSON Schema most of the time and break it in every way a hostile client would
 * (wrong types, huge and unicode strings, nested junk, missing and extra fields), plus request
 * bodies that are not JSON at all. Written here because the schema walk is small and the generator
 * packages (zod-fast-check, json-schema-faker) produce only valid values.
 */

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};

/** Strings that break parsers, matchers and path handling. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  '..',
  '../../etc/passwd',
  '%00',
  '%2e%2e%2f',
  '%ZZ',
  '\\',
  '{id}',
  'null',
  'undefined',
  '0',
  '-1',
  'NaN',
  'true',
  "' OR '1'='1",
  '"; drop table svc_users; --',
  '<script>alert(1)</script>',
  '${inputs.x}',
  '{{ who }}',
  '__proto__',
  'constructor',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  '\ud800',
  '\udfff',
  '😀🔑🇫🇷',
  'é\u0301',
  '\u2028\u2029',
  '\r\nx-injected: 1',
  'a'.repeat(201),
  'x'.repeat(5000),
  '0'.repeat(64),
  '1e309',
  `sha256:${'0'.repeat(64)}`,
  `svc_live_${'A'.repeat(40)}`,
];

/** A string of any kind: short, unicode, nasty, or huge (up to about 300 k characters). */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', 'é', '😀', '\\', '"', '%'), fc.integer({ min: 1_000, max: 300_000 })).map(([c, n]) => c.repeat(n)) },
);

/** Deeply nested arrays or objects (a recursive validator or serializer must not blow its stack). */
export const deepValue: fc.Arbitrary<unknown> = fc.tuple(fc.integer({ min: 100, max: 3_000 }), fc.boolean()).map(([depth, arrays]) => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
});

/** Any JSON value, including the odd ones (deep ones come from bodyArb, at the top). */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: anyString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, [], {}, [null], { '': '' }) },
);

function resolve(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) s = components[s.$ref.replace('#/components/schemas/', '')] ?? {};
  return s;
}

export interface SchemaArbOptions {
  components: Record<string, JsonSchema>;
  /**
   * Values worth trying for a property of this name (ids of both orgs, emails, cron expressions), or
   * for a schema with no type (`captured_ops` items): tried beside the schema's own values.
   */
  extra: (property: string) => fc.Arbitrary<unknown> | undefined;
}

/**
 * A value for `schema`: valid-looking most of the time, else junk of any type. Objects get a random
 * subset of their properties (required ones missing too) and sometimes extra ones.
 */
export function schemaArb(schema: JsonSchema, options: SchemaArbOptions, property = '', depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, options.components);
  const extra = options.extra(property);
  const fromPool = extra ? [{ weight: 3, arbitrary: extra }] : [];
  const junk = { weight: 1, arbitrary: depth > 3 ? fc.jsonValue({ maxDepth: 1 }) : junkValue };
  const alts = s.anyOf ?? s.oneOf ?? s.allOf;
  if (alts && alts.length > 0) return fc.oneof(...alts.map((a) => schemaArb(a, options, property, depth + 1)), junk);
  if (s.enum && s.enum.length > 0) {
    const variants = s.enum.flatMap((e) => (typeof e === 'string' ? [e, e.toUpperCase(), ` ${e}`] : [e]));
    return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...s.enum) }, { weight: 1, arbitrary: fc.constantFrom(...variants) }, ...fromPool, junk);
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string': {
      const sized = fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });
      const edges = [
        s.minLength !== undefined ? 'x'.repeat(Math.max(0, s.minLength - 1)) : undefined,
        s.maxLength !== undefined && s.maxLength < 2_000_000 ? 'y'.repeat(s.maxLength + 1) : undefined,
      ].filter((x): x is string => x !== undefined);
      const matching = s.pattern
        ? [{ weight: 4, arbitrary: fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length <= (s.maxLength ?? 200) && x.length >= (s.minLength ?? 0)) }]
        : [];
      return fc.oneof(
        { weight: 3, arbitrary: sized },
        ...matching,
        { weight: 2, arbitrary: anyString },
        ...(edges.length ? [{ weight: 1, arbitrary: fc.constantFrom(...edges) }] : []),
        ...fromPool,
        junk,
      );
    }
    case 'integer':
    case 'number': {
      const lo = s.minimum ?? -1_000;
      const hi = s.maximum ?? 1_000;
      return fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: Math.max(lo, -1e9), max: Math.min(hi, 1e9) }) },
        { weight: 2, arbitrary: fc.constantFrom(lo - 1, hi + 1, 0, -1, 0.5, 1e21, -1e21, Number.MAX_SAFE_INTEGER + 2) },
        { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
        { weight: 1, arbitrary: fc.constantFrom('1', '10', '1e3', '') },
        ...fromPool,
        junk,
      );
    }
    case 'boolean':
      return fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: fc.constantFrom('true', 1, 0, 'false', null) }, junk);
    case 'array': {
      const item = s.items ? schemaArb(s.items, options, property, depth + 1) : junkValue;
      return fc.oneof(
        { weight: 4, arbitrary: fc.array(item, { maxLength: Math.min(s.maxItems ?? 5, 5) }) },
        ...(s.maxItems !== undefined && s.maxItems <= 2_000
          ? [{ weight: 1, arbitrary: fc.constant(null).map(() => Array.from({ length: s.maxItems! + 1 }, () => 'a')) }]
          : []),
        ...fromPool,
        junk,
      );
    }
    case 'object': {
      if (depth > 4) return fc.constant({});
      const props = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, schemaArb(v, options, k, depth + 1)]));
      const record = fc.oneof(
        { weight: 2, arbitrary: fc.record(props, { requiredKeys: (s.required ?? []).filter((k) => k in props) }) },
        { weight: 1, arbitrary: fc.record(props, { requiredKeys: [] }) },
      );
      const extra = fc.dictionary(
        fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'org_id', 'id', 'role', 'secret', 'value')),
        junkValue,
        { maxKeys: 3 },
      );
      const additional =
        s.additionalProperties && typeof s.additionalProperties === 'object'
          ? fc.dictionary(fc.string({ maxLength: 20 }), schemaArb(s.additionalProperties, options, property, depth + 1), { maxKeys: 4 })
          : undefined;
      return fc.oneof(
        { weight: 6, arbitrary: record },
        { weight: 2, arbitrary: fc.tuple(record, extra).map(([a, b]) => ({ ...b, ...a })) },
        ...(additional ? [{ weight: 3, arbitrary: additional }] : []),
        ...fromPool,
        junk,
      );
    }
    default:
      return fc.oneof(...fromPool, junk);
  }
}

/** A request body as bytes on the wire: the JSON of `value`, or text that is not a JSON object at all. */
export function bodyArb(value: fc.Arbitrary<unknown>): fc.Arbitrary<string | Uint8Array | undefined> {
  const enc = new TextEncoder();
  return fc.oneof(
    { weight: 30, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        'null',
        '[]',
        '"x"',
        '42',
        'true',
        '{',
        '{"a":',
        '{"a":1,}',
        "{'a':1}",
        '{"a":1}{"b":2}',
        '\ufeff{}',
        '{"a":"\\ud800"}',
        '{"a":1e999}',
      ),
    },
    { weight: 1, arbitrary: fc.tuple(value, fc.integer({ min: 1, max: 40 })).map(([v, cut]) => (JSON.stringify(v) ?? 'null').slice(0, -cut)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, ...b, 0xff, 0xfe, 0x22, 0x7d])) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(value, deepValue)
        .map(([v, deep]) => JSON.stringify(v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, deep } : { deep })),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 50_000 }).map((n) => `{"a":${'{"b":'.repeat(n)}1${'}'.repeat(n)}}`) },
    // Over the 1 MiB body limit.
    { weight: 1, arbitrary: fc.constant(null).map(() => enc.encode(`{"a":"${'z'.repeat(1024 * 1024 + 10)}"}`)) },
  );
}

/** A Content-Type header, mostly JSON. */
export const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/json; charset=latin1',
      'application/json;',
      'application/json; charset',
      'application/x_y+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '',
      'application/jsonx',
      '*/*',
    ),
  },
);
