import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isFlowError, prettyJson } from '../src/engine-entry.js';
import { EXIT, type CliIO } from './io.js';
import { compileFlowArg, registerCliTools, type FlowCompilation } from './resolve-flow.js';

/**
 * `compile`, `emit` and `lint` resolve tools from installed packs too (`.flowctl/registry`, where
 * `flowctl install` puts them), so flows using pack tools compile and `compile` pins those tools in
 * flowctl.lock. Only their contracts are needed here: nothing runs.
 */
export async function registerInstalledPackTools(io: CliIO): Promise<void> {
  const { INSTALLED_REGISTRY_DIR, projectTools } = await import('./project.js');
  if (!existsSync(join(io.cwd, INSTALLED_REGISTRY_DIR))) return;
  const tools = await projectTools({ cwd: io.cwd });
  registerCliTools(tools.extra);
  await tools.dispose();
}

/**
 * Load and compile a `<flow>` argument for `compile`, `emit` and `lint`. A flow that cannot be
 * loaded (not found, unreadable) is reported on stderr (and as `{error}` on stdout with `json`) and
 * gives the exit code instead; a flow that loads but does not compile comes back with its diagnostics.
 */
export async function compileForCommand(io: CliIO, command: string, arg: string, json = false): Promise<FlowCompilation | number> {
  try {
    await registerInstalledPackTools(io);
    return await compileFlowArg(arg, io);
  } catch (err) {
    if (!isFlowError(err)) throw err;
    io.stderr.write(`flowctl ${command}: ${err.message}\n`);
    if (json) io.stdout.write(`${prettyJson({ error: err.toJSON() })}\n`);
    return EXIT.usage;
  }
}
