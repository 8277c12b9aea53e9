import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Executor } from '../src/ports/executor.js';
import { builtinTools } from '../src/tools/builtins/index.js';
import { defineTool } from '../src/tools/contract.js';
import { createTestToolContext } from '../src/tools/testing-context.js';
import type { Tool } from '../src/tools/types.js';
import { SUITE_TIMEOUT_MS, within } from './bounded.js';

/**
 * The Executor port's promises (src/ports/executor.ts, docs/sandbox.md): an executor runs the tools it
 * `accepts` with the tool's own contract (same outputs and error codes as the tool in-process, effects
 * reported through `ctx.effect`); the steps of one run share what the run shares (files written by
 * one step are read by the next); a tool it does not accept is refused with a FlowError, never run;
 * an aborted call rejects; `dispose` can be called twice.
 *
 * Built-in tools the executor does not accept are skipped, so a provider for a subset still passes.
 */
export interface ExecutorConformanceOptions {
  name: string;
  create: () => Promise<Executor> | Executor;
}

const tools = Object.fromEntries(builtinTools().map((t) => [t.contract.ref, t])) as Record<string, Tool>;

async function outcome(p: Promise<unknown>): Promise<{ ok: true; value: unknown } | { ok: false; code: string | undefined; message: string }> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    return { ok: false, code: (err as { code?: string }).code, message: String((err as Error).message ?? err) };
  }
}

export function describeExecutorConformance(options: ExecutorConformanceOptions): void {
  describe(`executor conformance: ${options.name}`, { timeout: SUITE_TIMEOUT_MS }, () => {
    const withExecutor = async (fn: (executor: Executor, cwd: string) => Promise<void>) => {
      const executor = await options.create();
      const cwd = await mkdtemp(join(tmpdir(), 'flowctl-executor-conf-'));
      try {
        await fn(executor, cwd);
      } finally {
        await executor.dispose?.();
        await rm(cwd, { recursive: true, force: true });
      }
    };

    it('has a name, and accepts() is a stable yes or no for every built-in tool', async () => {
      await withExecutor(async (executor) => {
        expect(typeof executor.name).toBe('string');
        expect(executor.name.length).toBeGreaterThan(0);
        for (const tool of builtinTools()) {
          const first = executor.accepts(tool);
          expect(typeof first).toBe('boolean');
          expect(executor.accepts(tool)).toBe(first);
        }
      });
    });

    it('refuses a tool it does not accept with a FlowError, without running it', async () => {
      await withExecutor(async (executor) => {
        let ran = false;
        const foreign = defineTool(
          {
            ref: 'conformance/not-accepted',
            version: '1.0.0',
            description: 'never run by a sandbox',
            input_schema: { type: 'object' },
            output_schema: { type: 'object' },
            capabilities: ['net', 'browser'],
          },
          async () => {
            ran = true;
            return {};
          },
        );
        if (executor.accepts(foreign)) return; // an in-process executor takes everything
        const out = await outcome(executor.execute(foreign, {}, createTestToolContext()));
        expect(out.ok).toBe(false);
        expect(out.ok ? undefined : out.code).toBeTruthy();
        expect(ran).toBe(false);
      });
    });

    it("fs tools: the steps of one run share files; effects and outputs are the tool's own", async () => {
      await withExecutor(async (executor, cwd) => {
        if (!executor.accepts(tools['fs/write']!) || !executor.accepts(tools['fs/read']!)) return;
        const ctx = createTestToolContext({ cwd });
        try {
          const written = await executor.execute(tools['fs/write']!, { path: 'dir/a.txt', content: 'conformance ✓' }, ctx);
          expect(written).toMatchObject({ path: 'dir/a.txt' });
          const read = await executor.execute(tools['fs/read']!, { path: 'dir/a.txt' }, { ...ctx, stepId: 'step-2' });
          expect(read).toMatchObject({ content: 'conformance ✓' });
          expect(ctx.effects).toEqual([{ kind: 'fs', target: 'dir/a.txt' }]);
        } finally {
          await ctx.close();
        }
      });
    });

    it('a failing call rejects with the same code as the tool in-process', async () => {
      await withExecutor(async (executor, cwd) => {
        if (!executor.accepts(tools['fs/read']!)) return;
        const inProcess = await outcome(tools['fs/read']!.run({ path: 'missing.txt' }, createTestToolContext({ cwd })));
        const ctx = createTestToolContext({ cwd });
        try {
          const viaExecutor = await outcome(executor.execute(tools['fs/read']!, { path: 'missing.txt' }, ctx));
          expect(inProcess.ok).toBe(false);
          expect(viaExecutor.ok).toBe(false);
          expect(viaExecutor.ok ? undefined : viaExecutor.code).toBe(inProcess.ok ? undefined : inProcess.code);
        } finally {
          await ctx.close();
        }
      });
    });

    it('shell/exec runs the program with its arguments and reports the spawn effect', async () => {
      await withExecutor(async (executor, cwd) => {
        if (!executor.accepts(tools['shell/exec']!)) return;
        const ctx = createTestToolContext({ cwd });
        try {
          const out = await executor.execute(
            tools['shell/exec']!,
            { command: process.execPath, args: ['-e', 'process.stdout.write(process.argv[1])', 'conformance arg'] },
            ctx,
          );
          expect(out).toMatchObject({ exit_code: 0, stdout: 'conformance arg' });
          expect(ctx.effects).toEqual([{ kind: 'spawn', target: process.execPath }]);
        } finally {
          await ctx.close();
        }
      });
    });

    it('a call whose signal is aborted rejects, before or during the call', async () => {
      await withExecutor(async (executor, cwd) => {
        if (!executor.accepts(tools['shell/exec']!)) return;
        const before = new AbortController();
        before.abort(new Error('conformance: aborted before'));
        const ctx1 = createTestToolContext({ cwd, signal: before.signal });
        const early = await outcome(executor.execute(tools['shell/exec']!, { command: process.execPath, args: ['-e', ''] }, ctx1));
        expect(early.ok).toBe(false);
        await ctx1.close();

        // Aborted while the call is under way (wherever it has got to: the assertion holds either
        // way). The program itself would never end.
        const during = new AbortController();
        const ctx2 = createTestToolContext({ cwd, signal: during.signal });
        const call = outcome(executor.execute(tools['shell/exec']!, { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] }, ctx2));
        await new Promise((r) => setImmediate(r));
        during.abort(new Error('conformance: aborted during'));
        const late = await within(call, 'execute() of a program that never ends did not settle after its signal aborted');
        expect(late.ok).toBe(false);
        await ctx2.close();
      });
    });

    it('dispose can be called twice', async () => {
      const executor = await options.create();
      await executor.dispose?.();
      await executor.dispose?.();
    });
  });
}
