import type { Flow, FlowInput, FlowStep } from '../flow/types.js';
import { DEFAULT_TIMEOUT_MS } from '../flow/compile.js';
import type { Recording, RecordedOp, RecordingFormat } from './recording.js';

/**
 * Recording -> Flow. Each op becomes one browser step `browser/<kind>@1` (id `<kind>_<n>`, n = the op's
 * 1-based position); slotted values become `${inputs.<slot>}`; extract names become the output
 * projection. Literal text is escaped (`${` -> `$${`) so recorded strings are never evaluated.
 */

export interface RecordingToFlowOptions {
  /**
   * Folder holding the recording's upload files, relative to the project root, with `/` separators.
   * Default `recordings/<name>.files` (where `flowctl record` puts them).
   */
  filesDir?: string;
}

/** Path of an uploaded file inside the files folder: `<hex>/<name>` (content-addressed by its digest). */
export function recordedFilePath(filesDir: string, file: { name: string; digest: string }): string {
  return `${filesDir}/${file.digest.slice('sha256:'.length)}/${file.name}`;
}

function literal<T>(value: T): T {
  if (typeof value === 'string') return value.replaceAll('${', () => '$${') as T; // a function: in a replacement string "$$" means "$"
  if (Array.isArray(value)) return value.map(literal) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v)])) as T;
  }
  return value;
}

/**
 * The tool version (`MAJOR.MINOR`) each op kind's step uses, per Recording format. A format never
 * moves to a newer tool version: its Recordings compile to the same FlowSpec (and digest) forever,
 * with or without a lock file. Format 1 keeps the first version of the seven tools.
 */
export const RECORDING_TOOL_VERSIONS: Readonly<Record<RecordingFormat, Readonly<Partial<Record<RecordedOp['kind'], string>>>>> = {
  'flowctl-recording/1': { navigate: '1.0', click: '1.0', fill: '1.0', select: '1.0', drag: '1.0', upload: '1.0', extract: '1.0' },
  'flowctl-recording/2': {
    navigate: '1.0',
    click: '1.1',
    fill: '1.1',
    select: '1.1',
    drag: '1.1',
    upload: '1.1',
    extract: '1.1',
    press: '1.0',
    hover: '1.0',
    check: '1.0',
    uncheck: '1.0',
    wait: '1.0',
    switch: '1.0',
  },
};

/** The extract version an op with `container` compiles to (extract 1.2.0: an empty list is `[]`). */
export const EXTRACT_CONTAINER_VERSION = '1.2';

/** A wait op's step gets this much beyond its wait, so the wait's own bound, not the step's, ends it. */
export const WAIT_STEP_MARGIN_MS = 2000;

export function stepIdOf(op: RecordedOp, index: number): string {
  return `${op.kind}_${index + 1}`;
}

export function recordingToFlow(recording: Recording, options: RecordingToFlowOptions = {}): Flow {
  const filesDir = (options.filesDir ?? `recordings/${recording.name}.files`).replace(/\/+$/, '');
  const inputs: Record<string, FlowInput> = {};
  const isInput = (slot: string | undefined): slot is string => slot !== undefined && slot in recording.inputs;

  for (const [slot, input] of Object.entries(recording.inputs)) {
    const flowInput: FlowInput = { type: input.type };
    if (input.type === 'array') flowInput.items = { type: 'string' };
    if (input.secret) flowInput.secret = true;
    else if (input.default !== undefined) flowInput.default = input.default;
    inputs[slot] = flowInput;
  }

  const steps: FlowStep[] = [];
  const output: Record<string, string> = {};
  for (const [i, op] of recording.ops.entries()) {
    const id = stepIdOf(op, i);
    // extract 1.2 knows `container` (an empty list): only an op that names one uses it, so no other digest moves.
    const version = op.kind === 'extract' && op.container !== undefined ? EXTRACT_CONTAINER_VERSION : RECORDING_TOOL_VERSIONS[recording.format][op.kind]!;
    const tool = `browser/${op.kind}@${version}`;
    let args: Record<string, unknown>;
    let timeoutMs: number | undefined;
    switch (op.kind) {
      case 'navigate':
        args = { url: literal(op.url) };
        break;
      case 'switch':
        args = { page: op.page };
        break;
      case 'click':
        args = { target: literal(op.target) };
        if (op.count !== undefined) args.count = op.count;
        if (op.button !== undefined) args.button = op.button;
        break;
      case 'hover':
      case 'check':
      case 'uncheck':
        args = { target: literal(op.target) };
        break;
      case 'press':
        args = { key: literal(op.key) };
        if (op.target !== undefined) args.target = literal(op.target);
        break;
      case 'wait':
        args = { target: literal(op.target) };
        if (op.state !== undefined) args.state = op.state;
        if (op.text !== undefined) args.text = literal(op.text);
        if (op.timeout_ms !== undefined) {
          args.timeout_ms = op.timeout_ms;
          // The step outlives its wait (the tool keeps a reserve of its budget for the diagnosis).
          if (op.timeout_ms + WAIT_STEP_MARGIN_MS > DEFAULT_TIMEOUT_MS) timeoutMs = op.timeout_ms + WAIT_STEP_MARGIN_MS;
        }
        break;
      case 'drag':
        args = { source: literal(op.source), target: literal(op.target) };
        break;
      case 'fill':
      case 'select': {
        args = { target: literal(op.target), value: isInput(op.slot) ? `\${inputs.${op.slot}}` : literal(op.value) };
        // Screenshots black out fields filled from a secret slot.
        if (isInput(op.slot) && recording.inputs[op.slot]!.secret) args.mask = true;
        break;
      }
      case 'upload': {
        const files = op.files.map((f) => ({ path: literal(recordedFilePath(filesDir, f)), digest: f.digest }));
        if (isInput(op.slot)) {
          inputs[op.slot]!.default ??= files.map((f) => f.path);
          args = { target: literal(op.target), files: `\${inputs.${op.slot}}` };
        } else {
          args = { target: literal(op.target), files };
        }
        break;
      }
      case 'extract': {
        args = { target: literal(op.target) };
        if (op.attribute !== undefined) args.attribute = literal(op.attribute);
        if (op.all) args.all = true;
        if (op.text !== undefined) args.text = op.text;
        if (op.container !== undefined) args.container = literal(op.container);
        output[op.name] = `\${steps.${id}.output.value}`;
        break;
      }
    }
    if ('frame' in op && op.frame !== undefined) args.frame = literal(op.frame);
    if ('opens_page' in op && op.opens_page) args.opens_page = true;
    const step: FlowStep = { id, tool, args };
    if (timeoutMs !== undefined) step.timeout_ms = timeoutMs;
    if ('optional' in op && op.optional) step.optional = true;
    steps.push(step);
  }

  const flow: Flow = { name: recording.name, description: recording.task, steps };
  if (Object.keys(inputs).length > 0) flow.inputs = inputs;
  if (Object.keys(output).length > 0) flow.output = output;
  return flow;
}
