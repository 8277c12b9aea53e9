import type { Tool, ToolContext } from '../tools/types.js';

/**
 * Runs one resolved step's tool. The default executor runs tools in-process; a sandbox provider
 * (e.g. `subprocess`) takes the tools it `accepts` (shell and fs) and runs them elsewhere. The journal
 * records `name` as the provider of each step.
 */
export interface Executor {
  readonly name: string;
  /** Whether this executor runs this tool; when false the engine falls back to in-process. */
  accepts(tool: Tool): boolean;
  execute(tool: Tool, input: unknown, ctx: ToolContext): Promise<unknown>;
  dispose?(): Promise<void>;
}
