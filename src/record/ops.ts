import { z } from 'zod';
import { FlowError } from '../errors.js';
import { keyProblem } from './keys.js';
import { frameSchema, targetSchema, type FrameInput, type TargetInput } from './locator.js';

/**
 * The ops file: a JSON or YAML list of resolved browser operations (spec/engine.md, `record`).
 * Each op is an object with `kind` and the fields of its kind; see docs/recordings.md ("Ops file").
 */

export const OP_KINDS = ['navigate', 'click', 'fill', 'select', 'drag', 'upload', 'extract', 'press', 'hover', 'check', 'uncheck', 'wait', 'switch'] as const;
export type OpKind = (typeof OP_KINDS)[number];

/** Slot and extract names become input names and output fields: identifiers usable in `${inputs.<slot>}`. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const required = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined ? 'is required' : `must be ${what}`),
});

const str = z.string(required('a string')).min(1, 'must not be empty');
const target = targetSchema;
const frame = frameSchema.optional();
/** On an action: it opens a new tab or popup, and the run goes on in it. */
const opens_page = z.boolean({ error: 'must be true or false' }).optional();
/** On an action: a target that does not appear within the optional window skips the step (docs/recordings.md, "Optional steps"). */
const optional = z.boolean({ error: 'must be true or false' }).optional();
const identifier = str.regex(IDENTIFIER, 'must be an identifier (letters, digits, _; not starting with a digit)');

