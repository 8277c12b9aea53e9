import { describe, expect, it } from 'vitest';
import { builtinTools, compile, compileFlow, createEngine, createToolRegistry } from '../../../src/engine-entry.js';

// issue 32, "Defaults": compile with no options takes the built-in tools and no lock; an engine with
// no options runs on memory storage with the built-in tools.
const HELLO = `name: hello
inputs:
  who: { type: string }
steps:
  - id: greet
    tool: core/template@1
    args:
      template: "Hello, {{ who }}!"
      values: { who: "\${inputs.who}" }
output: \${steps.greet.output.text}
`;

describe('library defaults', () => {
  it('compile(text) resolves against the built-in tools with no lock, as with them given explicitly', () => {
    const r = compile(HELLO);
    if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
    const explicit = compile(HELLO, { file: 'flows/hello.yaml', tools: createToolRegistry(builtinTools()) });
    expect(explicit.ok && explicit.flow_digest).toBe(r.flow_digest);
    expect(r.newPins.map((p) => p.ref)).toEqual(['core/template']);
    expect(r.lock.entries.map((p) => p.ref)).toEqual(['core/template']);
  });

  it('compile(text) names its diagnostics <source> when no file is given', () => {
    const r = compile('name: broken\nsteps:\n  - id: a\n    tool: no/such@1\n');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.diagnostics[0]).toMatchObject({ file: '<source>', code: 'unknown_tool' });
    const flow = compileFlow({ name: 'x', steps: [{ id: 'a', tool: 'core/template@1', args: { template: 'hi' } }] });
    expect(flow.ok).toBe(true);
  });

  it('createEngine() runs a compiled spec on memory storage and keeps the run', async () => {
    const r = compile(HELLO);
    if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
    const engine = createEngine();
    try {
      const run = await engine.run({ spec: r.spec }, { who: 'Ada' });
      expect(run).toMatchObject({ status: 'succeeded', output: 'Hello, Ada!' });
      expect((await engine.getRun(run.id))?.status).toBe('succeeded');
      // Each engine gets its own store.
      expect(await createEngine().getRun(run.id)).toBeUndefined();
    } finally {
      await engine.dispose();
    }
  });
});
