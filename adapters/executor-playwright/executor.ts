import type { Browser } from 'playwright-core';
import { FlowError } from '../../src/errors.js';
import type { Tool } from '../../src/tools/types.js';
import { BrowserPool, type PoolStats } from './browser-pool.js';
import { createScreencast, type Screencast, type ScreencastOptions } from './screencast.js';
import { createBrowserTools } from './tools.js';

export interface PlaywrightExecutorOptions {
  /**
   * Chromium to launch. Default: the `CHROMIUM_PATH` environment variable, else `/usr/bin/chromium` or
   * `/usr/bin/chromium-browser`, else the optional peer `@sparticuz/chromium`.
   */
  executablePath?: string;
  /** Connect to a running Chromium over CDP (`http://host:9222` or `ws://...`) instead of launching one. Default: launch. */
  cdpEndpoint?: string;
  /** Default true. */
  headless?: boolean;
  /** Extra Chromium flags, after the fixed ones (`--no-sandbox --disable-gpu ...`). Default none. */
  launchArgs?: string[];
  /** A JPEG screenshot after every successful browser step, stored as a run artifact (the step does not wait for the write). Default false. Per run: `toolOptions.browser.screenshots`. */
  screenshots?: boolean;
  /** Step budget when a step carries no timeout (the engine always sends one). Default 30000 ms. */
  defaultTimeoutMs?: number;
  /**
   * Locator drift: when no locator of a target matches on the settled page, how long to wait for one to
   * appear before failing with `locator_drift` (docs/browser.md, "Locator drift"). Default 2000 ms.
   */
  appearTimeoutMs?: number;
  /**
   * Optional steps (StepSpec `optional`): how long their target may take to appear on the settled
   * page before the step is skipped (`target_absent`, journaled `step_skipped`). Default 1500 ms.
   */
  optionalWindowMs?: number;
  /** Environment read for `CHROMIUM_PATH`. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Live frames. Default quality 60, every frame. */
  screencast?: ScreencastOptions;
  /**
   * The warm pool (docs/browser.md, "Warm pool"): how many fresh contexts (each with its blank page,
   * and its egress proxy when runs are guarded) to keep ready for the next runs, refilled in the
   * background. Each is handed to one run only and closed after it. Default 0 (each run makes its own).
   */
  warmContexts?: number;
}

export interface PlaywrightExecutor {
  /** The browser tools (docs/browser.md, "Tools"): the first seven at 1.0.0, later versions and tools beside them. Register them in the engine's tool registry. */
  tools: Tool[];
  /** Live frames of a run's page, captured only while someone subscribes. */
  screencast: Screencast;
  /** Counters: browsers launched, CDP connections, contexts open, created, closed and waiting warm. */
  stats(): PoolStats;
  /**
   * Launch (or connect to) the browser now rather than on the first browser step, and fill the warm
   * pool (`warmContexts`, when above 0) with contexts for runs under an egress guard (`{ guarded: true }`,
   * as the hosted service runs them) or without (the default). Returns at once: a process that knows it
   * will run browser steps starts Chromium while it does its other work. A failure is not reported
   * here: the first browser step tries again and fails with it.
   */
  warmUp(options?: { guarded?: boolean }): void;
  /**
   * Close every run context and the browser (or the CDP connection). Idempotent. `exiting: true` is for
   * a process that calls process.exit() right after: a browser the executor launched is not closed
   * gracefully but left to playwright-core's exit handler, which kills it and removes its profile
   * (some 80 ms sooner; docs/browser.md, "Ending the browser").
   */
  dispose(options?: { exiting?: boolean }): Promise<void>;
}

let instances = 0;

/**
 * The Playwright executor: browser tools over one warm browser per executor (create one per process),
 * launched on the first browser step, with a fresh isolated context per run (closed when the run ends,
 * also on failure and timeout, through the run's scope). Creating it launches nothing.
 */
export function createPlaywrightExecutor(options: PlaywrightExecutorOptions = {}): PlaywrightExecutor {
  return executorOn(options);
}

/**
 * For flowctl's CLI (cli/early-browser.ts), not the adapter's entry: an executor whose first browser is
 * one already being launched for it (launchChromium), used instead of launching one and closed on
 * dispose. Kept off the public options so the adapter's types never name playwright-core's.
 */
export function createPlaywrightExecutorAdopting(launched: Promise<Browser>, options: PlaywrightExecutorOptions = {}): PlaywrightExecutor {
  return executorOn({ ...options, launched });
}

function executorOn(options: PlaywrightExecutorOptions & { launched?: Promise<Browser> }): PlaywrightExecutor {
  const warm = options.warmContexts ?? 0;
  if (!Number.isInteger(warm) || warm < 0 || warm > 64) {
    throw new FlowError('invalid_options', `[flowctl] [executor-playwright] warmContexts must be an integer from 0 to 64, got ${String(warm)}`);
  }
  const pool = new BrowserPool(options);
  const screencast = createScreencast(pool, options.screencast);
  screencast.attach();
  const scopeKey = `executor-playwright:${++instances}`;
  // Defined on first use (defining checks every contract's schemas): a caller can warmUp() the browser
  // first, so Chromium starts while the tools are defined.
  let tools: Tool[] | undefined;
  return {
    get tools() {
      tools ??= createBrowserTools({
        pool,
        scopeKey,
        screenshots: options.screenshots ?? false,
        defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000,
        appearTimeoutMs: options.appearTimeoutMs,
        optionalWindowMs: options.optionalWindowMs,
      });
      return tools;
    },
    screencast: { subscribe: screencast.subscribe, active: screencast.active },
    stats: () => pool.stats(),
    // The pool's prewarm starts the browser and, with a pool size, fills it (browser-pool.ts).
    warmUp: (o = {}) => pool.prewarm(o.guarded ?? false),
    dispose: (o) => pool.dispose(o),
  };
}
