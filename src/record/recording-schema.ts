import { z } from 'zod';
import { DIGEST_PATTERN, digestOf } from '../canonical.js';
import { FlowError } from '../errors.js';
import { keyProblem } from './keys.js';
import { locatorSchema } from './locator.js';
import { CLICK_BUTTONS, IDENTIFIER, WAIT_MAX_MS, WAIT_STATES } from './ops.js';
import { NAME_PATTERN, RECORDING_FORMATS, type Recording, type RecordingFormat } from './recording.js';

/** A stored Recording's schema, one per format, and its validation (docs/recordings.md). */

const digest = z.string().regex(DIGEST_PATTERN, 'must be a sha256:<hex> digest');
const fileSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .refine((n) => !n.includes('/') && n !== '..' && n !== '.', 'must be a base name'),
  digest,
});
const slot = z.string().regex(IDENTIFIER).optional();
/** The ops of format 1, exactly as they were: a format-1 Recording may hold nothing else. */
const v1Ops = {
  navigate: z.strictObject({ kind: z.literal('navigate'), url: z.string().min(1) }),
  click: z.strictObject({ kind: z.literal('click'), target: locatorSchema }),
  fill: z.strictObject({ kind: z.literal('fill'), target: locatorSchema, value: z.string().optional(), slot }),
  select: z.strictObject({
    kind: z.literal('select'),
    target: locatorSchema,
    value: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    slot,
  }),
  drag: z.strictObject({ kind: z.literal('drag'), source: locatorSchema, target: locatorSchema }),
  upload: z.strictObject({ kind: z.literal('upload'), target: locatorSchema, files: z.array(fileSchema).min(1), slot }),
  extract: z.strictObject({
    kind: z.literal('extract'),
    target: locatorSchema,
    name: z.string().regex(IDENTIFIER),
    attribute: z.string().min(1).optional(),
    all: z.literal(true).optional(),
  }),
};
const keySchema = z.string().refine((k) => keyProblem(k) === undefined, 'must be a key name or chord (Enter, Control+A)');
const frame = z.array(locatorSchema).min(1).optional();
const opens_page = z.literal(true).optional();
const optional = z.literal(true).optional();
/** Format 2: new kinds, `frame` on every targeted op, click's count and button (defaults never stored). */
const v2Ops = {
  navigate: v1Ops.navigate,
  click: z.strictObject({
    kind: z.literal('click'),
    target: locatorSchema,
    frame,
    opens_page,
    optional,
    count: z.union([z.literal(2), z.literal(3)]).optional(),
    button: z.enum(CLICK_BUTTONS.filter((b) => b !== 'left') as ['right', 'middle']).optional(),
  }),
  fill: v1Ops.fill.extend({ frame, opens_page, optional }),
  select: v1Ops.select.extend({ frame, opens_page, optional }),
  drag: v1Ops.drag.extend({ frame, opens_page, optional }),
  upload: v1Ops.upload.extend({ frame, opens_page, optional }),
  extract: v1Ops.extract
    .extend({ frame, text: z.literal('rendered').optional(), container: locatorSchema.optional() })
    .refine((op) => op.attribute === undefined || op.text === undefined, {
      message: 'text goes without attribute',
      path: ['text'],
    }),
  press: z
    .strictObject({ kind: z.literal('press'), key: keySchema, target: locatorSchema.optional(), frame, opens_page, optional })
    .refine((op) => op.frame === undefined || op.target !== undefined, {
      message: 'frame needs a target',
      path: ['frame'],
    }),
  hover: z.strictObject({ kind: z.literal('hover'), target: locatorSchema, frame, opens_page, optional }),
  check: z.strictObject({ kind: z.literal('check'), target: locatorSchema, frame, opens_page, optional }),
  uncheck: z.strictObject({ kind: z.literal('uncheck'), target: locatorSchema, frame, opens_page, optional }),
  switch: z.strictObject({ kind: z.literal('switch'), page: z.number().int().min(0) }),
  wait: z.strictObject({
    kind: z.literal('wait'),
    target: locatorSchema,
    frame,
    state: z.literal(WAIT_STATES[1]).optional(),
    text: z.string().min(1).optional(),
    timeout_ms: z.number().int().min(1).max(WAIT_MAX_MS).optional(),
  }),
};
const inputsSchema = z.record(
  z.string().regex(IDENTIFIER),
  z.strictObject({ type: z.enum(['string', 'array']), secret: z.boolean(), default: z.union([z.string(), z.array(z.string())]).optional() }),
);
function recordingSchemaOf(format: RecordingFormat, op: z.ZodType) {
  return z.strictObject({
    format: z.literal(format),
    name: z.string().regex(NAME_PATTERN).max(64),
    task: z.string().min(1),
    ops: z.array(op).min(1),
    inputs: inputsSchema,
    source_digest: digest,
  });
}
const recordingSchemas: Record<RecordingFormat, z.ZodType> = {
  'flowctl-recording/1': recordingSchemaOf(
    'flowctl-recording/1',
    z.discriminatedUnion('kind', [v1Ops.navigate, v1Ops.click, v1Ops.fill, v1Ops.select, v1Ops.drag, v1Ops.upload, v1Ops.extract]),
  ),
  'flowctl-recording/2': recordingSchemaOf(
    'flowctl-recording/2',
    z.discriminatedUnion('kind', [
      v2Ops.navigate,
      v2Ops.click,
      v2Ops.fill,
      v2Ops.select,
      v2Ops.drag,
      v2Ops.upload,
      v2Ops.extract,
      v2Ops.press,
      v2Ops.hover,
      v2Ops.check,
      v2Ops.uncheck,
      v2Ops.wait,
      v2Ops.switch,
    ]),
  ),
};

