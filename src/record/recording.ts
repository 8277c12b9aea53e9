import { posix } from 'node:path';
import { z } from 'zod';
import { digestBytes, digestOf, DIGEST_PATTERN, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import { locatorSchema, normalizeFrame, normalizeTarget, type Locator } from './locator.js';
import { keyProblem } from './keys.js';
import { CLICK_BUTTONS, IDENTIFIER, parseOps, WAIT_MAX_MS, WAIT_STATES, type OpInput } from './ops.js';

/**
 * A Recording: the content-addressed record of a browser task (docs/recordings.md).
 * `source_digest` = digestOf(every other field). Secret slot values are never part of it.
 */

/** The format `flowctl record` writes. */
export const RECORDING_FORMAT = 'flowctl-recording/2';
/**
 * Every format that loads. Format 1 holds the seven first op kinds and compiles to the first version
 * of each browser tool, so a format-1 Recording keeps its source_digest and its flow digest. Format 2
 * adds press, hover, check, uncheck, wait, switch, `frame` on targeted ops, `opens_page` on actions,
 * click's count and button, and extract's `text: rendered`; later, `optional` on actions and
 * extract's `container` (stored only when set, so no earlier format-2 Recording changes).
 */
export const RECORDING_FORMATS = ['flowctl-recording/1', RECORDING_FORMAT] as const;
export type RecordingFormat = (typeof RECORDING_FORMATS)[number];
export const NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

/** An uploaded file, stored next to the recording at `<name>.files/<hex>/<name>`. */
export interface RecordedFile {
  /** The file's base name, as the page sees it. */
  name: string;
  digest: Digest;
}

/** The iframe (a list for nested frames, outermost first) a targeted op's target lives in. Format 2. */
type InFrame = { frame?: Locator[] };
/** The action opens a new tab or popup and the run goes on in it (stored only when true). Format 2. */
type Opens = { opens_page?: true; optional?: true };

export type RecordedOp =
  | { kind: 'navigate'; url: string }
  | ({ kind: 'click'; target: Locator; count?: 2 | 3; button?: 'right' | 'middle' } & InFrame & Opens)
  | ({ kind: 'fill'; target: Locator; value?: string; slot?: string } & InFrame & Opens)
  | ({ kind: 'select'; target: Locator; value?: string | string[]; slot?: string } & InFrame & Opens)
  | ({ kind: 'drag'; source: Locator; target: Locator } & InFrame & Opens)
  | ({ kind: 'upload'; target: Locator; files: RecordedFile[]; slot?: string } & InFrame & Opens)
  | ({ kind: 'extract'; target: Locator; name: string; attribute?: string; all?: true; text?: 'rendered'; container?: Locator } & InFrame)
  | ({ kind: 'press'; key: string; target?: Locator } & InFrame & Opens)
  | ({ kind: 'hover'; target: Locator } & InFrame & Opens)
  | ({ kind: 'check'; target: Locator } & InFrame & Opens)
  | ({ kind: 'uncheck'; target: Locator } & InFrame & Opens)
  | ({ kind: 'wait'; target: Locator; state?: 'hidden'; text?: string; timeout_ms?: number } & InFrame)
  | { kind: 'switch'; page: number };

/** A slot made into a flow input by `--input` (recorded value as default) or `--secret` (name only). */
export interface RecordingInput {
  type: 'string' | 'array';
  secret: boolean;
  /** The recorded value (never for a secret slot; absent for upload slots, whose files are in the op). */
  default?: string | string[];
}

export interface Recording {
  format: RecordingFormat;
  name: string;
  task: string;
  ops: RecordedOp[];
  inputs: Record<string, RecordingInput>;
  source_digest: Digest;
}

export interface RecordOptions {
  name: string;
  task: string;
  /** The parsed ops file (a list). */
  ops: unknown;
  /** Slots that become typed inputs. */
  inputs?: readonly string[];
  /** Slots that become secret inputs; their recorded values are dropped. */
  secrets?: readonly string[];
  /**
   * Reads an upload file by its path as written in the ops file (relative to the ops file's folder, already
   * checked not to leave it lexically). The CLI's reader also refuses symlinks that leave the folder.
   */
  readFile(relativePath: string): Promise<Uint8Array>;
}

export interface BuiltRecording {
  recording: Recording;
  /** Upload file contents by digest, to store next to the recording. */
  files: Map<Digest, { name: string; bytes: Uint8Array }>;
}

function fail(code: string, message: string, data?: Record<string, unknown>): never {
  throw new FlowError(code, `[flowctl] [record] ${message}`, data === undefined ? {} : { data });
}

/** A path inside the ops file's folder: relative, and it never climbs above it. */
export function checkInsideFolder(path: string, at: string): string {
  const p = path.replaceAll('\\', '/');
  const normal = posix.normalize(p);
  if (posix.isAbsolute(p) || /^[A-Za-z]:/.test(p) || normal === '..' || normal.startsWith('../') || normal === '.') {
    fail('upload_outside_folder', `${at}: "${path}" is outside the ops file's folder (use a path relative to it)`, {
      path: at,
      file: path,
    });
  }
  return normal;
}

/**
 * Validate ops and slots and build the Recording. Everything is checked (files read and digested)
 * before anything is returned, so a caller that writes only on success writes nothing on bad input.
 */
export async function buildRecording(options: RecordOptions): Promise<BuiltRecording> {
  const { name, task } = options;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name) || name.length > 64) {
    fail('invalid_name', `--name "${String(name)}" must match ${NAME_PATTERN.source} (1 to 64 characters)`);
  }
  if (typeof task !== 'string' || task.trim() === '') fail('invalid_task', '--task must be a non-empty text');
  const inputSlots = new Set(options.inputs ?? []);
  const secretSlots = new Set(options.secrets ?? []);
  for (const slot of [...inputSlots, ...secretSlots]) {
    if (!IDENTIFIER.test(slot)) fail('invalid_slot', `slot "${slot}" must be an identifier (letters, digits, _)`);
  }
  const both = [...inputSlots].filter((s) => secretSlots.has(s));
  if (both.length > 0) {
    fail('slot_conflict', `slot${both.length > 1 ? 's' : ''} ${both.join(', ')} named by both --input and --secret`, { slots: both });
  }

  const ops = parseOps(options.ops);
  const used = new Map<string, { type: 'string' | 'array'; at: string; kind: string }>();
  const inputs: Record<string, RecordingInput> = {};
  const files = new Map<Digest, { name: string; bytes: Uint8Array }>();
  const extractNames = new Set<string>();
  const out: RecordedOp[] = [];
  let pagesOpen = 1;

  for (const [i, op] of ops.entries()) {
    const at = `ops[${i}]`;
    const slot = 'slot' in op ? op.slot : undefined;
    const isInput = slot !== undefined && inputSlots.has(slot);
    const isSecret = slot !== undefined && secretSlots.has(slot);
    if (slot !== undefined) {
      const type = op.kind === 'upload' || (op.kind === 'select' && Array.isArray(op.value)) ? 'array' : 'string';
      const prev = used.get(slot);
      if (prev && prev.type !== type) {
        fail('slot_type_conflict', `${at}.slot "${slot}" is a ${type} here but a ${prev.type} at ${prev.at}`, { path: `${at}.slot` });
      }
      if (!prev) used.set(slot, { type, at, kind: op.kind });
      if (isSecret && op.kind === 'upload') {
        fail('invalid_slot', `${at}.slot "${slot}": an upload slot cannot be --secret (uploads take files, not secret values)`, {
          path: `${at}.slot`,
        });
      }
    }
    if ((op.kind === 'fill' || op.kind === 'select') && op.value === undefined && !isInput && !isSecret) {
      fail('invalid_ops', `${at}.value is required (or name its slot with --input or --secret)`, { path: `${at}.value` });
    }
    const recorded = await recordOp(op, at, { isSecret, readFile: options.readFile, files });
    if ('frame' in op && op.frame !== undefined && 'target' in recorded) recorded.frame = normalizeFrame(op.frame);
    // Pages are known statically: the first, then one per op that opens one, so a switch to a page
    // that no earlier op opened is refused here, not at run time.
    if (recorded.kind === 'switch' && recorded.page >= pagesOpen) {
      fail(
        'invalid_ops',
        `${at}.page ${recorded.page} is not open there: ${pagesOpen === 1 ? 'only page 0 is' : `pages 0 to ${pagesOpen - 1} are`} (each earlier op with opens_page: true opens the next)`,
        {
          path: `${at}.page`,
        },
      );
    }
    if ('opens_page' in op && op.opens_page === true) {
      (recorded as Opens).opens_page = true;
      pagesOpen++;
    }
    // Stored only when true: an op without it keeps its digest (and its step's).
    if ('optional' in op && op.optional === true) (recorded as Opens).optional = true;
    if (recorded.kind === 'extract') {
      if (extractNames.has(recorded.name))
        fail('duplicate_output', `${at}.name "${recorded.name}" is already extracted by an earlier op`, { path: `${at}.name` });
      extractNames.add(recorded.name);
    }
    if (slot !== undefined && (isInput || isSecret) && !(slot in inputs)) {
      const type = used.get(slot)!.type;
      const value = 'value' in op ? op.value : undefined;
      inputs[slot] = isSecret || op.kind === 'upload' || value === undefined ? { type, secret: isSecret } : { type, secret: false, default: value };
    }
    out.push(recorded);
  }

  for (const [flag, slots] of [
    ['--secret', secretSlots],
    ['--input', inputSlots],
  ] as const) {
    const unused = [...slots].filter((s) => !used.has(s));
    if (unused.length > 0) {
      fail('unknown_slot', `${flag} ${unused.join(', ')}: no op uses ${unused.length > 1 ? 'these slots' : 'this slot'}`, { slots: unused });
    }
  }

  const body = { format: RECORDING_FORMAT, name, task, ops: out, inputs } as const;
  return { recording: { ...body, source_digest: digestOf(body) }, files };
}

