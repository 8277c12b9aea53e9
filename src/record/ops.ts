import { z } from 'zod';
import { FlowError } from '../errors.js';
import { targetSchema, type TargetInput } from './locator.js';

/**
 * The ops file: a JSON or YAML list of resolved browser operations (spec/engine.md, `record`).
 * Each op is an object with `kind` and the fields of its kind; see docs/recordings.md ("Ops file").
 */

export const OP_KINDS = ['navigate', 'click', 'fill', 'select', 'drag', 'upload', 'extract'] as const;
export type OpKind = (typeof OP_KINDS)[number];

/** Slot and extract names become input names and output fields: identifiers usable in `${inputs.<slot>}`. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const required = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined ? 'is required' : `must be ${what}`),
});

const str = z.string(required('a string')).min(1, 'must not be empty');
const target = targetSchema;
const identifier = str.regex(IDENTIFIER, 'must be an identifier (letters, digits, _; not starting with a digit)');

const httpUrl = str.refine((u) => {
  try {
    const { protocol } = new URL(u);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an absolute http(s) URL');

export const opSchemas = {
  navigate: z.strictObject({ kind: z.literal('navigate'), url: httpUrl }),
  click: z.strictObject({ kind: z.literal('click'), target }),
  fill: z.strictObject({
    kind: z.literal('fill'),
    target,
    value: z.string({ error: 'must be a string (quote numbers in YAML)' }).optional(),
    slot: identifier.optional(),
  }),
  select: z.strictObject({
    kind: z.literal('select'),
    target,
    value: z
      .union([z.string(), z.array(z.string()).min(1, 'must list at least one option')], {
        error: 'must be an option value or label, or a list of them',
      })
      .optional(),
    slot: identifier.optional(),
  }),
  drag: z.strictObject({ kind: z.literal('drag'), source: target, target }),
  upload: z.strictObject({
    kind: z.literal('upload'),
    target,
    files: z.union([str, z.array(str).min(1, 'must list at least one file')], required('a path or a list of paths')),
    slot: identifier.optional(),
  }),
  extract: z.strictObject({
    kind: z.literal('extract'),
    target,
    name: identifier,
    attribute: str.optional(),
    all: z.boolean({ error: 'must be true or false' }).optional(),
  }),
} as const;

export type OpInput =
  | { kind: 'navigate'; url: string }
  | { kind: 'click'; target: TargetInput }
  | { kind: 'fill'; target: TargetInput; value?: string; slot?: string }
  | { kind: 'select'; target: TargetInput; value?: string | string[]; slot?: string }
  | { kind: 'drag'; source: TargetInput; target: TargetInput }
  | { kind: 'upload'; target: TargetInput; files: string | string[]; slot?: string }
  | { kind: 'extract'; target: TargetInput; name: string; attribute?: string; all?: boolean };

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
          issue.code === 'unrecognized_keys'
            ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} for a ${kind} op`
            : issue.message;
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
