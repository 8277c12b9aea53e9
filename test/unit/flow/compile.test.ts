import { describe, expect, it } from 'vitest';
import { digestOf, DIGEST_PATTERN } from '../../../src/canonical.js';
import { compile, compileFlow, type CompileResult } from '../../../src/flow/compile.js';
import { SECRET_REF_PATTERN } from '../../../src/ports/secrets.js';
import { contractDigest } from '../../../src/tools/contract.js';
import type { LockFile } from '../../../src/tools/lock.js';
import { secretEcho, testRegistry, versionedTools } from './test-tools.js';

const tools = testRegistry();

function ok(result: CompileResult) {
  if (!result.ok) throw new Error(`compile failed:\n${JSON.stringify(result.diagnostics, null, 2)}`);
  return result;
}

const HELLO = `
name: hello
description: says hello
inputs:
  who: {type: string, default: world}
  times: {type: integer, required: false}
  mode: {type: enum, values: [loud, quiet], default: quiet}
  token: {type: string, secret: true}
  tags: {type: array, items: {type: enum, values: [a, b]}}
steps:
  - id: greet
    tool: core/template@1
    args:
      template: "Hello {{ who }}"
      values: {who: "\${inputs.who}"}
  - id: call
    tool: test/secret-echo@1
    args: {secret: "\${inputs.token}"}
    if: "\${ inputs.mode == 'loud' }"
    retry: {max_attempts: 3}
    timeout_ms: 5000
output:
  text: \${steps.greet.output.text}
  length: \${steps.call.output.length}
`;

