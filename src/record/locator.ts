import { z } from 'zod';

/**
 * Locators: how a browser op names its element. A target is a CSS selector string or a locator object
 * with any of the strategies (`css`, `testid`, `role` (+ optional `name`), `text`, `label`, `xpath`) and
 * optional `fallbacks`, more strategy objects tried in order when the primary fails (locator drift).
 * An object with several strategies is several ways to find one element: normalizeTarget splits it
 * into a primary (the first in STRATEGY_KEYS order) and fallbacks (the others, then the explicit ones).
 * See docs/recordings.md ("Targets").
 */

/** One way to find an element: after normalization exactly one strategy key is set (`name` goes with `role`). */
export interface LocatorStrategy {
  css?: string;
  testid?: string;
  role?: string;
  /** Accessible name, with `role` only. */
  name?: string;
  text?: string;
  label?: string;
  xpath?: string;
}

/** A normalized target: a primary strategy plus its fallbacks (absent when there are none). */
export interface Locator extends LocatorStrategy {
  fallbacks?: LocatorStrategy[];
}

/** What an ops file or a tool input may give: a CSS string or a locator object. */
export type TargetInput = string | Locator;

export const STRATEGY_KEYS = ['css', 'testid', 'role', 'text', 'label', 'xpath'] as const;
export type StrategyKey = (typeof STRATEGY_KEYS)[number];

const nonEmpty = z.string().trim().min(1, 'must be a non-empty string');

const strategyShape = {
  css: nonEmpty.optional(),
  testid: nonEmpty.optional(),
  role: nonEmpty.optional(),
  name: nonEmpty.optional(),
  text: nonEmpty.optional(),
  label: nonEmpty.optional(),
  xpath: nonEmpty.optional(),
};

function checkStrategies(value: LocatorStrategy, ctx: z.RefinementCtx): void {
  if (!STRATEGY_KEYS.some((k) => value[k] !== undefined)) {
    ctx.addIssue({ code: 'custom', message: `needs one of ${STRATEGY_KEYS.join(', ')}` });
  }
  if (value.name !== undefined && value.role === undefined) {
    ctx.addIssue({ code: 'custom', path: ['name'], message: 'goes with role (name is the accessible name of a role)' });
  }
}

export const strategySchema = z.strictObject(strategyShape).superRefine(checkStrategies);

export const locatorSchema = z.strictObject({ ...strategyShape, fallbacks: z.array(strategySchema).optional() }).superRefine(checkStrategies);

export const targetSchema = z.union([nonEmpty, locatorSchema], {
  error: (iss) => (iss.input === undefined ? 'is required' : 'must be a CSS selector string or a locator object'),
});

/**
 * The iframe a target lives in: a target naming the `<iframe>` element, or a list of them for nested
 * frames, outermost first. Normalized to a list of Locators.
 */
export type FrameInput = TargetInput | TargetInput[];

export const frameSchema = z.union([nonEmpty, locatorSchema, z.array(z.union([nonEmpty, locatorSchema])).min(1, 'must name at least one frame')], {
  error: (iss) => (iss.input === undefined ? 'is required' : 'must be a target naming an iframe, or a list of them (outermost first)'),
});

/** A frame (one target or a list of them) as a list of normalized Locators, outermost first. */
export function normalizeFrame(frame: FrameInput): Locator[] {
  return (Array.isArray(frame) ? frame : [frame]).map(normalizeTarget);
}

/** A CSS string becomes `{css}`; empty fallback lists are dropped. The result is canonical input for digests. */
export function normalizeTarget(target: TargetInput): Locator {
  if (typeof target === 'string') return { css: target.trim() };
  const [primary, ...rest] = [...splitStrategies(target), ...(target.fallbacks ?? []).flatMap(splitStrategies)];
  const out: Locator = { ...primary };
  if (rest.length > 0) out.fallbacks = rest;
  return out;
}

/** The single-strategy objects a (possibly multi-strategy) locator object stands for, in STRATEGY_KEYS order. */
function splitStrategies(s: LocatorStrategy): LocatorStrategy[] {
  return STRATEGY_KEYS.filter((key) => s[key] !== undefined).map((key) => {
    const one: LocatorStrategy = { [key]: s[key]!.trim() };
    if (key === 'role' && s.name !== undefined) one.name = s.name.trim();
    return one;
  });
}

/** The strategies of a target in the order they are tried: primary first, then fallbacks. */
export function strategiesOf(target: Locator): LocatorStrategy[] {
  const { fallbacks, ...primary } = target;
  return [primary, ...(fallbacks ?? [])];
}

/**
 * A short, stable text for a strategy, used in warnings, errors and lint findings:
 * `css=#user`, `testid=login`, `role=button[name="Log in"]`, `text="Search"`, `label="User"`, `xpath=//a`.
 */
export function describeStrategy(s: LocatorStrategy): string {
  if (s.css !== undefined) return `css=${s.css}`;
  if (s.testid !== undefined) return `testid=${s.testid}`;
  if (s.role !== undefined) return s.name === undefined ? `role=${s.role}` : `role=${s.role}[name=${JSON.stringify(s.name)}]`;
  if (s.text !== undefined) return `text=${JSON.stringify(s.text)}`;
  if (s.label !== undefined) return `label=${JSON.stringify(s.label)}`;
  if (s.xpath !== undefined) return `xpath=${s.xpath}`;
  return '(empty locator)';
}

/** JSON Schema of a target, for browser tool contracts (kept by hand: contract digests must not move with zod). */
export const STRATEGY_JSON_SCHEMA = {
  type: 'object',
  properties: {
    css: { type: 'string', minLength: 1 },
    testid: { type: 'string', minLength: 1 },
    role: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1 },
    text: { type: 'string', minLength: 1 },
    label: { type: 'string', minLength: 1 },
    xpath: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
  minProperties: 1,
} as const;

export const TARGET_JSON_SCHEMA = {
  oneOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'object',
      properties: {
        ...STRATEGY_JSON_SCHEMA.properties,
        fallbacks: { type: 'array', items: STRATEGY_JSON_SCHEMA },
      },
      additionalProperties: false,
      minProperties: 1,
    },
  ],
} as const;

export const FRAME_JSON_SCHEMA = {
  description: 'the iframe the target lives in: a target naming the iframe element, or a list of them for nested frames (outermost first)',
  oneOf: [...TARGET_JSON_SCHEMA.oneOf, { type: 'array', items: TARGET_JSON_SCHEMA, minItems: 1 }],
} as const;
