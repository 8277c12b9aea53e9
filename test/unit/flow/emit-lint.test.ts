import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/canonical.js';
import { compile, type CompileResult } from '../../../src/flow/compile.js';
import { NO_SOURCE } from '../../../src/flow/diagnostics.js';
import { emitTs, emitYaml } from '../../../src/flow/emit.js';
import { lintCompiled, lintRules, registerLintRule, type LintContext } from '../../../src/flow/lint.js';
import { HELLO_FLOW } from '../../../cli/commands/init.js';
import { testRegistry } from './test-tools.js';

const tools = testRegistry();
function ok(result: CompileResult) {
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics, null, 2));
  return result;
}

const FLOW = `
output: {n: "\${ steps.b.output.n }", text: "\${steps.a.output.text}"}
steps:
  - id: a
    tool: core/template@1
    args: {values: {z: 1, a: "\${inputs.who}"}, template: "x {{ a }}"}
  - id: b
    tool: test/versioned@1.2
    if: "\${steps.a.status == 'succeeded' && !inputs.quiet}"
    args: {n: 2}
    retry: {backoff_ms: 500, max_attempts: 1}
    timeout_ms: 1000
inputs:
  who: {type: string, default: "42"}
  quiet: {type: boolean, required: false, description: "Say less."}
  token: {type: string, secret: true}
  size: {type: enum, values: [1, 2, "three"]}
  list: {type: array, items: {type: integer}}
name: emit-me
`;

describe('emit yaml', () => {
  it('prints the canonical form: fixed key order, defaults left out, sorted values', () => {
    const r = ok(compile(FLOW, { file: 'f.yaml', tools }));
    expect(emitYaml(r.spec)).toBe(`name: emit-me
inputs:
  list:
    type: array
    items:
      type: integer
  quiet:
    type: boolean
    description: Say less.
    required: false
  size:
    type: enum
    values:
      - 1
      - 2
      - three
  token:
    type: string
    secret: true
  who:
    type: string
    default: "42"
steps:
  - id: a
    tool: core/template@1.0.0
    args:
      template: x {{ a }}
      values:
        a: \${inputs.who}
        z: 1
  - id: b
    tool: test/versioned@1.2.0
    if: steps.a.status == 'succeeded' && !inputs.quiet
    args:
      n: 2
    retry:
      backoff_ms: 500
    timeout_ms: 1000
output:
  n: \${steps.b.output.n}
  text: \${steps.a.output.text}
`);
  });

  it('keeps the author tool references when asked, and compiling the emitted YAML is a fixed point', () => {
    const r = ok(compile(FLOW, { file: 'f.yaml', tools }));
    const refs = r.flow.steps.map((s) => s.tool);
    const yaml = emitYaml(r.spec, { toolRefs: refs });
    expect(yaml).toContain('tool: test/versioned@1.2\n');
    const again = ok(compile(yaml, { file: 'f.yaml', tools }));
    expect(again.flow_digest).toBe(r.flow_digest);
    expect(emitYaml(again.spec, { toolRefs: again.flow.steps.map((s) => s.tool) })).toBe(yaml);
    expect(ok(compile(emitYaml(r.spec), { file: 'f.yaml', tools })).flow_digest).toBe(r.flow_digest);
  });

  it('the starter flow of `init` is canonical and compiles with the built-in tools', () => {
    const r = ok(compile(HELLO_FLOW, { file: 'flows/hello.yaml', tools }));
    expect(emitYaml(r.spec, { toolRefs: r.flow.steps.map((s) => s.tool) })).toBe(HELLO_FLOW);
    expect(r.spec.steps.every((s) => s.capabilities.length === 0)).toBe(true);
  });
});

describe('emit ts', () => {
  it('is a valid, typed module whose flow has the stated digest', async () => {
    const r = ok(compile(FLOW, { file: 'f.yaml', tools }));
    const source = emitTs(r.spec, r.flow_digest);
    expect(source).toContain(`// flow_digest: ${r.flow_digest}`);
    expect(source).toContain('  token: `secret:${string}`;');
    expect(source).toContain('  size: 1 | 2 | "three";');
    expect(source).toContain('  list: Array<number>;');
    expect(source).toContain('  quiet?: boolean;');
    expect(source).toContain('  who?: string;');

    const dir = mkdtempSync(join(tmpdir(), 'flowctl-emit-ts-'));
    try {
      const file = join(dir, 'flow.ts');
      const user = join(dir, 'use.ts');
      writeFileSync(file, source);
      // A caller's code: the Inputs type must accept a valid object and reject a wrong one.
      writeFileSync(
        user,
        `import { flow, flowDigest, type Inputs } from './flow.js';
const good: Inputs = { token: 'secret:api', size: 'three', list: [1] };
// @ts-expect-error size must be one of the enum values
const bad: Inputs = { token: 'secret:api', size: 4, list: [] };
export const used = [good, bad, flow.steps[0].tool.ref, flowDigest];
`,
      );
      const program = ts.createProgram([file, user], {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        skipLibCheck: true,
        types: [],
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(problems).toEqual([]);
      const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
      writeFileSync(join(dir, 'flow.mjs'), js);
      const mod = (await import(join(dir, 'flow.mjs'))) as { flow: unknown; flowDigest: string; default: unknown };
      expect(mod.flowDigest).toBe(r.flow_digest);
      expect(digestOf(mod.flow)).toBe(r.flow_digest);
      expect(mod.default).toEqual(r.spec);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('lint', () => {
  function ctx(text: string): LintContext {
    const r = ok(compile(text, { file: 'flows/x.yaml', tools }));
    return {
      spec: r.spec,
      flow: r.flow,
      file: 'flows/x.yaml',
      source: { text, kind: 'yaml' },
      canonical: emitYaml(r.spec, { toolRefs: r.flow.steps.map((s) => s.tool) }),
      locate: NO_SOURCE,
    };
  }

  it('finds nothing on canonical text with an output', () => {
    expect(lintCompiled(ctx(HELLO_FLOW))).toEqual([]);
  });

  it('reports non-canonical at the first differing line, and no-output', () => {
    const text = HELLO_FLOW.replace('description: A starter', 'description:   A starter').replace(/output:\n.*\n$/, '');
    const findings = lintCompiled(ctx(text));
    expect(findings.map((f) => [f.code, f.line, f.severity])).toEqual([
      ['no-output', 1, 'warning'],
      ['non-canonical', 2, 'warning'],
    ]);
  });

  it('runs registered rules, replacing by name', () => {
    const before = lintRules().length;
    registerLintRule({
      name: 'test-many-steps',
      check: (c) => (c.spec.steps.length > 0 ? [{ severity: 'warning', code: 'test-many-steps', message: 'm', file: c.file, line: 2, column: 3 }] : []),
    });
    registerLintRule({
      name: 'test-many-steps',
      check: (c) => [{ severity: 'warning', code: 'test-many-steps', message: 'replaced', file: c.file, line: 2, column: 3 }],
    });
    expect(lintRules().length).toBe(before + 1);
    const findings = lintCompiled(ctx(HELLO_FLOW));
    expect(findings).toEqual([{ severity: 'warning', code: 'test-many-steps', message: 'replaced', file: 'flows/x.yaml', line: 2, column: 3 }]);
  });
});
