import type { Locator as PwLocator } from 'playwright-core';
import { toolError } from '../../src/tools/contract.js';

/**
 * "The page cannot do this": checks made before an op, so a target that can never take it fails at
 * once with a precise code instead of waiting out the step's budget (docs/browser.md, "Errors").
 */

const COMPONENT = 'executor-playwright';
/** How many options an `option_not_found` error lists. */
const OPTIONS_SHOWN = 50;

type SelectInfo = { select: false; tag: string } | { select: true; options: { value: string; label: string }[] };

function selectInfo(loc: PwLocator, timeoutMs: number): Promise<SelectInfo> {
  return loc.evaluate(
    (target): SelectInfo => {
      // As Playwright does: a <label> (or an element inside one) stands for the control it labels.
      const el = target instanceof HTMLSelectElement ? target : (target.closest('label')?.control ?? target);
      return el instanceof HTMLSelectElement
        ? { select: true, options: [...el.options].map((o) => ({ value: o.value, label: o.label })) }
        : { select: false, tag: el.tagName.toLowerCase() };
    },
    undefined,
    { timeout: timeoutMs },
  );
}

/**
 * Before a `select`: the target is a `<select>` (else `not_selectable`) and every wanted value is the
 * value or label of one of its options (else `option_not_found`, naming the value, unless it is a
 * secret, and the options the element has). Options a previous action is still loading get their
 * chance: when one is missing, the page is settled (`settle`) and the options read again.
 */
export async function checkSelect(loc: PwLocator, wanted: string[], timeoutMs: number, secret: boolean, settle: () => Promise<unknown>): Promise<void> {
  let info = await selectInfo(loc, timeoutMs);
  if (!info.select) {
    throw toolError('not_selectable', `[flowctl] [${COMPONENT}] select: the target is a <${info.tag}>, not a <select>`, {
      retryable: false,
      data: { tag: info.tag },
    });
  }
  const missing = (i: typeof info & { select: true }) => wanted.filter((v) => !i.options.some((o) => o.value === v || o.label === v));
  if (missing(info).length === 0) return;
  await settle();
  info = await selectInfo(loc, timeoutMs);
  if (!info.select) return; // replaced by something else meanwhile: let the op say what it finds
  const absent = missing(info);
  if (absent.length === 0) return;
  const options = info.options.slice(0, OPTIONS_SHOWN);
  const listed = options
    .map((o) => (o.label === o.value || o.label === '' ? JSON.stringify(o.value) : `${JSON.stringify(o.value)} (${JSON.stringify(o.label)})`))
    .join(', ');
  const more = info.options.length > OPTIONS_SHOWN ? `, and ${info.options.length - OPTIONS_SHOWN} more` : '';
  const which = secret ? 'the (secret) value' : absent.map((v) => JSON.stringify(v)).join(', ');
  throw toolError(
    'option_not_found',
    `[flowctl] [${COMPONENT}] select: no option has ${which} as its value or label; the <select> has ${info.options.length === 0 ? 'no options' : `options ${listed}${more}`}`,
    { retryable: false, data: { ...(secret ? {} : { value: absent }), options, option_count: info.options.length } },
  );
}

/**
 * For a `fill`: the target is an input that takes text, a textarea or contenteditable (else
 * `not_editable`, naming what it is). Asked before a secret fill (its mask is painted first), and after
 * Playwright refused a target, which it does at once: a plain fill pays no round trip for it.
 */
export async function checkEditable(loc: PwLocator, timeoutMs: number): Promise<void> {
  const what = await loc.evaluate(
    (target) => {
      // As Playwright does: a <label> (or an element inside one) stands for the control it labels.
      const own = ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName) || (target as HTMLElement).isContentEditable;
      const el = own ? target : (target.closest('label')?.control ?? target);
      const tag = el.tagName.toLowerCase();
      if ((el as HTMLElement).isContentEditable || tag === 'textarea') return null;
      if (tag !== 'input') return `a <${tag}>`;
      const type = (el as HTMLInputElement).type;
      const fillable = ['', 'text', 'password', 'email', 'number', 'search', 'tel', 'url', 'date', 'datetime-local', 'month', 'time', 'week', 'color', 'range'];
      return fillable.includes(type) ? null : `an <input type=${type}>`;
    },
    undefined,
    { timeout: timeoutMs },
  );
  if (what !== null) {
    throw toolError(
      'not_editable',
      `[flowctl] [${COMPONENT}] fill: the target is ${what}, which takes no typed text (fill takes an input, a textarea or a contenteditable element)`,
      {
        retryable: false,
        data: { element: what },
      },
    );
  }
}
