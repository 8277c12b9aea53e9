import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPlaywrightExecutor } from '../../../adapters/executor-playwright/index.js';
import { compileFlow } from '../../../src/flow/compile.js';
import { loadRecordingSource } from '../../../src/record/flow-loader.js';
import { parseRecording } from '../../../src/record/recording-schema.js';
import { recordingToFlow } from '../../../src/record/to-flow.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

/**
 * Recordings of format 1 (`flowctl-recording/1`) keep loading and keep their digests, whatever later
 * formats and tool versions add. The fixture was written by `flowctl record` before format 2 existed,
 * and both digests below were computed then: a change that moves either breaks every stored Recording.
 */

const FIXTURES = join(import.meta.dirname, '../../fixtures/recordings');
const SOURCE_DIGEST = 'sha256:e6e10062ac9334265fc394d6235d68c8b10cd0dd1a3914b778acea4f79202ff1';
const FLOW_DIGEST = 'sha256:24abf657751b995a2a33f1008232d658206e26bd525c71a0cb644fe19663bc4d';

const tools = () => createToolRegistry(builtinTools(), createPlaywrightExecutor().tools);

describe('a format-1 Recording', () => {
  it('loads with the source_digest it was recorded with', async () => {
    const text = await readFile(join(FIXTURES, 'compat-v1.json'), 'utf8');
    const recording = parseRecording(JSON.parse(text), 'compat-v1.json');
    expect(recording.format).toBe('flowctl-recording/1');
    expect(recording.source_digest).toBe(SOURCE_DIGEST);
  });

  it('compiles to the flow digest it compiled to before format 2, with no lock', async () => {
    const file = 'recordings/compat-v1.json';
    const source = loadRecordingSource(await readFile(join(FIXTURES, 'compat-v1.json'), 'utf8'), file);
    expect(source.diagnostics ?? []).toEqual([]);
    const result = compileFlow(source.flow, { file, tools: tools(), locate: source.locate });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.flow_digest).toBe(FLOW_DIGEST);
    // Every step is pinned to the first version of its tool.
    expect(new Set(result.spec.steps.map((s) => s.tool.version))).toEqual(new Set(['1.0.0']));
    // And through the API, with the default files folder.
    const again = compileFlow(recordingToFlow(source.recording!), { file, tools: tools() });
    expect(again.ok && again.flow_digest).toBe(FLOW_DIGEST);
  });
});
