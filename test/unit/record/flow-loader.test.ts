import { describe, expect, it } from 'vitest';
import { compileFlow } from '../../../src/flow/compile.js';
import { lintCompiled, registerLintRule } from '../../../src/flow/lint.js';
import { prettyJson } from '../../../src/canonical.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createPlaywrightExecutor } from '../../../adapters/executor-playwright/index.js';
import { loadRecordingSource } from '../../../src/record/flow-loader.js';
import { brittleLocatorRule } from '../../../src/record/lint.js';
import { buildRecording } from '../../../src/record/recording.js';

const tools = createToolRegistry(builtinTools(), createPlaywrightExecutor().tools);
registerLintRule(brittleLocatorRule);

async function recordingText(ops: unknown[], secrets: string[] = []): Promise<string> {
  const { recording } = await buildRecording({ name: 'shop', task: 'Shop', ops, secrets, readFile: async () => new Uint8Array() });
  return `${prettyJson(recording)}\n`;
}

describe('a Recording file as a flow source', () => {
  it('compiles, keeps secrets to the step fed one, and places lint findings in the JSON', async () => {
    const text = await recordingText(
      [
        { kind: 'navigate', url: 'http://127.0.0.1:1/' },
        { kind: 'fill', target: '#pw', value: 'x', slot: 'pw' },
        { kind: 'click', target: '#ember77' },
        { kind: 'extract', target: 'h1', name: 'title' },
      ],
      ['pw'],
    );
    const source = loadRecordingSource(text, 'recordings/shop.json');
    expect(source.diagnostics).toBeUndefined();
    const result = compileFlow(source.flow, { file: 'recordings/shop.json', tools, locate: source.locate });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.spec.steps.find((s) => s.id === 'fill_2')!.capabilities).toEqual(['browser', 'secrets']);
    expect(result.spec.steps.find((s) => s.id === 'click_3')!.capabilities).toEqual(['browser']);

    const findings = lintCompiled({
      spec: result.spec,
      flow: result.flow,
      file: 'recordings/shop.json',
      source: { text, kind: 'recording' },
      locate: source.locate,
    });
    const brittle = findings.filter((f) => f.code === 'brittle-locator');
    expect(brittle).toHaveLength(1);
    // The finding points at ops[2].target in the JSON text.
    const lines = text.split('\n');
    expect(brittle[0]).toMatchObject({ severity: 'warning', field: 'ops[2].target' });
    expect(lines[brittle[0]!.line - 1]).toMatch(/"target"|"css": "#ember77"/);
  });

  it('turns a malformed or edited recording into diagnostics, not a crash', async () => {
    const good = JSON.parse(await recordingText([{ kind: 'click', target: '#a' }]));
    const edited = loadRecordingSource(JSON.stringify({ ...good, task: 'edited' }, null, 2), 'recordings/shop.json');
    expect(edited.flow).toBeUndefined();
    expect(edited.diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'recording_digest_mismatch' })]);

    const bad = JSON.stringify({ ...good, ops: [{ kind: 'click' }] }, null, 2);
    const shaped = loadRecordingSource(bad, 'recordings/shop.json');
    expect(shaped.diagnostics).toEqual([
      expect.objectContaining({ code: 'invalid_recording', field: 'ops[0].target', line: bad.split('\n').findIndex((l) => l.includes('"kind": "click"')) }),
    ]);

    const syntax = loadRecordingSource('{"format": ', 'recordings/shop.json');
    expect(syntax.diagnostics?.[0]).toMatchObject({ code: 'yaml_syntax', file: 'recordings/shop.json' });
  });

  it('lints YAML flows with browser steps too, skipping targets computed by expressions', () => {
    const flow = {
      name: 'x',
      inputs: { sel: { type: 'string', default: '#a' } },
      steps: [
        { id: 'a', tool: 'browser/click@1', args: { target: { xpath: '/html/body/div' } } },
        { id: 'b', tool: 'browser/click@1', args: { target: '${inputs.sel}' } },
      ],
    };
    const result = compileFlow(flow, { file: 'flows/x.yaml', tools });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const found = brittleLocatorRule.check({ spec: result.spec, flow: result.flow, file: 'flows/x.yaml', locate: () => ({ line: 1, column: 1 }) });
    expect(found.map((f) => f.field)).toEqual(['steps[0].args.target']);
  });

  it('compiles the format-2 kinds and lints their targets, pointing into the JSON', async () => {
    const text = await recordingText([
      { kind: 'navigate', url: 'http://127.0.0.1:1/' },
      { kind: 'press', key: 'Enter', target: '#ember12' },
      { kind: 'hover', target: { xpath: '/html/body/nav' } },
      { kind: 'check', target: { label: 'Agree' } },
      { kind: 'wait', target: '#mui-12345', state: 'hidden', timeout_ms: 40_000 },
    ]);
    const source = loadRecordingSource(text, 'recordings/shop.json');
    const result = compileFlow(source.flow, { file: 'recordings/shop.json', tools, locate: source.locate });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.spec.steps.map((s) => `${s.tool.ref}@${s.tool.version} ${s.timeout_ms}`)).toEqual([
      'browser/navigate@1.0.0 30000',
      'browser/press@1.0.0 30000',
      'browser/hover@1.0.0 30000',
      'browser/check@1.0.0 30000',
      'browser/wait@1.0.0 42000',
    ]);
    const findings = lintCompiled({
      spec: result.spec,
      flow: result.flow,
      file: 'recordings/shop.json',
      source: { text, kind: 'recording' },
      locate: source.locate,
    });
    const brittle = findings.filter((f) => f.code === 'brittle-locator');
    expect(brittle.map((f) => f.field)).toEqual(['ops[1].target', 'ops[2].target', 'ops[4].target']);
    // A bad literal arg in a YAML flow is a compile error against the contract.
    const bad = compileFlow({ name: 'x', steps: [{ id: 'a', tool: 'browser/click@1', args: { target: '#a', count: 5 } }] }, { file: 'flows/x.yaml', tools });
    expect(bad.ok).toBe(false);
  });
});
