import { registerLintRule } from '../src/flow/lint.js';
import { brittleLocatorRule, browserSemanticsRule } from '../src/record/lint.js';
import { createPlaywrightExecutor } from '../adapters/executor-playwright/index.js';
import './recording-loader.js';
import { registerCliTools } from './resolve-flow.js';

/**
 * The browser side of the CLI, registered once at start-up (main.ts imports this module):
 * - `.json` files are Recordings (recording-loader.ts);
 * - the browser tools' contracts join the registry `compile`, `emit` and `lint` resolve against (no browser
 *   is launched: the executor launches lazily, and these tools never run; `run` opens its own executor);
 * - `lint` reports brittle locators, lists without a container and optional steps nothing can skip.
 */
registerCliTools(createPlaywrightExecutor().tools);
registerLintRule(brittleLocatorRule);
registerLintRule(browserSemanticsRule);