async function recordOp(
  op: OpInput,
  at: string,
  ctx: { isSecret: boolean; readFile: RecordOptions['readFile']; files: BuiltRecording['files'] },
): Promise<RecordedOp> {
  switch (op.kind) {
    case 'navigate':
      return { kind: 'navigate', url: op.url };
    case 'switch':
      return { kind: 'switch', page: op.page };
    case 'click': {
      // The defaults (one click, the left button) are left out, so they never change a digest.
      const out: RecordedOp = { kind: 'click', target: normalizeTarget(op.target) };
      if (op.count !== undefined && op.count !== 1) out.count = op.count as 2 | 3;
      if (op.button !== undefined && op.button !== 'left') out.button = op.button;
      return out;
    }
    case 'press': {
      const out: RecordedOp = { kind: 'press', key: op.key };
      if (op.target !== undefined) out.target = normalizeTarget(op.target);
      return out;
    }
    case 'hover':
    case 'check':
    case 'uncheck':
      return { kind: op.kind, target: normalizeTarget(op.target) };
    case 'wait': {
      const out: RecordedOp = { kind: 'wait', target: normalizeTarget(op.target) };
      if (op.state === 'hidden') out.state = 'hidden';
      if (op.text !== undefined) out.text = op.text;
      if (op.timeout_ms !== undefined) out.timeout_ms = op.timeout_ms;
      return out;
    }
    case 'drag':
      return { kind: 'drag', source: normalizeTarget(op.source), target: normalizeTarget(op.target) };
    case 'extract': {
      const out: RecordedOp = { kind: 'extract', target: normalizeTarget(op.target), name: op.name };
      if (op.attribute !== undefined) out.attribute = op.attribute;
      if (op.all === true) out.all = true;
      // The default (text content) is left out, so writing it never changes a digest.
      if (op.text === 'rendered') out.text = 'rendered';
      if (op.container !== undefined) out.container = normalizeTarget(op.container);
      return out;
    }
    case 'fill':
    case 'select': {
      const out = { kind: op.kind, target: normalizeTarget(op.target) } as Extract<RecordedOp, { kind: 'fill' | 'select' }>;
      // A secret slot keeps only its name: the recorded value is dropped here, before anything is written.
      if (op.value !== undefined && !ctx.isSecret) out.value = op.value;
      if (op.slot !== undefined) out.slot = op.slot;
      return out;
    }
    case 'upload': {
      const list = Array.isArray(op.files) ? op.files : [op.files];
      const files: RecordedFile[] = [];
      for (const [j, path] of list.entries()) {
        const where = `${at}.files${Array.isArray(op.files) ? `[${j}]` : ''}`;
        const rel = checkInsideFolder(path, where);
        let bytes: Uint8Array;
        try {
          bytes = await ctx.readFile(rel);
        } catch (err) {
          if (err instanceof FlowError) throw err;
          fail('upload_file_missing', `${where}: cannot read "${path}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { path: where, file: path });
        }
        const digest = digestBytes(bytes);
        const name = posix.basename(rel);
        ctx.files.set(digest, { name, bytes });
        files.push({ name, digest });
      }
      const out: RecordedOp = { kind: 'upload', target: normalizeTarget(op.target), files };
      if (op.slot !== undefined) out.slot = op.slot;
      return out;
    }
  }
}

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
