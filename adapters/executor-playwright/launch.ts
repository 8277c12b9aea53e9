import type { Browser } from 'playwright-core';
import { FlowError } from '../../src/errors.js';
import { peerErrorFrom } from '../../src/util/peer-check.js';
import { resolveBrowser, type ResolveBrowserOptions } from './resolve-browser.js';

/**
 * Launching Chromium, the one way the executor, the studio and `flowctl run`'s early start
 * (cli/early-browser.ts) do it. A small module on purpose: the CLI loads it before the rest of
 * flowctl, so the browser starts while the rest loads.
 */

/**
 * Features off in every launch. Chromium keeps only the last `--disable-features`, and ours comes after
 * Playwright's own: so this repeats Playwright 1.65's list (chromiumSwitches.ts, the first group) and
 * adds the browser's own background traffic (the second group): autofill and password-manager
 * servers, translation, optimization hints, safe-browsing and certificate-transparency updates, media
 * router discovery, network time, search preconnects, interest and field-trial fetches; and the third,
 * browser UI no automation sees.
 */
export const DISABLED_FEATURES: readonly string[] = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  // The browser's own traffic, beyond Playwright's list.
  'AutofillServerCommunication',
  'PasswordManagerOnboarding',
  'Translate',
  'DialMediaRouteProvider',
  'CertificateTransparencyComponentUpdater',
  'SafeBrowsingEnhancedProtection',
  'InterestFeedContentSuggestions',
  'OptimizationGuideModelDownloading',
  'OptimizationHintsFetching',
  'PrivacySandboxSettings4',
  // The address bar's suggestion popup as WebUI (Chromium 156 on): every new window, so every
  // context, loads it in a renderer of its own, which costs more CPU than a small page's whole run
  // (about 1.2 s per context measured on 2 cores; bench/RESULTS.md). Headless has no address bar
  // anyone types in. Both features are needed to stop it; the third is its full-popup variant.
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
];

/**
 * Chromium flags for every launch (NOTES.md: verified on these machines), the executor's and the
 * studio's: no sandbox or GPU, and no background networking of the browser's own (docs/tools.md,
 * "Policy": only the page's traffic is the page's).
 */
export const LAUNCH_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--no-default-browser-check',
  '--no-pings',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--safebrowsing-disable-auto-update',
  '--metrics-recording-only',
  '--disable-breakpad',
  '--disable-search-engine-choice-screen',
  `--disable-features=${DISABLED_FEATURES.join(',')}`,
];

export interface LaunchOptions extends Pick<ResolveBrowserOptions, 'executablePath' | 'env'> {
  headless?: boolean;
  /** Flags after LAUNCH_FLAGS. */
  launchArgs?: readonly string[];
}

/**
 * Launch Chromium (resolved as docs/browser.md says) with LAUNCH_FLAGS. FlowError `missing_peer`
 * without playwright-core, `browser_not_found` without a browser, `browser_launch_failed` (retryable)
 * when it does not start.
 */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  // Its file checks run while playwright-core loads; a missing peer is still reported first.
  const resolving = resolveBrowser(options);
  resolving.catch(() => {});
  // An optional peer: used without it, the executor says which package to install (docs/library.md).
  const { chromium } = await import('playwright-core').catch((err: unknown) => {
    throw peerErrorFrom(err, 'flowctl/adapters/executor-playwright', ['playwright-core']);
  });
  const { executablePath } = await resolving;
  try {
    return await chromium.launch({ executablePath, headless: options.headless ?? true, args: [...LAUNCH_FLAGS, ...(options.launchArgs ?? [])] });
  } catch (err) {
    throw new FlowError('browser_launch_failed', `[flowctl] [executor-playwright] cannot launch ${executablePath}: ${firstLine(err)}`, {
      data: { retryable: true },
      cause: err,
    });
  }
}

/** First line of an error message: Playwright appends call logs that can be long. */
export function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0]!;
}
