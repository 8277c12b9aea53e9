import { describe, expect, it } from 'vitest';
import { toolAnnotations } from '../../../src/mcp/annotations.js';
import { createProgressFromJournal } from '../../../src/mcp/progress.js';
import { secretInputNames, toolInputSchema, toolOutputShape } from '../../../src/mcp/tool-schemas.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { compileYaml, testRegistry } from './helpers.js';

const INPUTS = `name: inputs
inputs:
  who: {type: string, description: Who.}
  times: {type: integer, default: 2}
  mode: {type: enum, values: [a, b], required: false}
  token: {type: string, secret: true}
steps:
  - id: len
    tool: test/secret-length@1
    args: {token: "\${inputs.token}"}
  - id: greet
    tool: core/template@1
    args:
      template: "hi {{ who }}"
      values: {who: "\${inputs.who}"}
output:
  text: \${steps.greet.output.text}
  n: \${steps.len.output.length}
  label: "n=\${inputs.times}"
  fixed: 3
  nested: {ok: true, who: "\${inputs.who}"}
  list: ["\${inputs.who}"]
  any: \${steps.greet.output}
`;

describe('toolInputSchema', () => {
  it('lists the typed inputs, leaves secret inputs out, requires only inputs without a default', () => {
    const spec = compileYaml(INPUTS);
    const schema = toolInputSchema(spec);
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties as object).sort()).toEqual(['mode', 'times', 'who']);
    expect(schema.required).toEqual(['who']);
    expect((schema.properties as Record<string, Record<string, unknown>>).who).toMatchObject({ type: 'string', description: 'Who.' });
    expect((schema.properties as Record<string, Record<string, unknown>>).times).toMatchObject({ type: 'integer', default: 2 });
    expect(secretInputNames(spec)).toEqual(['token']);
  });
});

describe('toolOutputShape', () => {
  it('a mapping projection is the object itself, leaves typed from inputs and tool contracts', () => {
    const shape = toolOutputShape(compileYaml(INPUTS), testRegistry());
    expect(shape.wrapped).toBe(false);
    const props = shape.schema!.properties as Record<string, Record<string, unknown>>;
    expect(shape.schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['any', 'fixed', 'label', 'list', 'n', 'nested', 'text'] });
    expect(props.text).toEqual({ anyOf: [{ type: 'null' }, { type: 'string' }] });
    expect(props.n).toEqual({ anyOf: [{ type: 'integer' }, { type: 'null' }] });
    expect(props.label).toEqual({ type: 'string' });
    expect(props.fixed).toEqual({ type: 'number' });
    expect(props.list).toEqual({ type: 'array' });
    expect(props.nested).toMatchObject({
      type: 'object',
      required: ['ok', 'who'],
      properties: { ok: { type: 'boolean' }, who: { anyOf: [{ type: 'null' }, { type: 'string' }] } },
    });
    expect(props.any).toEqual({ anyOf: [{ type: 'null' }, { type: 'object' }] });
  });

  it('without the tool registry, step outputs are open', () => {
    const props = toolOutputShape(compileYaml(INPUTS)).schema!.properties as Record<string, unknown>;
    expect(props.text).toEqual({ description: expect.stringContaining('any JSON value') });
  });

  it('a non-mapping projection is wrapped as {value}; no projection has no schema', () => {
    const single = compileYaml(`name: single
steps:
  - id: a
    tool: core/transform@1
    args: {value: 1}
output: \${steps.a.output.value}
`);
    expect(toolOutputShape(single)).toEqual({
      wrapped: true,
      schema: {
        type: 'object',
        properties: { value: { description: expect.stringContaining('any JSON value') } },
        required: ['value'],
        additionalProperties: false,
      },
    });
    const none = compileYaml(`name: none
steps:
  - id: a
    tool: core/transform@1
    args: {value: 1}
`);
    expect(toolOutputShape(none)).toEqual({ wrapped: false });
  });
});

describe('toolAnnotations', () => {
  const flow = (steps: string) => compileYaml(`name: f\nsteps:\n${steps}`);
  it('a pure flow is read-only, idempotent and closed-world', () => {
    expect(toolAnnotations(flow('  - {id: a, tool: core/transform@1, args: {value: 1}}\n'))).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  });
  it('an http GET is a read in the open world; a POST is a destructive write', () => {
    expect(toolAnnotations(flow('  - {id: a, tool: http/request@1, args: {url: "http://127.0.0.1:1/"}}\n'))).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(toolAnnotations(flow('  - {id: a, tool: http/request@1, args: {url: "http://127.0.0.1:1/", method: POST}}\n'))).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
  });
  it('an fs read is read-only; an fs write and a spawn are destructive and closed-world', () => {
    expect(toolAnnotations(flow('  - {id: a, tool: fs/read@1, args: {path: a.txt}}\n')).readOnlyHint).toBe(true);
    expect(toolAnnotations(flow('  - {id: a, tool: fs/write@1, args: {path: a.txt, content: x}}\n'))).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(toolAnnotations(flow('  - {id: a, tool: shell/exec@1, args: {command: ls}}\n')).destructiveHint).toBe(true);
  });
});

describe('createProgressFromJournal', () => {
  it('counts finished steps only, from the entries', () => {
    const next = createProgressFromJournal(3);
    const e = (x: Record<string, unknown>) => x as unknown as JournalEntry;
    expect(next(e({ event: 'run_started' }))).toBeUndefined();
    expect(next(e({ event: 'step_started', step: 'a' }))).toBeUndefined();
    expect(next(e({ event: 'step_succeeded', step: 'a' }))).toEqual({ progress: 1, total: 3, message: 'step a succeeded (1/3)' });
    expect(next(e({ event: 'step_failed', step: 'b', will_retry: true, error: { code: 'x' } }))).toBeUndefined();
    expect(next(e({ event: 'step_skipped', step: 'c' }))?.progress).toBe(2);
    expect(next(e({ event: 'step_failed', step: 'b', will_retry: false, error: { code: 'flaky' } }))).toEqual({
      progress: 3,
      total: 3,
      message: 'step b failed (flaky) (3/3)',
    });
    expect(next(e({ event: 'run_finished' }))).toBeUndefined();
  });
});