describe('compile', () => {
  it('produces a pinned, normalized FlowSpec with defaults and its digest', () => {
    const r = ok(compile(HELLO, { file: 'flows/hello.yaml', tools }));
    expect(r.flow_digest).toMatch(DIGEST_PATTERN);
    expect(r.flow_digest).toBe(digestOf(r.spec));
    expect(r.spec.flowspec).toBe(1);
    expect(r.spec.name).toBe('hello');
    expect(r.spec.description).toBe('says hello');
    const [greet, call] = r.spec.steps;
    expect(greet!.tool).toEqual({ ref: 'core/template', version: '1.0.0', contract_digest: contractDigest(tools.get('core/template', '1.0.0')!.contract) });
    expect(greet!.retry).toEqual({ max_attempts: 1, backoff_ms: 0, backoff_factor: 2 });
    expect(greet!.timeout_ms).toBe(30_000);
    expect(greet!.if).toBeUndefined();
    expect(call!.retry).toEqual({ max_attempts: 3, backoff_ms: 0, backoff_factor: 2 });
    expect(call!.timeout_ms).toBe(5000);
    expect(call!.if).toBe("inputs.mode == 'loud'");
    expect(r.spec.output).toEqual({ text: '${steps.greet.output.text}', length: '${steps.call.output.length}' });
  });

  it('normalizes inputs to contracts with JSON Schemas', () => {
    const { spec } = ok(compile(HELLO, { file: 'flows/hello.yaml', tools }));
    expect(spec.inputs.who).toEqual({ type: 'string', required: false, default: 'world', secret: false, schema: { type: 'string' } });
    expect(spec.inputs.times).toEqual({ type: 'integer', required: false, secret: false, schema: { type: 'integer' } });
    expect(spec.inputs.mode!.schema).toEqual({ enum: ['loud', 'quiet'] });
    expect(spec.inputs.token).toEqual({
      type: 'string',
      required: true,
      secret: true,
      schema: { type: 'string', pattern: SECRET_REF_PATTERN.source },
    });
    expect(spec.inputs.tags!.schema).toEqual({ type: 'array', items: { enum: ['a', 'b'] } });
  });

  it('keeps `secrets` only on the step fed a secret input', () => {
    const { spec } = ok(compile(HELLO, { file: 'f.yaml', tools }));
    expect(spec.steps[1]!.capabilities).toEqual(['net', 'secrets']);
    const noSecret = ok(compile(`name: x\nsteps:\n  - id: a\n    tool: test/secret-echo@1\n    args: {secret: literal}\n`, { file: 'f.yaml', tools }));
    expect(noSecret.spec.steps[0]!.capabilities).toEqual(['net']);
    expect(secretEcho.contract.capabilities).toContain('secrets');
  });

  it('carries no file path, timestamp or secret value', () => {
    const r = ok(compile(HELLO, { file: '/abs/path/flows/hello.yaml', tools }));
    const text = JSON.stringify(r.spec);
    expect(text).not.toContain('/abs/path');
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
  });

  it('gives the same digest for equivalent YAML (key order, comments, quoting, flow style, expression spacing)', () => {
    const a = ok(compile(HELLO, { file: 'a.yaml', tools }));
    const b = ok(
      compile(
        `# the same flow, written differently
output: {length: "\${ steps.call.output.length }", text: '\${steps.greet.output["text"]}'}
steps:
- tool: "core/template@1"
  id: greet
  args:
    values:
      who: \${ (inputs.who) }
    template: Hello {{ who }}
- args: {secret: "\${inputs.token}"}
  timeout_ms: 5000
  retry:
    max_attempts: 3
  if: inputs.mode=="loud"
  id: call
  tool: test/secret-echo@1
inputs:
  tags:
    items: {values: [a, b], type: enum}
    type: array
  token: {secret: true, type: string}
  mode: {default: quiet, values: [loud, quiet], type: enum}
  times: {required: false, type: integer}
  who: {default: "world", type: string}
description: "says hello"
name: hello
`,
        { file: 'b.yaml', tools },
      ),
    );
    expect(b.flow_digest).toBe(a.flow_digest);
  });

  it('changes the digest on a semantic change', () => {
    const base = ok(compile(HELLO, { file: 'a.yaml', tools })).flow_digest;
    for (const [from, to] of [
      ['default: world', 'default: World'],
      ['max_attempts: 3', 'max_attempts: 4'],
      ["== 'loud'", "== 'quiet'"],
      ['Hello {{ who }}', 'Hi {{ who }}'],
      ['description: says hello', 'description: says hi'],
    ]) {
      expect(HELLO.includes(from!)).toBe(true);
      expect(ok(compile(HELLO.replace(from!, to!), { file: 'a.yaml', tools })).flow_digest, `${from} -> ${to}`).not.toBe(base);
    }
  });

  it('compileFlow compiles a Flow object to the same spec as its YAML', () => {
    const yaml = ok(compile(HELLO, { file: 'a.yaml', tools }));
    const obj = ok(compileFlow(yaml.flow, { file: 'recording.json', tools }));
    expect(obj.flow_digest).toBe(yaml.flow_digest);
    const bad = compileFlow({ name: 'x', steps: [{ id: 'a', tool: 'core/nope@1' }] }, { file: 'recordings/x.json', tools });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.diagnostics[0]).toMatchObject({ code: 'unknown_tool', file: 'recordings/x.json', line: 1, column: 1, field: 'steps[0].tool' });
  });

  it('type-checks expression arguments against the tool schema, skipping their literal validation', () => {
    const r = compile(
      `name: typed
inputs:
  url: {type: string}
  n: {type: integer}
  pick: {type: enum, values: [GET, POST]}
steps:
  - id: get
    tool: http/request@1
    args:
      url: \${inputs.url}
      method: \${inputs.pick}
      timeout_ms: \${inputs.n}
      headers: {accept: "text/\${inputs.url}"}
  - id: t
    tool: core/template@1
    args: {template: "status \${steps.get.output.status}", values: {s: "\${steps.get.output.status > 200}"}}
  - id: v
    tool: test/versioned@1
    args: {n: "\${len(inputs.url)}"}
output: \${steps.t.output.text}
`,
      { file: 'f.yaml', tools },
    );
    ok(r);
    const bad = compile(`name: typed\ninputs:\n  flag: {type: boolean}\nsteps:\n  - id: v\n    tool: test/versioned@1\n    args: {n: "\${inputs.flag}"}\n`, {
      file: 'f.yaml',
      tools,
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.diagnostics.map((d) => d.code)).toEqual(['type_mismatch']);
  });

  it('reports every problem of a flow at once, sorted by position', () => {
    const r = compile(
      `name: many
inputs:
  a: {type: string}
steps:
  - id: one
    tool: core/template@1
    args: {template: "\${inputs.b}"}
  - id: two
    tool: core/template@1
    args: {template: "\${steps.three.output.text}"}
output: \${steps.nope.output}
`,
      { file: 'f.yaml', tools },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['unknown_input', 7],
      ['unknown_step', 10],
      ['unknown_step', 11],
    ]);
  });

  it('treats $${ as literal text, not a reference', () => {
    const r = ok(compile(`name: esc\nsteps:\n  - id: a\n    tool: core/template@1\n    args: {template: "cost $\${inputs.nothing}"}\n`, { file: 'f', tools }));
    expect(r.spec.steps[0]!.args.template).toBe('cost $${inputs.nothing}');
  });
});

