import { createSubprocessSandbox } from '../../adapters/sandbox-subprocess/index.js';
import { describeExecutorConformance } from '../../testing/index.js';
import type { Executor } from '../../src/ports/executor.js';

// The Executor suite (flowctl/testing) on the subprocess sandbox provider and on a reference
// executor that runs every tool in-process, as the engine does when no provider takes a tool: the
// suite's expectations are the in-process behaviour, so both must pass.

const inProcess: Executor = {
  name: 'in-process (reference)',
  accepts: () => true,
  execute: (tool, input, ctx) => tool.run(input, ctx),
};

describeExecutorConformance({ name: 'in-process reference', create: () => ({ ...inProcess }) });
describeExecutorConformance({ name: 'sandbox-subprocess', create: () => createSubprocessSandbox({ timeoutMs: 60_000 }) });
