import type { Locator as PwLocator } from 'playwright-core';
import type { RunSession } from '../browser-pool.js';

/**
 * Paint a field black before a secret value goes into it, for as long as the page keeps the element:
 * screenshots mask such fields when they are taken (`s.masks`), but the run's live screencast shows
 * the page as Chromium renders it, so the field itself must never render the value (docs/browser.md,
 * "Screencast"). Inline `!important` declarations win over the page's
 * style sheets.
 */
const MASK_STYLE: readonly (readonly [string, string])[] = [
  ['color', 'transparent'],
  ['-webkit-text-fill-color', 'transparent'],
  ['text-shadow', 'none'],
  ['caret-color', 'transparent'],
  ['background-color', '#000'],
  ['background-image', 'none'],
];

export async function paintOver(loc: PwLocator, timeoutMs: number): Promise<void> {
  await loc.evaluate(
    (el, style) => {
      const css = (el as HTMLElement).style;
      if (css) for (const [name, value] of style) css.setProperty(name, value, 'important');
    },
    MASK_STYLE,
    { timeout: timeoutMs },
  );
}

/** What a screenshot blacks out: password inputs always, and every field of the current page a masked (secret) value went into. */
export function screenshotMask(s: RunSession): PwLocator[] {
  return [s.page.locator('input[type=password]'), ...s.masks.filter((m) => m.page() === s.page)];
}