describe('tool versions and the lock', () => {
  const flow = (range: string) => `name: v\nsteps:\n  - id: a\n    tool: test/versioned@${range}\n    args: {n: 1}\n`;
  const pin = (version: string) => ({
    ref: 'test/versioned',
    version,
    contract_digest: contractDigest(versionedTools.find((t) => t.contract.version === version)!.contract),
  });

  it('resolves the highest matching version (numerically) and reports it as a new pin', () => {
    expect(ok(compile(flow('1'), { file: 'f', tools })).spec.steps[0]!.tool.version).toBe('1.10.1');
    expect(ok(compile(flow('1.2'), { file: 'f', tools })).spec.steps[0]!.tool.version).toBe('1.2.0');
    expect(ok(compile(flow('2'), { file: 'f', tools })).spec.steps[0]!.tool.version).toBe('2.0.0');
    const r = ok(compile(flow('1'), { file: 'f', tools }));
    expect(r.newPins).toEqual([pin('1.10.1')]);
    expect(r.lock).toEqual({ entries: [pin('1.10.1')] });
  });

  it('uses the locked version when it matches the range, with no new pin', () => {
    const lock: LockFile = { entries: [pin('1.2.0')] };
    const r = ok(compile(flow('1'), { file: 'f', tools, lock }));
    expect(r.spec.steps[0]!.tool.version).toBe('1.2.0');
    expect(r.newPins).toEqual([]);
    expect(r.lock).toEqual(lock);
  });

  it('adds a pin beside unrelated entries and keeps the lock sorted', () => {
    const lock: LockFile = { entries: [pin('2.0.0'), { ...pin('1.0.0'), ref: 'a/first' }] };
    const r = ok(compile(flow('1.0'), { file: 'f', tools, lock }));
    expect(r.lock.entries.map((e) => `${e.ref}@${e.version}`)).toEqual(['a/first@1.0.0', 'test/versioned@1.0.0', 'test/versioned@2.0.0']);
  });

  it('fails with lock_mismatch when the locked contract digest differs', () => {
    const lock: LockFile = { entries: [{ ...pin('1.2.0'), contract_digest: pin('1.0.0').contract_digest }] };
    const r = compile(flow('1'), { file: 'f', tools, lock });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics[0]).toMatchObject({ code: 'lock_mismatch', line: 4, column: 11, field: 'steps[0].tool' });
  });
});

describe('one compile lists every problem', () => {
  it('a bad name and a repeated step id do not hide the reference, tool and type checks', () => {
    const r = compile(
      [
        'name: Bad_Name',
        'inputs:',
        '  n: {type: integer, default: "x"}',
        'steps:',
        '  - id: a',
        '    tool: core/template@9',
        '    args: {template: "${inputs.m}"}',
        '  - id: a',
        '    tool: nope/tool@1',
        '',
      ].join('\n'),
      { file: 'multi.yaml', tools: testRegistry() },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['bad_name', 1],
      ['type_mismatch', 3],
      ['unknown_tool', 6],
      ['unknown_input', 7],
      ['duplicate_step', 8],
      ['unknown_tool', 9],
    ]);
  });
});
