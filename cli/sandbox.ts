import { createSubprocessSandbox, type SubprocessSandboxOptions } from '../adapters/sandbox-subprocess/index.js';
import { FlowError, type Executor } from '../src/engine-entry.js';

/**
 * Sandbox providers by name, for `flowctl run --sandbox <provider>` and `FLOWCTL_SANDBOX`.
 * A provider is an Executor that takes the shell and fs tools (see docs/sandbox.md). The table is
 * the CLI's: the library never imports an adapter; embedders pass any Executor to `createEngine`.
 */
export interface SandboxOptions extends SubprocessSandboxOptions {}

const PROVIDERS: Record<string, (options: SandboxOptions) => Executor> = {
  subprocess: (options) => createSubprocessSandbox(options),
};

/** The known provider names, sorted. */
export function listSandboxProviders(): string[] {
  return Object.keys(PROVIDERS).sort();
}

/** Create the provider `name`; an unknown name throws FlowError `unknown_sandbox` listing the known ones. */
export function createSandbox(name: string, options: SandboxOptions = {}): Executor {
  const factory = Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
  if (!factory) {
    const known = listSandboxProviders();
    throw new FlowError('unknown_sandbox', `[flowctl] [sandbox] unknown sandbox provider "${name}"; known providers: ${known.join(', ')}`, {
      data: { name, known },
    });
  }
  return factory(options);
}
