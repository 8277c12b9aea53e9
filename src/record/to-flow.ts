import type { Flow, FlowInput, FlowStep } from '../flow/types.js';
import type { Recording, RecordedOp } from './recording.js';

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
    const tool = `browser/${op.kind}@1`;
    let args: Record<string, unknown>;
    switch (op.kind) {
      case 'navigate':
        args = { url: literal(op.url) };
        break;
      case 'click':
        args = { target: literal(op.target) };
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
        output[op.name] = `\${steps.${id}.output.value}`;
        break;
      }
    }
    steps.push({ id, tool, args });
  }

  const flow: Flow = { name: recording.name, description: recording.task, steps };
  if (Object.keys(inputs).length > 0) flow.inputs = inputs;
  if (Object.keys(output).length > 0) flow.output = output;
  return flow;
}
