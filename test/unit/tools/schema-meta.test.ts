import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Ajv2020, type SchemaObject } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { validateAgainstSchema } from '../../../src/tools/contract.js';
import { validateMetaSchema } from '../../../src/tools/schema-meta.generated.js';

/** Ajv as contract.ts configured it before the generated meta validator: it checks each schema itself. */
const reference = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });

// Typed loosely: some are not valid schemas on purpose.
const INVALID: SchemaObject[] = [
  { type: 'banana' },
  { type: 'string', minLength: 'x' },
  { type: 'object', properties: { a: { type: 'strin' } } },
  { type: 'object', properties: { a: { items: { minimum: 'no' } } } },
  { $defs: { x: { type: 3 } }, $ref: '#/$defs/x' },
  { required: 'a' },
  { type: ['string', 'nope'] },
  { properties: { a: { properties: { b: { maxItems: -1 } } } } },
  { type: 'object', additionalProperties: { type: 'integer', multipleOf: 0 } },
  { prefixItems: [{ type: 1 }] },
  // biome-ignore lint/suspicious/noThenProperty: a JSON Schema if/then, not a thenable.
  { if: { const: 1 }, then: { minimum: '1' } },
  { unevaluatedProperties: { type: 'x' } },
  { dependentSchemas: { a: { type: 'q' } } },
  { not: { minProperties: -3 } },
  { $anchor: '1bad' },
  { $id: 5 } as unknown as SchemaObject,
  { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'nope' },
];
const VALID: SchemaObject[] = [
  {},
  { type: 'object', required: ['a'], properties: { a: { type: 'string', pattern: '^x' } }, additionalProperties: false },
  { type: 'array', items: { enum: [1, 'a', null] }, minItems: 1, uniqueItems: true },
  { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0 }], description: 'an annotation', format: 'email' },
];

describe('generated 2020-12 meta-schema validator', () => {
  it('schema-meta.generated.ts is fresh', async () => {
    const { schemaMetaSource } = (await import(resolve(import.meta.dirname, '../../../scripts/build-schema-meta.mjs'))) as { schemaMetaSource(): string };
    const committed = await readFile(resolve(import.meta.dirname, '../../../src/tools/schema-meta.generated.ts'), 'utf8');
    expect(committed === schemaMetaSource()).toBe(true);
  });

  it('accepts and rejects what Ajv does, with the same errors', () => {
    for (const schema of [...INVALID, ...VALID]) {
      const expected = reference.validateSchema(schema);
      const expectedText = reference.errorsText(reference.errors);
      expect(validateMetaSchema(schema), JSON.stringify(schema)).toBe(expected);
      expect(reference.errorsText(validateMetaSchema.errors), JSON.stringify(schema)).toBe(expectedText);
    }
  });

  it('validateAgainstSchema throws invalid_schema with the message Ajv gave', () => {
    // `$id: 5` is left out: Ajv's compile failed on it before its meta check ("id.replace is not a
    // function"); the meta check now comes first and says "$id must be string" (the next test).
    for (const schema of INVALID.filter((s) => !('$id' in s))) {
      let ajvMessage = '';
      try {
        new Ajv2020({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
      } catch (err) {
        ajvMessage = (err as Error).message;
      }
      expect(() => validateAgainstSchema(schema, 1)).toThrow(
        expect.objectContaining({ code: 'invalid_schema', message: `[flowctl] [tools] invalid JSON Schema: ${ajvMessage}` }),
      );
    }
  });

  it('a non-string $id is reported by the meta check', () => {
    expect(() => validateAgainstSchema({ $id: 5 }, 1)).toThrow(
      expect.objectContaining({ code: 'invalid_schema', message: '[flowctl] [tools] invalid JSON Schema: schema is invalid: data/$id must be string' }),
    );
  });

  it('a schema of another dialect is still checked, by Ajv', () => {
    expect(() => validateAgainstSchema({ $schema: 'http://example.com/unknown', type: 'string' }, 'x')).toThrow(
      expect.objectContaining({ code: 'invalid_schema' }),
    );
  });
});
