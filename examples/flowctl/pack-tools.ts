import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIO } from './io.js';
import { registerCliTools } from './resolve-flow.js';

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