const httpUrl = str.refine((u) => {
  try {
    const { protocol } = new URL(u);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an absolute http(s) URL');

/** A key or chord Playwright can press (keys.ts). */
const key = z.string(required('a key name such as Enter or Control+A')).superRefine((k, ctx) => {
  const problem = keyProblem(k);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** The longest a `wait` op may wait: 10 minutes. */
export const WAIT_MAX_MS = 600_000;

export const CLICK_BUTTONS = ['left', 'right', 'middle'] as const;
export const WAIT_STATES = ['visible', 'hidden'] as const;
/** How `extract` reads text: `content` (default: textContent, whitespace collapsed) or `rendered` (innerText, line breaks kept). */
export const EXTRACT_TEXTS = ['content', 'rendered'] as const;

export const opSchemas = {
  navigate: z.strictObject({ kind: z.literal('navigate'), url: httpUrl }),
  click: z.strictObject({
    kind: z.literal('click'),
    target,
    frame,
    opens_page,
    optional,
    count: z
      .number({ error: 'must be 1, 2 (a double-click) or 3' })
      .int('must be 1, 2 (a double-click) or 3')
      .min(1, 'must be 1, 2 (a double-click) or 3')
      .max(3, 'must be 1, 2 (a double-click) or 3')
      .optional(),
    button: z.enum(CLICK_BUTTONS, { error: `must be one of ${CLICK_BUTTONS.join(', ')}` }).optional(),
  }),
  fill: z.strictObject({
    kind: z.literal('fill'),
    target,
    frame,
    opens_page,
    optional,
    value: z.string({ error: 'must be a string (quote numbers in YAML)' }).optional(),
    slot: identifier.optional(),
  }),
  select: z.strictObject({
    kind: z.literal('select'),
    target,
    frame,
    opens_page,
    optional,
    value: z
      .union([z.string(), z.array(z.string()).min(1, 'must list at least one option')], {
        error: 'must be an option value or label, or a list of them',
      })
      .optional(),
    slot: identifier.optional(),
  }),
  drag: z.strictObject({ kind: z.literal('drag'), source: target, target, frame, opens_page, optional }),
  upload: z.strictObject({
    kind: z.literal('upload'),
    target,
    frame,
    opens_page,
    optional,
    files: z.union([str, z.array(str).min(1, 'must list at least one file')], required('a path or a list of paths')),
    slot: identifier.optional(),
  }),
  extract: z
    .strictObject({
      kind: z.literal('extract'),
      target,
      frame,
      name: identifier,
      attribute: str.optional(),
      all: z.boolean({ error: 'must be true or false' }).optional(),
      text: z.enum(EXTRACT_TEXTS, { error: `must be one of ${EXTRACT_TEXTS.join(', ')}` }).optional(),
      container: target.optional(),
    })
    .refine((op) => op.attribute === undefined || op.text === undefined, { path: ['text'], message: 'goes without attribute (it says how to read the text)' })
    .refine((op) => op.container === undefined || op.all === true, { path: ['container'], message: 'goes with all: true (the element that holds the list)' }),
  press: z.strictObject({ kind: z.literal('press'), key, target: target.optional(), frame, opens_page, optional }).superRefine((op, ctx) => {
    if (op.optional === true && op.target === undefined) {
      ctx.addIssue({ code: 'custom', path: ['optional'], message: 'needs a target (a step is skipped when its target is absent)' });
    }
    if (op.frame !== undefined && op.target === undefined) {
      ctx.addIssue({ code: 'custom', path: ['frame'], message: 'needs a target (a key without one goes to the focused element, in whatever frame it is)' });
    }
  }),
  hover: z.strictObject({ kind: z.literal('hover'), target, frame, opens_page, optional }),
  check: z.strictObject({ kind: z.literal('check'), target, frame, opens_page, optional }),
  uncheck: z.strictObject({ kind: z.literal('uncheck'), target, frame, opens_page, optional }),
  wait: z.strictObject({
    kind: z.literal('wait'),
    target,
    frame,
    state: z.enum(WAIT_STATES, { error: `must be one of ${WAIT_STATES.join(', ')}` }).optional(),
    text: str.optional(),
    timeout_ms: z
      .number({ error: `must be a whole number of milliseconds from 1 to ${WAIT_MAX_MS}` })
      .int(`must be a whole number of milliseconds from 1 to ${WAIT_MAX_MS}`)
      .min(1, `must be a whole number of milliseconds from 1 to ${WAIT_MAX_MS}`)
      .max(WAIT_MAX_MS, `must be a whole number of milliseconds from 1 to ${WAIT_MAX_MS}`)
      .optional(),
  }),
  switch: z.strictObject({
    kind: z.literal('switch'),
    page: z
      .number({ error: 'must be the index of an open page (0 = the first)' })
      .int('must be the index of an open page (0 = the first)')
      .min(0, 'must be the index of an open page (0 = the first)'),
  }),
} as const;

/** Every op with a target may name the iframe it lives in (`frame`); an action may open a page. */
type InFrame = { frame?: FrameInput };
type Opens = { opens_page?: boolean; optional?: boolean };

export type OpInput =
  | { kind: 'navigate'; url: string }
  | ({ kind: 'click'; target: TargetInput; count?: number; button?: (typeof CLICK_BUTTONS)[number] } & InFrame & Opens)
  | ({ kind: 'fill'; target: TargetInput; value?: string; slot?: string } & InFrame & Opens)
  | ({ kind: 'select'; target: TargetInput; value?: string | string[]; slot?: string } & InFrame & Opens)
  | ({ kind: 'drag'; source: TargetInput; target: TargetInput } & InFrame & Opens)
  | ({ kind: 'upload'; target: TargetInput; files: string | string[]; slot?: string } & InFrame & Opens)
  | ({
      kind: 'extract';
      target: TargetInput;
      name: string;
      attribute?: string;
      all?: boolean;
      text?: (typeof EXTRACT_TEXTS)[number];
      container?: TargetInput;
    } & InFrame)
  | ({ kind: 'press'; key: string; target?: TargetInput } & InFrame & Opens)
  | ({ kind: 'hover'; target: TargetInput } & InFrame & Opens)
  | ({ kind: 'check'; target: TargetInput } & InFrame & Opens)
  | ({ kind: 'uncheck'; target: TargetInput } & InFrame & Opens)
  | ({ kind: 'wait'; target: TargetInput; state?: (typeof WAIT_STATES)[number]; text?: string; timeout_ms?: number } & InFrame)
  | { kind: 'switch'; page: number };

export interface OpIssue {
  /** Dotted path, e.g. `ops[3].target`. */
  path: string;
  message: string;
}

function pathOf(base: string, segments: readonly PropertyKey[]): string {
  let out = base;
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : `.${String(s)}`;
  return out;
}

/**
 * Check an ops list against the schema of each op's kind. Returns every issue (no values echoed: an op
 * may carry a secret). Throws nothing; `parseOps` turns issues into one FlowError.
 */
export function checkOps(value: unknown): { ops: OpInput[]; issues: OpIssue[] } {
  if (!Array.isArray(value)) {
    return { ops: [], issues: [{ path: 'ops', message: 'must be a list of operations' }] };
  }
  if (value.length === 0) return { ops: [], issues: [{ path: 'ops', message: 'must list at least one operation' }] };
  const ops: OpInput[] = [];
  const issues: OpIssue[] = [];
  value.forEach((raw, i) => {
    const at = `ops[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      issues.push({ path: at, message: 'must be an object with a kind' });
      return;
    }
    const kind = (raw as { kind?: unknown }).kind;
    if (kind === undefined) {
      issues.push({ path: `${at}.kind`, message: `is required (one of ${OP_KINDS.join(', ')})` });
      return;
    }
    if (typeof kind !== 'string' || !(OP_KINDS as readonly string[]).includes(kind)) {
      const shown = typeof kind === 'string' ? `"${kind.slice(0, 40)}"` : typeof kind;
      issues.push({ path: `${at}.kind`, message: `unknown kind ${shown} (known: ${OP_KINDS.join(', ')})` });
      return;
    }
    const parsed = opSchemas[kind as OpKind].safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const message =
          issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} for a ${kind} op` : issue.message;
        issues.push({ path: pathOf(at, issue.path), message });
      }
      return;
    }
    ops.push(parsed.data as OpInput);
  });
  return { ops, issues };
}

/** Parse an ops list or throw FlowError `invalid_ops` listing every issue in `data.issues`. */
export function parseOps(value: unknown): OpInput[] {
  const { ops, issues } = checkOps(value);
  if (issues.length > 0) {
    throw new FlowError('invalid_ops', `[flowctl] [record] invalid ops: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, {
      data: { issues },
    });
  }
  return ops;
}
