import { posix } from 'node:path';
import { type FlowError, isFlowError } from '../errors.js';
import type { Locator as SourceLocator, PathSegment } from '../flow/diagnostics.js';
import { parseFlowSource } from '../flow/source.js';
import type { Diagnostic, Flow } from '../flow/types.js';
import type { Recording } from './recording.js';
import { parseRecording } from './recording-schema.js';
import { recordingToFlow } from './to-flow.js';

/**
 * A Recording file as a flow source for `compile`, `run`, `emit` and `lint`: the Flow it compiles to,
 * and a locator that answers flow paths (`steps[3].args.target`) with positions in the recording JSON
 * (`ops[3].target`), so diagnostics point into the file the user has.
 */

export interface RecordingSource {
  recording?: Recording;
  flow?: Flow;
  locate: SourceLocator;
  /** Why there is no flow (syntax, shape, digest); empty or absent when there is one. */
  diagnostics?: Diagnostic[];
}

const OP_FIELDS = new Set([
  'url',
  'target',
  'source',
  'frame',
  'value',
  'files',
  'attribute',
  'all',
  'key',
  'count',
  'button',
  'state',
  'text',
  'timeout_ms',
  'opens_page',
  'page',
]);

function toRecordingPath(path: readonly PathSegment[], recording: Recording | undefined): PathSegment[] {
  const [head, a, b, c, ...rest] = path;
  if (head === 'steps' && typeof a === 'number') {
    if (b === 'args' && typeof c === 'string' && OP_FIELDS.has(c)) return ['ops', a, c, ...rest];
    return ['ops', a];
  }
  if (head === 'inputs' && a !== undefined) return ['inputs', a];
  if (head === 'output' && typeof a === 'string' && recording) {
    const i = recording.ops.findIndex((op) => op.kind === 'extract' && op.name === a);
    return i >= 0 ? ['ops', i, 'name'] : ['ops'];
  }
  if (head === 'description') return ['task'];
  if (head === 'name') return ['name'];
  return [];
}

/** `ops[3].target` -> `['ops', 3, 'target']` */
function segments(path: string): PathSegment[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

/** `file` is the project-relative name (e.g. `recordings/shop.json`); upload files resolve next to it. */
export function loadRecordingSource(text: string, file: string): RecordingSource {
  const parsed = parseFlowSource(text, file);
  if (parsed.sink.failed) return { locate: parsed.locate, diagnostics: parsed.sink.list };
  let recording: Recording;
  try {
    recording = parseRecording(parsed.value, file);
  } catch (err) {
    if (!isFlowError(err)) throw err;
    return { locate: parsed.locate, diagnostics: diagnosticsOf(err, file, parsed.locate) };
  }
  const filesDir = posix.join(posix.dirname(file), `${recording.name}.files`);
  const flow = recordingToFlow(recording, { filesDir });
  return { recording, flow, locate: (path, options) => parsed.locate(toRecordingPath(path, recording), options) };
}

function diagnosticsOf(err: FlowError, file: string, locate: SourceLocator): Diagnostic[] {
  const issues = (err.data as { issues?: { path: string; message: string }[] } | undefined)?.issues;
  const list = issues && issues.length > 0 ? issues : [{ path: '', message: err.message }];
  return list.map((issue) => {
    const { line, column } = locate(segments(issue.path));
    const d: Diagnostic = {
      severity: 'error',
      code: err.code,
      message: issues ? `${issue.path || 'recording'} ${issue.message}` : issue.message,
      file,
      line,
      column,
    };
    if (issue.path) d.field = issue.path;
    return d;
  });
}
