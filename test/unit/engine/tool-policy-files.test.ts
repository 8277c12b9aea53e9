import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../../src/run/types.js';
import { defineTool } from '../../../src/tools/contract.js';
import { hostedToolPolicy, usedCapabilities } from '../../../src/tools/policy.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import type { FileSource, Tool, ToolContext } from '../../../src/tools/types.js';
import { makeSpec, testEngine } from './helpers.js';

/**
 * `fs` that depends on the run's file source (docs/tools.md, "Policy"): a tool flagged
 * `filesFromSource` needs `fs` only when the run supplies no file source (RunOptions.files), since it
 * then reads the host's disk. A tool without the flag needs `fs` whatever the run supplies.
 */

const contract = (ref: string) => ({
  ref,
  version: '1.0.0',
  description: 'read a named file',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  output_schema: {
    type: 'object',
    properties: { text: { type: 'string' }, from: { type: 'string' } },
    required: ['text', 'from'],
    additionalProperties: false,
  },
  capabilities: ['fs' as const],
});
/** Reads from ctx.files when the run has one, else from the disk under cwd (as browser/upload does). */
const read = async (input: { path: string }, ctx: ToolContext) => {
  if (ctx.files) return { text: Buffer.from((await ctx.files.read({ path: input.path }))!).toString(), from: 'source' };
  const { readFile } = await import('node:fs/promises');
  return { text: await readFile(join(ctx.cwd, input.path), 'utf8'), from: 'disk' };
};
const flagged: Tool = { ...defineTool(contract('test/attach'), read), flags: { filesFromSource: true } };
const plain: Tool = defineTool(contract('test/read'), read);
const registry = createToolRegistry([flagged, plain]);
const files: FileSource = { read: async (f) => (f.path === 'a.txt' ? new TextEncoder().encode('from the store') : undefined) };

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowctl-files-'));
  await writeFile(join(root, 'a.txt'), 'from the disk');
});
afterAll(() => rm(root, { recursive: true, force: true }));

const failure = (run: Run) => run.journal.flatMap((e) => (e.event === 'step_failed' ? [e.error] : []))[0];

async function runOne(tool: string, options: { files?: FileSource }) {
  const { engine } = testEngine(registry, { cwd: root, toolPolicy: hostedToolPolicy() });
  try {
    return await engine.run({ spec: makeSpec(registry, [{ id: 's', tool, args: { path: 'a.txt' } }], { output: '${steps.s.output}' }) }, {}, options);
  } finally {
    await engine.dispose();
  }
}

describe('tool policy: fs through the run file source', () => {
  it('a filesFromSource tool under the hosted policy: tool_denied without a file source, runs (reading the source) with one', async () => {
    const denied = await runOne('test/attach', {});
    expect(failure(denied)).toMatchObject({ code: 'tool_denied', retryable: false });
    expect(failure(denied)!.message).toContain('test/attach@1.0.0 needs the fs capability');
    const ran = await runOne('test/attach', { files });
    expect([ran.status, ran.output]).toEqual(['succeeded', { text: 'from the store', from: 'source' }]);
  });

  it('a tool without the flag still needs fs when the run has a file source', async () => {
    const run = await runOne('test/read', { files });
    expect(failure(run)).toMatchObject({ code: 'tool_denied' });
  });

  it('usedCapabilities: fs drops only for a flagged tool in a run with files; secrets only when the step is fed one', () => {
    const both = { ...flagged, contract: { ...flagged.contract, capabilities: ['browser', 'fs', 'secrets'] as const } } as Tool;
    expect(usedCapabilities(both, ['browser', 'fs'], { files: true })).toEqual(['browser']);
    expect(usedCapabilities(both, ['browser', 'fs', 'secrets'], { files: false })).toEqual(['browser', 'fs', 'secrets']);
    expect(usedCapabilities({ contract: both.contract }, [], { files: true })).toEqual(['browser', 'fs']);
  });
});
