import { createRunScope } from './run-scope.js';
import type { Effect, StepWarning, ToolContext } from './types.js';

export interface RecordedLog {
  level: 'debug' | 'info' | 'warn';
  message: string;
  data?: unknown;
}

/** A ToolContext that records what a tool reported, for tests of tools and executors. */
export interface TestToolContext extends ToolContext {
  /** Every `ctx.effect(...)` call, in order. */
  readonly effects: Effect[];
  /** Every `ctx.warn(...)` call, in order. */
  readonly warnings: StepWarning[];
  /** Every logger call, in order. */
  readonly logs: RecordedLog[];
  /** End the "run": dispose the scope's resources as the runner does at run end (newest first). */
  close(): Promise<void>;
}

/**
 * A ToolContext for tests. Defaults: runId `test-run`, stepId `test-step`, attempt 1, a signal that never
 * aborts, timeoutMs 30000, cwd `process.cwd()` (pass a temp dir for fs tools), a fresh run scope, no
 * artifact sink, no options. `effect`, `warn` and `logger` given in `overrides` are called as well as
 * recorded; any other override replaces the default.
 */
export function createTestToolContext(overrides: Partial<ToolContext> = {}): TestToolContext {
  const effects: Effect[] = [];
  const warnings: StepWarning[] = [];
  const logs: RecordedLog[] = [];
  const scope = createRunScope();
  const log = (level: RecordedLog['level']) => (message: string, data?: unknown) => {
    logs.push(data === undefined ? { level, message } : { level, message, data });
    overrides.logger?.[level](message, data);
  };
  return {
    runId: 'test-run',
    stepId: 'test-step',
    attempt: 1,
    signal: new AbortController().signal,
    timeoutMs: 30_000,
    cwd: process.cwd(),
    scope,
    ...overrides,
    effect(effect: Effect) {
      effects.push(effect);
      overrides.effect?.(effect);
    },
    warn(warning: StepWarning) {
      warnings.push(warning);
      overrides.warn?.(warning);
    },
    logger: { debug: log('debug'), info: log('info'), warn: log('warn') },
    effects,
    warnings,
    logs,
    close: () => scope.dispose(),
  };
}
