import type { Tool } from '../../src/tools/types.js';
import { extractTools } from './tools/extract.js';
import { inputTools } from './tools/input.js';
import { navigationTools } from './tools/navigation.js';
import type { BrowserToolsConfig } from './tools/step.js';
import { waitTool } from './tools/wait.js';

/**
 * The browser tools over one BrowserPool (see docs/browser.md), one family per file under tools/:
 * the step frame every tool runs in (step.ts), navigation, input, extract, wait, and the masking of
 * secret values (masking.ts) and the upload files (uploads.ts) they use.
 */
export function createBrowserTools(cfg: BrowserToolsConfig): Tool[] {
  const { navigate, switchPage } = navigationTools(cfg);
  const input = inputTools(cfg);
  const { extract, extract11, extract12 } = extractTools(cfg);
  const wait = waitTool(cfg);
  // The registry's order, as before the split: the 1.0 tools, their 1.1 versions, then the newer tools.
  return [
    navigate,
    input.click,
    input.fill,
    input.select,
    input.drag,
    input.upload,
    extract,
    input.click11,
    input.fill11,
    input.select11,
    input.drag11,
    input.upload11,
    extract11,
    input.press,
    input.hover,
    input.check,
    input.uncheck,
    wait,
    switchPage,
    extract12,
  ];
}
