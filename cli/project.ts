import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createEnvSecrets } from '../adapters/secrets-env/index.js';
import { createFsStorage } from '../adapters/storage-fs/index.js';
import {
  FlowError,
  builtinTools,
  createEngine,
  createToolRegistry,
  type Engine,
  type Executor,
  type FlowSpec,
  type Run,
  type SecretStore,
  type Storage,
  type Tool,
  type ToolContext,
  type ToolRegistry,
} from '../src/engine-entry.js';
import type { CliIO } from './io.js';
import { takeEarlyBrowser } from './early-browser.js';
import { INSTALLED_REGISTRY_DIR, STORE_DIR } from './layout.js';
import { readFlowArg } from './flow-files.js';
import { loadedToolRefs, loadFlowRead, registerCliTools } from './resolve-flow.js';

/**
 * Shared pieces of the commands that touch a project: the run store, the tool registry, the sandbox,
 * the engine. Everything heavy (Chromium's driver, packs, sandboxes) is imported only when a flow
 * needs it, so a pure `flowctl run` starts fast.
 */

export { INSTALLED_REGISTRY_DIR, STORE_DIR };

/** The fs store `.flowctl/` of a project folder (created on first write). */
export function openStore(cwd: string): Storage {
  return createFsStorage({ dir: join(cwd, STORE_DIR) });
}

/** Whether a flow's steps use browser tools (`browser/*`), so the Playwright executor must be loaded. */
export function usesBrowserTools(refs: Iterable<string>): boolean {
  for (const ref of refs) if (ref.startsWith('browser/')) return true;
  return false;
}

export function specToolRefs(spec: FlowSpec): string[] {
  return spec.steps.map((s) => s.tool.ref);
}

