// flowctl/adapters/executor-playwright: browser tools, the warm browser, locator drift, screencast.
export { createPlaywrightExecutor } from './executor.js';
export type { PlaywrightExecutor, PlaywrightExecutorOptions } from './executor.js';
export { BROWSER_CONTRACTS } from './contracts.js';
export type { BrowserToolName } from './contracts.js';
export { resolveBrowser, SYSTEM_CHROMIUM_PATHS } from './resolve-browser.js';
export type { ResolvedBrowser, ResolveBrowserOptions, BrowserSource } from './resolve-browser.js';
export { LAUNCH_FLAGS } from './launch.js';
export type { PoolStats } from './browser-pool.js';
export { APPEAR_WINDOW_MS, OPTIONAL_WINDOW_MS, stepBudgetMs } from './locate.js';
export type { Screencast, ScreencastFrame, ScreencastOptions } from './screencast.js';
export { createStudioBrowser, screencastQuality } from './studio/studio-browser.js';
export type { StudioBrowserOptions } from './studio/studio-browser.js';