/**
 * Validate a stored Recording: its shape (FlowError `invalid_recording` with `data.issues`), its
 * `source_digest` (`recording_digest_mismatch`), and that no secret slot carries a value.
 */
export function parseRecording(value: unknown, file = 'recording'): Recording {
  const format = value !== null && typeof value === 'object' ? (value as { format?: unknown }).format : undefined;
  if (!(RECORDING_FORMATS as readonly unknown[]).includes(format)) {
    const shown = typeof format === 'string' ? `"${format.slice(0, 40)}"` : format === undefined ? 'no format' : typeof format;
    throw new FlowError(
      'invalid_recording',
      `[flowctl] [record] ${file} is not a valid Recording: format is ${shown} (known: ${RECORDING_FORMATS.join(', ')}; a newer flowctl may have written it)`,
      {
        data: { file, issues: [{ path: 'format', message: `must be one of ${RECORDING_FORMATS.join(', ')}` }] },
      },
    );
  }
  const parsed = recordingSchemas[format as RecordingFormat].safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({
      path: i.path
        .map((s) => (typeof s === 'number' ? `[${s}]` : `.${String(s)}`))
        .join('')
        .replace(/^\./, ''),
      message: i.message,
    }));
    throw new FlowError(
      'invalid_recording',
      `[flowctl] [record] ${file} is not a valid Recording: ${issues.map((i) => `${i.path || '(root)'} ${i.message}`).join('; ')}`,
      {
        data: { file, issues },
      },
    );
  }
  const recording = parsed.data as Recording;
  const { source_digest, ...body } = recording;
  const actual = digestOf(body);
  if (actual !== source_digest) {
    throw new FlowError('recording_digest_mismatch', `[flowctl] [record] ${file}: source_digest does not match its content (edited by hand? record it again)`, {
      data: { file, expected: source_digest, actual },
    });
  }
  for (const [slot, input] of Object.entries(recording.inputs)) {
    if (input.secret && input.default !== undefined) {
      throw new FlowError('invalid_recording', `[flowctl] [record] ${file}: secret input "${slot}" stores a default value`, {
        data: { file, issues: [{ path: `inputs.${slot}.default`, message: 'a secret slot must not store a value' }] },
      });
    }
  }
  for (const [i, op] of recording.ops.entries()) {
    const slot = 'slot' in op ? op.slot : undefined;
    if (slot !== undefined && recording.inputs[slot]?.secret && 'value' in op && op.value !== undefined) {
      throw new FlowError('invalid_recording', `[flowctl] [record] ${file}: ops[${i}] stores a value for secret slot "${slot}"`, {
        data: { file, issues: [{ path: `ops[${i}].value`, message: 'a secret slot must not store a value' }] },
      });
    }
  }
  return recording;
}
