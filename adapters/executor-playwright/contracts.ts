import type { Capability, JsonSchema, ToolContract } from '../../src/tools/types.js';
import { FRAME_JSON_SCHEMA, TARGET_JSON_SCHEMA } from '../../src/record/locator.js';

/**
 * Contracts of the browser tools (docs/browser.md, "Tools"). Written by hand, not generated, so their
 * digests only move when we mean them to. Every tool declares `browser`; fill and select also
 * `secrets` (they may be fed a secret input; the compiler keeps `secrets` on a step only when one is);
 * upload also `fs` (it reads the files it sends from the project folder; a run that supplies a file
 * source, `RunOptions.files`, reads them there and needs no `fs`: see `filesFromSource` in tools.ts).
 */

const VERSION = '1.0.0';
const target = TARGET_JSON_SCHEMA as unknown as JsonSchema;
const matched = { type: 'string', description: 'the locator that matched, e.g. testid=login' };

function contract(name: string, description: string, capabilities: Capability[], input: JsonSchema, output: JsonSchema, version = VERSION): ToolContract {
  return {
    ref: `browser/${name}`,
    version,
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
    "Open an http(s) URL in the run's page and wait for its load event.",
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

/**
 * Later versions and tools. The contracts above stay exactly as they are (FlowSpecs pin their
 * digests); a new optional input is a new minor version beside them, so `@1` in a flow without a
 * lock resolves to the newest and a lock (or a Recording's `@1.0`) keeps the old one.
 */
const count = { type: 'integer', minimum: 1, maximum: 3, description: 'clicks in a row: 2 is a double-click (default 1)' };
const button = { type: 'string', enum: ['left', 'right', 'middle'], description: 'default left' };
const key = { type: 'string', minLength: 1, description: 'a key or chord: Enter, Control+A, Shift+Tab (Playwright key names)' };
const frame = FRAME_JSON_SCHEMA as unknown as JsonSchema;
const opens_page = { type: 'boolean', description: 'the action opens a new tab or popup: the run goes on in it' };
const opened = {
  type: 'object',
  description: 'the page the action opened (with opens_page): its index in opening order and its URL',
  properties: { page: { type: 'integer', minimum: 1 }, url: { type: 'string' } },
  required: ['page', 'url'],
  additionalProperties: false,
};

/** A 1.0.0 contract as version 1.1.0 with `frame` (and for an action, `opens_page` in and `opened` out). */
function withFrame(base: ToolContract, action: boolean): ToolContract {
  const input = base.input_schema as { properties: Record<string, unknown> };
  const output = base.output_schema as { properties: Record<string, unknown> };
  return {
    ...base,
    version: '1.1.0',
    description: `${base.description} frame: the iframe (or nested iframes) the target lives in.${action ? ' opens_page: the action opens a new tab or popup, and the run goes on in it.' : ''}`,
    input_schema: { ...base.input_schema, properties: { ...input.properties, frame, ...(action ? { opens_page } : {}) } },
    output_schema: action ? { ...base.output_schema, properties: { ...output.properties, opened } } : base.output_schema,
  };
}

/** extract 1.1.0 also reads text as rendered (innerText) with `text: rendered`. */
function withText(base: ToolContract): ToolContract {
  const input = base.input_schema as { properties: Record<string, unknown> };
  return {
    ...base,
    description: `${base.description} text rendered: the text as rendered (innerText: line breaks of <br>, blocks and preformatted text kept, hidden text left out).`,
    input_schema: {
      ...base.input_schema,
      properties: {
        ...input.properties,
        text: { type: 'string', enum: ['content', 'rendered'], description: 'content (default): text content, whitespace collapsed; rendered: innerText' },
      },
    },
  };
}

export const BROWSER_CONTRACTS_1_1 = {
  click: contract(
    'click',
    'Click the element a target names once it is visible, enabled and stable; count 2 double-clicks, button right or middle.',
    ['browser'],
    { properties: { target, count, button, frame, opens_page }, required: ['target'] },
    { properties: { matched, opened }, required: ['matched'] },
    '1.1.0',
  ),
  fill: withFrame(BROWSER_CONTRACTS.fill, true),
  select: withFrame(BROWSER_CONTRACTS.select, true),
  drag: withFrame(BROWSER_CONTRACTS.drag, true),
  upload: withFrame(BROWSER_CONTRACTS.upload, true),
  extract: withText(withFrame(BROWSER_CONTRACTS.extract, false)),
} as const satisfies Record<string, ToolContract>;

/**
 * extract 1.2.0: `container` (with `all`), the element that holds the list. A list that matches
 * nothing is `[]` when the container is on the page, and `locator_drift` (naming the container) when
 * it is not (docs/browser.md, "Lists").
 */
function withContainer(base: ToolContract): ToolContract {
  const input = base.input_schema as { properties: Record<string, unknown> };
  return {
    ...base,
    version: '1.2.0',
    description: `${base.description} container (with all): the element holding the list; with it present, no match is an empty list.`,
    input_schema: {
      ...base.input_schema,
      properties: {
        ...input.properties,
        container: { ...target, description: 'with all: the element that holds the items; present with no item: []; absent: locator_drift' },
      },
    },
  };
}

export const BROWSER_CONTRACTS_1_2 = {
  extract: withContainer(BROWSER_CONTRACTS_1_1.extract),
} as const satisfies Record<string, ToolContract>;

export const BROWSER_CONTRACTS_NEW = {
  press: contract(
    'press',
    'Press a key or chord on the element a target names (focusing it first), or on the focused element when there is no target.',
    ['browser'],
    { properties: { key, target, frame, opens_page }, required: ['key'] },
    { properties: { matched: { type: ['string', 'null'], description: 'the locator that matched; null without a target' }, opened }, required: ['matched'] },
  ),
  hover: contract(
    'hover',
    'Move the mouse over the element a target names once it is visible and stable.',
    ['browser'],
    { properties: { target, frame, opens_page }, required: ['target'] },
    { properties: { matched, opened }, required: ['matched'] },
  ),
  check: contract(
    'check',
    'Check the checkbox or radio button a target names; one already checked stays checked.',
    ['browser'],
    { properties: { target, frame, opens_page }, required: ['target'] },
    { properties: { matched, opened }, required: ['matched'] },
  ),
  uncheck: contract(
    'uncheck',
    'Uncheck the checkbox a target names; one already unchecked stays unchecked.',
    ['browser'],
    { properties: { target, frame, opens_page }, required: ['target'] },
    { properties: { matched, opened }, required: ['matched'] },
  ),
  wait: contract(
    'wait',
    'Wait, bounded, until the element a target names is visible (default), hidden or gone (state hidden), or a visible one contains a text.',
    ['browser'],
    {
      properties: {
        target,
        frame,
        state: { type: 'string', enum: ['visible', 'hidden'] },
        text: { type: 'string', minLength: 1, description: 'a visible match must contain this text (case-sensitive); with state hidden, wait until none does' },
        timeout_ms: { type: 'integer', minimum: 1, maximum: 600000, description: "default: the rest of the step's budget" },
      },
      required: ['target'],
    },
    {
      properties: {
        state: { type: 'string', enum: ['visible', 'hidden'] },
        matched: { type: 'string', description: 'state visible: the locator with a visible match' },
      },
      required: ['state'],
    },
  ),
  switch: contract(
    'switch',
    'Go on in an earlier page of the run, by its index in opening order (0 = the first).',
    ['browser'],
    { properties: { page: { type: 'integer', minimum: 0 } }, required: ['page'] },
    { properties: { page: { type: 'integer' }, url: { type: 'string' } }, required: ['page', 'url'] },
  ),
} as const satisfies Record<string, ToolContract>;

export type BrowserToolName = keyof typeof BROWSER_CONTRACTS | keyof typeof BROWSER_CONTRACTS_NEW;
