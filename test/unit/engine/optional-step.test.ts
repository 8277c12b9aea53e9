import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { defineTool, toolError } from '../../../src/tools/contract.js';
import type { ToolContext } from '../../../src/tools/types.js';
import { assertFlowSpec } from '../../../src/engine/spec-guard.js';
import { makeSpec, objectContract, testEngine } from './helpers.js';

/**
 * StepSpec `optional`: a tool failing `target_absent` on an optional step is journaled `step_skipped`
 * (reason `optional: target_absent: <message>`) and the run goes on; on a step without it, the same
 * failure fails the run. A verify replay reproduces the skip; the tool sees `ctx.optional`.
 */

function tools() {
  const seen: (boolean | undefined)[] = [];
  const registry = createToolRegistry([
    defineTool(objectContract('test/banner'), async (input: { shown: boolean }, ctx: ToolContext) => {
      seen.push(ctx.optional);
      if (!input.shown) throw toolError('target_absent', 'click: the target did not appear within 1500 ms', { retryable: false });
      return { clicked: true };
    }),
    defineTool(objectContract('test/echo'), async (input: Record<string, unknown>) => ({ ...input })),
  ]);
  return { registry, seen };
}

const specOf = (registry: ReturnType<typeof tools>['registry'], optional: boolean) => {
  const spec = makeSpec(
    registry,
    [
      { id: 'accept', tool: 'test/banner', args: { shown: '${inputs.shown}' } },
      { id: 'after', tool: 'test/echo', args: { ok: true } },
    ],
    { inputs: { shown: { type: 'boolean', default: false } }, output: { after: '${steps.after.output.ok}' } },
  );
  if (optional) spec.steps[0]!.optional = true;
  return spec;
};

describe('optional steps', () => {
  it('skips an optional step whose target is absent, and the run goes on; verify reproduces it', async () => {
    const { registry, seen } = tools();
    const { engine } = testEngine(registry);
    const spec = specOf(registry, true);
    expect(() => assertFlowSpec(spec)).not.toThrow();
    const run = await engine.run({ spec }, { shown: false });
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ after: true });
    expect(run.journal.map((e) => ('step' in e ? `${e.event}:${e.step}` : e.event))).toEqual([
      'run_started',
      'step_started:accept',
      'step_skipped:accept',
      'step_started:after',
      'step_succeeded:after',
      'run_finished',
    ]);
    expect(run.journal.find((e) => e.event === 'step_skipped')).toMatchObject({
      reason: 'optional: target_absent: click: the target did not appear within 1500 ms',
    });
    expect(seen).toEqual([true]);
    const replay = await engine.replay({ run_id: run.id }, { mode: 'verify' });
    expect(replay.status).toBe('succeeded');
    expect(replay.journal.filter((e) => e.event === 'step_skipped')).toHaveLength(1);
    // The banner shown: the optional step runs as any other.
    expect((await engine.run({ spec }, { shown: true })).journal.some((e) => e.event === 'step_skipped')).toBe(false);
  });

  it('fails a step without optional on the same error, and never tells the tool it is optional', async () => {
    const { registry, seen } = tools();
    const { engine } = testEngine(registry);
    const run = await engine.run({ spec: specOf(registry, false) }, { shown: false });
    expect(run.status).toBe('failed');
    expect(run.journal.find((e) => e.event === 'run_finished')).toMatchObject({ error: { code: 'target_absent', step: 'accept' } });
    expect(seen).toEqual([undefined]);
  });
});