export interface ProjectToolsOptions {
  cwd: string;
  /** Load the browser tools (lazily imports adapters/executor-playwright). Default false. */
  browser?: boolean;
  /** With `browser`: start Chromium at once (PlaywrightExecutor.warmUp), before the tools are defined. Default false. */
  warmBrowser?: boolean;
  /**
   * A pack registry whose composite tools join the registry. Default: `.flowctl/registry` when that
   * folder exists (where `flowctl install` puts packs), else none. `''` means none.
   */
  registryDir?: string;
  /** Runs a composite pack tool's flow; required when a registry has composite tools. */
  runFlow?: (spec: FlowSpec, inputs: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>;
  /** The process exits right after dispose (CliIO.exitsAfter): the browser is left to that exit. */
  exiting?: boolean;
}

export interface ProjectTools {
  registry: ToolRegistry;
  /** The tools beyond the builtins (browser, packs). */
  extra: Tool[];
  /** Starts the browser now when the browser tools were loaded (see PlaywrightExecutor.warmUp); else nothing. */
  warmBrowser(): void;
  /** Closes the browser when one was launched. Idempotent. */
  dispose(): Promise<void>;
}

/** builtins + browser tools (only when asked) + the composite tools of installed packs. */
export async function projectTools(options: ProjectToolsOptions): Promise<ProjectTools> {
  const lists: Tool[][] = [builtinTools()];
  const disposers: (() => Promise<void>)[] = [];
  let warmBrowser = () => {};
  if (options.browser) {
    const { createPlaywrightExecutor, createPlaywrightExecutorAdopting } = await import('../adapters/executor-playwright/executor.js');
    // Chromium may be launching already (flowctl run's early start): the executor adopts it.
    const launched = takeEarlyBrowser();
    const executor = launched ? createPlaywrightExecutorAdopting(launched) : createPlaywrightExecutor();
    // Before the tools are defined (that checks their contracts): Chromium starts in the meantime.
    if (options.warmBrowser) executor.warmUp();
    lists.push(executor.tools);
    disposers.push(() => executor.dispose({ exiting: options.exiting === true }));
    warmBrowser = () => executor.warmUp();
  }
  const registryDir = options.registryDir ?? (existsSync(join(options.cwd, INSTALLED_REGISTRY_DIR)) ? INSTALLED_REGISTRY_DIR : undefined);
  if (registryDir) {
    const { loadRegistryTools } = await import('../src/packs/index.js');
    const runFlow = options.runFlow;
    lists.push(
      await loadRegistryTools(resolve(options.cwd, registryDir), {
        runtimeTools: createToolRegistry(...lists),
        runFlow: async (spec, inputs, ctx) => {
          if (!runFlow) throw new FlowError('pack_tool_unavailable', `[flowctl] [cli] composite tools cannot run here (flow ${spec.name})`);
          return runFlow(spec, inputs, ctx);
        },
      }),
    );
  }
  let disposed = false;
  return {
    registry: createToolRegistry(...lists),
    extra: lists.slice(1).flat(),
    warmBrowser,
    async dispose() {
      if (disposed) return;
      disposed = true;
      for (const d of disposers) await d();
    },
  };
}

/**
 * The sandbox provider for shell and fs tools: `--sandbox` wins over `FLOWCTL_SANDBOX`; neither means
 * in-process. An unknown name is FlowError `unknown_sandbox` listing the known providers (exit 2).
 */
export async function openSandbox(flag: string | undefined, env: Record<string, string | undefined>): Promise<Executor | undefined> {
  const name = flag ?? (env.FLOWCTL_SANDBOX ? env.FLOWCTL_SANDBOX : undefined);
  if (name === undefined) return undefined;
  const { createSandbox } = await import('./sandbox.js');
  return createSandbox(name);
}

export interface ProjectOptions {
  /** Load the browser tools. Default false (see usesBrowserTools / flowUsesBrowser). */
  browser?: boolean;
  /** With `browser`: start Chromium while the project opens (see ProjectToolsOptions.warmBrowser). Default false. */
  warmBrowser?: boolean;
  /** A sandbox provider for shell and fs tools. Default none (in-process). */
  executor?: Executor;
  /**
   * Load the tools of installed packs (`.flowctl/registry`). Default true. `run` loads them only for
   * a flow that uses a tool the runtime does not have (see toolNeeds), and commands that only read
   * runs (runs, inspect, hermetic replay) never: a large or broken registry must not slow or fail them.
   */
  packs?: boolean;
}

export interface Project {
  /** builtins + browser tools (when asked) + installed pack tools; also registered for compiling. */
  tools: ToolRegistry;
  /** The engine over `.flowctl/`, created on first use (so `--dry` never opens the store). */
  engine(): Engine;
  /** The secret store runs resolve `secret:<name>` from (`FLOWCTL_SECRET_<NAME>`). */
  secrets: SecretStore;
  /** Starts Chromium now when the browser tools were loaded (a run about to take browser steps); else nothing. */
  warmBrowser(): void;
  /** Disposes the engine (its storage and executor) and the browser. Idempotent. */
  close(): Promise<void>;
}

/**
 * The CLI's engine, with the store's dead runs recovered before anything reads them. The engine's own
 * sweep at start runs in the background, so a first `flowctl runs` right after a killed `flowctl run`
 * could still list that run as `running`; here the open runs one recovery (runs whose process on this
 * machine is gone end `failed` with `worker_lost`, docs/journal.md) and every read waits for it. A
 * recovery that fails is reported on stderr and the reads go on (the runs stay as stored).
 */
function recoveredFirst(engine: Engine, io: CliIO): Engine {
  const recovered = engine.recover().then(
    () => undefined,
    (err: unknown) => {
      io.stderr.write(`flowctl: recovering the runs of dead processes in ${STORE_DIR}/ failed: ${err instanceof Error ? err.message : String(err)}\n`);
    },
  );
  return {
    ...engine,
    getRun: async (id) => (await recovered, engine.getRun(id)),
    listRuns: async (query) => (await recovered, engine.listRuns(query)),
    replay: async (source, replayOptions) => (await recovered, engine.replay(source, replayOptions)),
    cancel: async (runId, cancelOptions) => (await recovered, engine.cancel(runId, cancelOptions)),
    watch: (runId, watchOptions) => ({
      async *[Symbol.asyncIterator]() {
        await recovered;
        yield* engine.watch(runId, watchOptions);
      },
    }),
    // Disposing the storage under a recovery in flight would fail it: the recovery ends first.
    dispose: async () => (await recovered, engine.dispose()),
  };
}

/**
 * A project session: the tools (registered with resolve-flow so `<flow>` compiles against them) and
 * an engine over the `.flowctl/` store with secrets from `FLOWCTL_SECRET_<NAME>` and relative fs
 * paths resolved against the project folder.
 */
export async function openProject(io: CliIO, options: ProjectOptions = {}): Promise<Project> {
  let engine: Engine | undefined;
  let nested: Engine | undefined;
  const secrets = createEnvSecrets({ env: io.env });
  const getEngine = (): Engine => {
    engine ??= recoveredFirst(
      createEngine({ storage: openStore(io.cwd), executor: options.executor, secrets, tools: tools.registry, cwd: io.cwd, recoverDeadPids: true }),
      io,
    );
    return engine;
  };
  const tools = await projectTools({
    cwd: io.cwd,
    browser: options.browser,
    warmBrowser: options.warmBrowser,
    exiting: io.exitsAfter === true,
    registryDir: options.packs === false ? '' : undefined,
    // A composite pack tool runs its flow as a nested run on an engine of its own over memory
    // storage: the calling step's journal entry holds its result, and `runs last` keeps naming the
    // run the user started. Its outward steps are covered by the calling step's confirmation (the
    // composite contract declares their capabilities) and it stops with the calling step.
    runFlow: async (spec, inputs, ctx) => {
      if (!nested) {
        const { createMemoryStorage } = await import('../adapters/storage-memory/index.js');
        // The sandbox is shared with the outer engine, which alone disposes it.
        const shared: Executor | undefined = options.executor && {
          name: options.executor.name,
          accepts: (tool) => options.executor!.accepts(tool),
          execute: (tool, input, toolCtx) => options.executor!.execute(tool, input, toolCtx),
        };
        nested = createEngine({ storage: createMemoryStorage(), executor: shared, secrets, tools: tools.registry, cwd: io.cwd });
      }
      const run: Run = await nested.run({ spec }, inputs, { signal: ctx.signal });
      if (run.status !== 'succeeded') {
        const finished = run.journal.find((e) => e.event === 'run_finished');
        const error = finished?.event === 'run_finished' ? finished.error : undefined;
        throw new FlowError(error?.code ?? 'composite_failed', `[flowctl] [cli] flow ${spec.name} ${run.status}${error ? `: ${error.message}` : ''}`, {
          data: { retryable: false, ...(error?.step ? { step: error.step } : {}) },
        });
      }
      return run.output;
    },
  });
  registerCliTools(tools.extra);
  let closed = false;
  return {
    tools: tools.registry,
    engine: getEngine,
    secrets,
    warmBrowser: tools.warmBrowser,
    async close() {
      if (closed) return;
      closed = true;
      // The engine (its store, the sandbox) and the browser close side by side: a finished run needs
      // neither any more. Both are always closed; the first failure is rethrown.
      const engines = async () => {
        await nested?.dispose();
        if (engine) await engine.dispose();
        else await options.executor?.dispose?.();
      };
      const [first, second] = await Promise.allSettled([engines(), tools.dispose()]);
      if (first.status === 'rejected') throw first.reason;
      if (second.status === 'rejected') throw second.reason;
    },
  };
}

/**
 * The tool refs (`ref` without the version) a `<flow>` argument's steps use, read from the loaded
 * Flow before compiling (compiling needs the right tools registered first). A flow that does not load
 * gives none: compiling it reports the real problem.
 */
export async function flowToolRefs(arg: string, io: CliIO): Promise<string[]> {
  let read;
  try {
    read = await readFlowArg(arg, io);
  } catch {
    return [];
  }
  return loadedToolRefs(await loadFlowRead(read));
}

/** Whether the flow a `<flow>` argument names uses browser tools (serve, mcp and schedule ask this). */
export async function flowUsesBrowser(arg: string, io: CliIO): Promise<boolean> {
  return usesBrowserTools(await flowToolRefs(arg, io));
}

/**
 * What a flow with these tool refs needs loaded: the browser tools for `browser/*`, installed packs
 * for any ref that is neither built in nor a browser tool. A pure flow loads neither.
 */
export function toolNeeds(refs: readonly string[]): { browser: boolean; packs: boolean } {
  const builtin = new Set(builtinTools().map((t) => t.contract.ref));
  return {
    browser: usesBrowserTools(refs),
    packs: refs.some((r) => !builtin.has(r) && !r.startsWith('browser/')),
  };
}

/**
 * A `<run-id>` argument: a stored run's id, or `last` for the newest run (the id `flowctl runs last`
 * prints). FlowError `run_not_found` (exit 2) otherwise.
 */
export async function resolveRunId(engine: Engine, arg: string): Promise<string> {
  if (arg === 'last') {
    const [newest] = await engine.listRuns({ limit: 1 });
    if (!newest) throw new FlowError('run_not_found', '[flowctl] there are no runs in .flowctl/ yet');
    return newest.id;
  }
  return arg;
}

/** The stored Run, or FlowError `run_not_found` naming the id. */
export async function getRunOrThrow(engine: Engine, id: string): Promise<Run> {
  const run = /^[A-Za-z0-9_-]{1,128}$/.test(id) ? await engine.getRun(id) : undefined;
  if (!run) throw new FlowError('run_not_found', `[flowctl] run "${id}" not found in .flowctl/ (see "flowctl runs")`, { data: { run_id: id } });
  return run;
}

/**
 * Ctrl-C (SIGINT) or SIGTERM during a run cancels it through the engine, so its journal ends with
 * `run_finished` (status `canceled`) instead of stopping mid-step. A second signal exits at once.
 * Returns the signal to pass in RunOptions and a function that removes the handlers.
 */
export function cancelOnSignals(io: CliIO): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    io.stderr.write(`\nflowctl: ${name}: canceling the run (again to exit at once)\n`);
    controller.abort(new FlowError('canceled', `[flowctl] [cli] canceled by ${name}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
