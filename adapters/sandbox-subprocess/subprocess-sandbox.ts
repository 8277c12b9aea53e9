import type { ChildProcess } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowError } from '../../src/errors.js';
import type { Executor } from '../../src/ports/executor.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { abortError, contractDigest } from '../../src/tools/contract.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { callWorker } from './worker-process.js';

export interface SubprocessSandboxOptions {
  /** Time limit of one tool call; the worker is killed after it (`sandbox_timeout`). Default 60000. */
  timeoutMs?: number;
  /** Directory in which each run's sandbox root is created (a fresh temp dir per run). Default os.tmpdir(). */
  root?: string;
  /** Between asking a worker to stop (timeout, abort) and killing it. Default 2000. */
  graceMs?: number;
}

// Tells two sandboxes in one process apart in a run's scope, without randomness.
let instances = 0;

// The worker loads tools by ref from the package's own code, so it can run exactly the built-ins.
let builtinDigests: Set<string> | undefined;
function isBuiltin(tool: Tool): boolean {
  builtinDigests ??= new Set(builtinTools().map((t) => contractDigest(t.contract)));
  return builtinDigests.has(contractDigest(tool.contract));
}

/**
 * The `subprocess` sandbox provider. It takes the built-in tools whose contract declares `fs` or `spawn`
 * and neither `net` nor `browser` (fs/read, fs/write, shell/exec), and runs each call in a fresh Node
 * worker process whose root (ctx.cwd, process cwd, HOME, TMPDIR) is a temporary directory created once
 * per run and removed at run end. The worker runs under Node's permission model (reads: its code and the
 * root; writes: the root; child processes only for `spawn` tools). Other tools are not accepted, so the
 * engine runs them in-process (a pack's composite tool then runs its inner steps through the engine,
 * where the built-in fs and shell steps come back here); `execute` refuses them with
 * `sandbox_unsupported_tool`. See docs/sandbox.md.
 */
export function createSubprocessSandbox(options: SubprocessSandboxOptions = {}): Executor {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const graceMs = options.graceMs ?? 2_000;
  const parent = options.root ?? tmpdir();
  const key = `sandbox-subprocess:${++instances}:root`;
  const live = new Set<ChildProcess>();

  const rootFor = (ctx: ToolContext) =>
    ctx.scope.get(
      key,
      async () => realpath(await mkdtemp(join(parent, 'flowctl-sandbox-'))),
      (dir) => rm(dir, { recursive: true, force: true }),
    );

  return {
    name: 'subprocess',
    accepts(tool: Tool): boolean {
      const caps = tool.contract.capabilities;
      return (caps.includes('fs') || caps.includes('spawn')) && !caps.includes('net') && !caps.includes('browser') && isBuiltin(tool);
    },
    async execute(tool: Tool, input: unknown, ctx: ToolContext): Promise<unknown> {
      if (!this.accepts(tool)) {
        throw new FlowError(
          'sandbox_unsupported_tool',
          `[flowctl] [sandbox-subprocess] ${tool.contract.ref}@${tool.contract.version} is not a built-in shell or fs tool`,
          {
            data: { retryable: false },
          },
        );
      }
      if (ctx.signal.aborted) throw abortError(ctx.signal, 'sandbox-subprocess');
      const root = await rootFor(ctx);
      const answer = await callWorker(
        {
          type: 'call',
          ref: tool.contract.ref,
          version: tool.contract.version,
          contract_digest: contractDigest(tool.contract),
          input,
          ctx: {
            runId: ctx.runId,
            stepId: ctx.stepId,
            attempt: ctx.attempt,
            timeoutMs: Math.min(ctx.timeoutMs, timeoutMs),
            cwd: root,
            options: ctx.options,
          },
        },
        {
          root,
          allowSpawn: tool.contract.capabilities.includes('spawn'),
          timeoutMs,
          graceMs,
          signal: ctx.signal,
          abortReason: () => abortError(ctx.signal, 'sandbox-subprocess'),
          onMessage: (message) => {
            if (message.type === 'effect') ctx.effect(message.effect);
            else if (message.type === 'warning') ctx.warn(message.warning);
            else ctx.logger[message.level](message.message, message.data);
          },
          onSpawn: (child) => {
            live.add(child);
            child.on('exit', () => live.delete(child));
          },
        },
      );
      if (answer.ok) return answer.output;
      throw new FlowError(answer.error.code, answer.error.message, { data: answer.error.data });
    },
    async dispose(): Promise<void> {
      for (const child of live) child.kill('SIGKILL');
      live.clear();
    },
  };
}
