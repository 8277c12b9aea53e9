import { registerLintRule } from '../src/flow/lint.js';
import { loadRecordingSource } from '../src/record/flow-loader.js';
import { brittleLocatorRule, browserSemanticsRule } from '../src/record/lint.js';
import { createPlaywrightExecutor } from '../adapters/executor-playwright/index.js';
import { registerCliTools, registerFlowLoader } from './resolve-flow.js';

/**
 * The browser side of the CLI, registered once at start-up (main.ts imports this module):
 * - `.json` files are Recordings: a bare `<flow>` name tries `flows/<name>.yaml`, then `recordings/<name>.json`;
 * - the browser tools' contracts join the registry `compile`, `emit` and `lint` resolve against (no browser
 *   is launched: the executor launches lazily, and these tools never run; `run` opens its own executor);
 * - `lint` reports brittle locators, lists without a container and optional steps nothing can skip.
 */
registerFlowLoader('.json', {
  kind: 'recording',
  dir: 'recordings',
  load: (file) => loadRecordingSource(file.text, file.file),
});
registerCliTools(createPlaywrightExecutor().tools);
registerLintRule(brittleLocatorRule);
registerLintRule(browserSemanticsRule);
