import type { Capability, JsonSchema, ToolContract } from '../../src/tools/types.js';
import { TARGET_JSON_SCHEMA } from '../../src/record/locator.js';

/**
 * Contracts of the browser tools (docs/browser.md, "Tools"). Written by hand, not generated, so their
 * digests only move when we mean them to. Every tool declares `browser`; fill and select also
 * `secrets` (they may be fed a secret input; the compiler keeps `secrets` on a step only when one is);
 * upload also `fs` (it reads the files it sends from the project folder).
 */

const VERSION = '1.0.0';
const target = TARGET_JSON_SCHEMA as unknown as JsonSchema;
const matched = { type: 'string', description: 'the locator that matched, e.g. testid=login' };

function contract(name: string, description: string, capabilities: Capability[], input: JsonSchema, output: JsonSchema): ToolContract {
  return {
    ref: `browser/${name}`,
    version: VERSION,
    description,
    input_schema: { type: 'object', additionalProperties: false, ...input },
    output_schema: { type: 'object', additionalProperties: false, ...output },
    capabilities,
  };
}

const mask = { type: 'boolean', description: 'black out this field in screenshots (set for values from secret inputs)' };
const fileItem = {
  oneOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1 },
        digest: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
        name: { type: 'string', minLength: 1 },
      },
      required: ['path'],
      additionalProperties: false,
    },
  ],
};

export const BROWSER_CONTRACTS = {
  navigate: contract(
    'navigate',
    'Open an http(s) URL in the run\'s page and wait for its load event.',
    ['browser'],
    { properties: { url: { type: 'string', minLength: 1 } }, required: ['url'] },
    { properties: { url: { type: 'string' }, status: { type: ['integer', 'null'] } }, required: ['url', 'status'] },
  ),
  click: contract(
    'click',
    'Click the element a target names once it is visible, enabled and stable.',
    ['browser'],
    { properties: { target }, required: ['target'] },
    { properties: { matched }, required: ['matched'] },
  ),
  fill: contract(
    'fill',
    'Type a value into the input, textarea or contenteditable a target names.',
    ['browser', 'secrets'],
    { properties: { target, value: { type: 'string' }, mask }, required: ['target', 'value'] },
    { properties: { matched }, required: ['matched'] },
  ),
  select: contract(
    'select',
    'Choose options (by value or label) in the <select> a target names.',
    ['browser', 'secrets'],
    {
      properties: {
        target,
        value: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }] },
        mask,
      },
      required: ['target', 'value'],
    },
    { properties: { matched, selected: { type: 'array', items: { type: 'string' } } }, required: ['matched'] },
  ),
  drag: contract(
    'drag',
    'Drag one element onto another (HTML5 drag and drop and pointer-based).',
    ['browser'],
    { properties: { source: target, target }, required: ['source', 'target'] },
    { properties: { source: matched, target: matched }, required: ['source', 'target'] },
  ),
  upload: contract(
    'upload',
    'Set the files of a file input; paths are relative to the project folder, digests are checked when given.',
    ['browser', 'fs'],
    { properties: { target, files: { type: 'array', items: fileItem, minItems: 1 } }, required: ['target', 'files'] },
    {
      properties: {
        matched,
        files: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, digest: { type: 'string' }, size: { type: 'integer' } },
            required: ['name', 'digest', 'size'],
            additionalProperties: false,
          },
        },
      },
      required: ['matched', 'files'],
    },
  ),
  extract: contract(
    'extract',
    'Read the text (whitespace collapsed) or an attribute of the element a target names, or of every match with all.',
    ['browser'],
    {
      properties: { target, attribute: { type: 'string', minLength: 1 }, all: { type: 'boolean' } },
      required: ['target'],
    },
    {
      properties: {
        matched,
        value: { oneOf: [{ type: ['string', 'null'] }, { type: 'array', items: { type: ['string', 'null'] } }] },
      },
      required: ['matched', 'value'],
    },
  ),
} as const satisfies Record<string, ToolContract>;

export type BrowserToolName = keyof typeof BROWSER_CONTRACTS;
