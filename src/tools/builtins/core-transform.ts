import { defineTool } from '../contract.js';

/**
 * `core/transform`: returns `value` unchanged. The runner has already evaluated the flow's expressions
 * in the arguments, so this is how a flow builds an object or picks values into a new shape.
 */
export const coreTransform = defineTool<{ value: unknown }, { value: unknown }>(
  {
    ref: 'core/transform',
    version: '1.0.0',
    description: 'Return `value` as given (after the flow has evaluated its expressions): builds objects and reshapes data.',
    input_schema: {
      type: 'object',
      properties: { value: { description: 'Any JSON value.' } },
      required: ['value'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: { value: {} },
      required: ['value'],
      additionalProperties: false,
    },
    capabilities: [],
  },
  async (input) => ({ value: input.value }),
);
