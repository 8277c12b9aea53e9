import { canonicalJson } from '../../canonical.js';
import { defineTool, toolError } from '../contract.js';

/**
 * `core/assert`: stop the flow when a condition does not hold.
 *
 * Two forms (exactly one): `{that}` holds when `that` is truthy, where false, null, 0 and "" are falsy
 * and every object and array is truthy; `{actual, expected}` holds when both are deeply equal (same
 * canonical JSON, so key order does not matter). A failure throws `assertion_failed` (not retryable).
 */
type AssertInput = { that?: unknown; actual?: unknown; expected?: unknown; message?: string };

function truthy(v: unknown): boolean {
  return !(v === false || v === null || v === 0 || v === '' || v === undefined);
}

export const coreAssert = defineTool<AssertInput, { ok: true }>(
  {
    ref: 'core/assert',
    version: '1.0.0',
    description: 'Fail the step with `assertion_failed` unless `that` is truthy, or unless `actual` deeply equals `expected`.',
    input_schema: {
      type: 'object',
      properties: {
        that: { description: 'Holds when truthy (false, null, 0 and "" are falsy).' },
        actual: { description: 'Compared with `expected` by canonical JSON.' },
        expected: {},
        message: { type: 'string', description: 'Said when the assertion fails.' },
      },
      oneOf: [{ required: ['that'] }, { required: ['actual', 'expected'] }],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: { ok: { const: true } },
      required: ['ok'],
      additionalProperties: false,
    },
    capabilities: [],
  },
  async (input) => {
    const label = input.message ?? 'assertion failed';
    if ('that' in input) {
      if (!truthy(input.that)) {
        throw toolError('assertion_failed', `[flowctl] [core/assert] ${label}: value is ${JSON.stringify(input.that)}`, {
          retryable: false,
          data: { that: input.that },
        });
      }
    } else if (canonicalJson(input.actual) !== canonicalJson(input.expected)) {
      throw toolError('assertion_failed', `[flowctl] [core/assert] ${label}: expected ${canonicalJson(input.expected)}, got ${canonicalJson(input.actual)}`, {
        retryable: false,
        data: { actual: input.actual, expected: input.expected },
      });
    }
    return { ok: true };
  },
);
