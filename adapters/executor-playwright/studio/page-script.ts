/**
 * The studio's capture script (browser code): bundled with its libraries into one IIFE by
 * scripts/build-capture-script.mjs (-> page-script.generated.ts) and injected into every page of a
 * studio context with `context.addInitScript`. It reports completed actions through the exposed
 * binding `__flowctlStudio` as raw ops: `click`, `fill` and `press` (typing and keys: page-typing.ts),
 * `select`, `drag` (an HTML5 drag and drop from its dragstart to its drop, or a pointer drag:
 * the button pressed on one element and released over another), and `extract` (picker.ts: once extract
 * mode is armed the element under the pointer is outlined with its text, and the click picks it).
 * Clicks on file inputs are not steps: the file chooser they
 * open is the service's (an `upload`), which asks this script for the input's target.
 * Everything is installed when the document is created, before the page's own scripts run.
 * Targets are computed here, ranked as Playwright's codegen ranks them: data-testid, ARIA role +
 * accessible name (dom-accessibility-api), label, exact text, a stable id, a stable class, a short CSS
 * path (@medv/finder). The primary matches exactly one element; up to three other unique strategies
 * follow as fallbacks. An extract's text is its output: never its primary, its last fallback. Nothing
 * here runs in frames other than the top one: a frame reports that it is refused.
 */
import { finder } from '@medv/finder';
import { computeAccessibleName, getRole } from 'dom-accessibility-api';
import { createPicker, type PickerMessage } from './picker.js';
import { installTyping, refuseFrameTyping } from './page-typing.js';

type Locator = { testid?: string; role?: string; name?: string; label?: string; text?: string; css?: string };
type Target = Locator & { fallbacks?: Locator[] };
type Message =
  | { kind: 'click'; target: Target }
  | { kind: 'fill'; target: Target; value?: string; secret?: boolean; field?: string }
  | { kind: 'typing'; target: Target; value?: string; secret?: boolean; field?: string }
  | { kind: 'press'; key: string; target?: Target }
  | { kind: 'select'; target: Target; value: string | string[] }
  | PickerMessage
  | { kind: 'drag'; source: Target; target: Target }
  | { kind: 'refused'; message: string };

type StudioWindow = Window & {
  __flowctlStudio?: (message: Message) => Promise<void>;
  __flowctlStudioExtract?: (field: string | null, all?: boolean) => void;
  __flowctlStudioTarget?: (el: Element) => Target | undefined;
  __flowctlStudioDragStarted?: () => boolean;
  __flowctlStudioInstalled?: boolean;
};

const w = window as StudioWindow;

function send(message: Message): void {
  const fn = w.__flowctlStudio;
  if (typeof fn === 'function') fn(message).catch(() => {});
}

const norm = (s: string | null | undefined): string => (s ?? '').replace(/\s+/g, ' ').trim();

function visible(el: Element): boolean {
  const check = (el as Element & { checkVisibility?: (o?: object) => boolean }).checkVisibility;
  if (typeof check === 'function') return check.call(el, { visibilityProperty: true });
  const rect = el.getBoundingClientRect();
  return rect.width > 0 || rect.height > 0;
}

function all(): Element[] {
  return [...document.querySelectorAll('*')].filter(visible);
}

/** Generated-looking ids (framework counters, hashes, long digit runs): never a locator. */
function stableIdent(id: string): boolean {
  if (id.length === 0 || id.length > 60) return false;
  if (/\d{5,}/.test(id)) return false;
  if (/[0-9a-f]{8,}/i.test(id) && /\d/.test(id)) return false;
  if (/^:r[0-9a-z]*:$/.test(id) || /^(ember|ext-gen|mui-|radix-|react-|headlessui-)/i.test(id)) return false;
  return /^[A-Za-z][\w-]*$/.test(id);
}

const SKIP_ROLES = new Set(['generic', 'presentation', 'none', 'paragraph', 'group', 'document', 'main', 'region', 'section', 'form']);

function roleOf(el: Element): string | null {
  const role = getRole(el);
  return role && !SKIP_ROLES.has(role) ? role : null;
}

/** The label text of a form control, as Playwright's getByLabel reads it: aria-label, aria-labelledby, <label>. */
function labelOf(el: Element): string {
  const aria = norm(el.getAttribute('aria-label'));
  if (aria) return aria;
  const by = el.getAttribute('aria-labelledby');
  if (by) {
    const text = norm(
      by
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' '),
    );
    if (text) return text;
  }
  const labels = (el as HTMLInputElement).labels;
  if (labels && labels.length > 0) return norm([...labels].map((l) => l.textContent).join(' '));
  return '';
}

/** Elements whose normalized text is exactly `text` and that have no child with that same text (the innermost). */
function textMatches(text: string): Element[] {
  return all().filter((el) => norm(el.textContent) === text && ![...el.children].some((c) => norm(c.textContent) === text));
}

/** Classes a page sets by state (active, selected, completed...): they come and go, so they never name an element. */
const STATEFUL_CLASS =
  /^(is-|has-|ng-|v-)|^(active|selected|current|checked|completed|done|disabled|enabled|hidden|visible|show|shown|open|opened|closed|expanded|collapsed|focus|focused|hover|hovered|pressed|loading|loaded|editing|error|invalid|valid|dirty|pristine|touched|untouched|even|odd|first|last|in|fade|highlighted)$|(--|__|-)(active|selected|current|checked|open|disabled|hidden|focus|focused|hover|hovered|expanded|collapsed)$/i;
/** Classes a build tool generates (CSS modules, CSS-in-JS hashes): they change with every build. */
const GENERATED_CLASS = /^(css|sc|jsx|emotion|svelte|styled|jss|tw|makeStyles)-|__[\w-]{5,}$|\d{4,}/i;

/** A class that names what an element is (`todo-count`), not its state or a build's hash. */
function stableClass(c: string): boolean {
  if (!stableIdent(c) || STATEFUL_CLASS.test(c) || GENERATED_CLASS.test(c)) return false;
  // A segment mixing letters with digits inside (`x1a2b`, `bdf3Bw`) is a hash.
  return !c.split(/[-_]/).some((part) => part.length >= 5 && /\d[A-Za-z]/.test(part));
}

function uniqueCss(css: string, el: Element): boolean {
  try {
    const found = document.querySelectorAll(css);
    return found.length === 1 && found[0] === el;
  } catch {
    return false;
  }
}

/** A selector of the element's stable classes that matches it alone: `.todo-count`, else `span.count`, else all of them. */
function classSelector(el: Element): string | undefined {
  const classes = [...el.classList].filter(stableClass);
  if (classes.length === 0) return undefined;
  const tag = CSS.escape(el.localName);
  const tries = [
    ...classes.map((c) => `.${CSS.escape(c)}`),
    ...classes.map((c) => `${tag}.${CSS.escape(c)}`),
    `${tag}${classes.map((c) => `.${CSS.escape(c)}`).join('')}`,
  ];
  return tries.find((css) => uniqueCss(css, el));
}

/** Up to three fallbacks follow the primary. */
const MAX_FALLBACKS = 3;

/**
 * Every strategy that names the element alone, in rank order: test id, ARIA role + name, label (form
 * controls) or exact text, a stable id, a stable class, a short CSS path (one that does not lean on
 * the element's own id, so a renamed id leaves it standing).
 */
function candidates(el: Element): Locator[] {
  const out: Locator[] = [];
  const testid = el.getAttribute('data-testid');
  if (testid && document.querySelectorAll(`[data-testid="${CSS.escape(testid)}"]`).length === 1) out.push({ testid });

  const role = roleOf(el);
  if (role) {
    const name = norm(computeAccessibleName(el));
    const same = all().filter((o) => roleOf(o) === role && (name === '' || norm(computeAccessibleName(o)) === name));
    if (same.length === 1 && same[0] === el) out.push(name ? { role, name } : { role });
  }

  if (el.matches('input, select, textarea, [contenteditable=""], [contenteditable="true"]')) {
    const label = labelOf(el);
    if (label) {
      const same = [...document.querySelectorAll('input, select, textarea, [aria-label], [aria-labelledby]')].filter((o) => visible(o) && labelOf(o) === label);
      if (same.length === 1 && same[0] === el) out.push({ label });
    }
  } else {
    const text = norm(el.textContent);
    if (text && text.length <= 80) {
      const found = textMatches(text);
      if (found.length === 1 && (found[0] === el || el.contains(found[0]!))) out.push({ text });
    }
  }

  if (el.id && stableIdent(el.id)) {
    const css = `#${CSS.escape(el.id)}`;
    if (document.querySelectorAll(css).length === 1) out.push({ css });
  }
  const byClass = classSelector(el);
  if (byClass && !out.some((l) => l.css === byClass)) out.push({ css: byClass });
  // With a primary and three fallbacks already, a path would never be kept (targetOf): not searched.
  if (out.length > MAX_FALLBACKS) return out;
  try {
    const css = finder(el, {
      idName: (name) => stableIdent(name) && name !== el.id,
      className: stableClass,
      attr: (name) => name === 'name' || name === 'type' || name === 'placeholder',
      timeoutMs: 200,
    });
    // Short, or the only CSS there is.
    if (css && !out.some((l) => l.css === css) && (css.length <= 100 || !out.some((l) => l.css !== undefined))) out.push({ css });
  } catch {
    // No unique CSS path within the time budget: the other strategies stand.
  }
  return out;
}

/**
 * The ranked target: the first candidate is the primary, the next ones its fallbacks. An extract's
 * text is its output (it changes with the inputs), as is a role's name read from that text: they are
 * never its primary, and come last among its fallbacks. A list's container is named by neither (its
 * text is the items').
 */
function targetOf(el: Element, purpose: 'action' | 'extract' | 'container'): Target | undefined {
  const found = candidates(el);
  let ranked = found;
  let tail: Locator[] = [];
  if (purpose !== 'action') {
    const text = norm(el.textContent);
    const fromOutput = (l: Locator) => l.text !== undefined || (l.role !== undefined && l.name !== undefined && text.includes(l.name));
    ranked = found.filter((l) => !fromOutput(l));
    if (purpose === 'extract') tail = found.filter(fromOutput);
  }
  const [primary, ...rest] = ranked;
  if (!primary) return undefined;
  const fallbacks = [...rest.slice(0, Math.max(0, MAX_FALLBACKS - tail.length)), ...tail].slice(0, MAX_FALLBACKS);
  return fallbacks.length > 0 ? { ...primary, fallbacks } : { ...primary };
}

const TEXT_INPUT = /^(text|email|password|search|tel|url|number|date|time|datetime-local|month|week|color)$/;

function isTextEntry(el: Element): el is HTMLInputElement | HTMLTextAreaElement {
  if (el instanceof HTMLTextAreaElement) return true;
  return el instanceof HTMLInputElement && TEXT_INPUT.test(el.type || 'text');
}

/** The element a click acts on: the nearest interactive ancestor, as codegen retargets. */
function actionable(el: Element): Element {
  return (
    el.closest(
      'button, a[href], input, select, textarea, label, summary, [role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem], [role=option], [data-testid]',
    ) ?? el
  );
}

const isFileInput = (el: Element | null | undefined): boolean => el instanceof HTMLInputElement && el.type === 'file';

/**
 * Where a drag ends, as a step names it: the element under the pointer, or an ancestor (up to three
 * levels) that has an identity of its own (a test id, an aria-label, a stable id), which is the drop
 * zone more often than the child the pointer happens to be over.
 */
function dropElement(el: Element): Element {
  let at: Element | null = el;
  for (let depth = 0; at && depth <= 3 && at !== document.body && at !== document.documentElement; depth++, at = at.parentElement) {
    if (at.hasAttribute('data-testid') || at.hasAttribute('aria-label') || (at.id && stableIdent(at.id))) return at;
  }
  return el;
}

/** A hook on window that the page's own scripts cannot replace. */
function hook<K extends keyof StudioWindow>(name: K, value: StudioWindow[K]): void {
  Object.defineProperty(w, name, { value, writable: false, configurable: false, enumerable: false });
}

function install(): void {
  if (w.__flowctlStudioInstalled) return;
  w.__flowctlStudioInstalled = true;
  if (window !== window.top) {
    // Frames are not captured: say so once, on the first interaction.
    document.addEventListener(
      'mousedown',
      () => send({ kind: 'refused', message: "actions inside frames (iframes) are not captured: open the frame's page itself with the address bar" }),
      { capture: true, once: true },
    );
    refuseFrameTyping(send);
    return;
  }
  // Extract mode (picker.ts): installed first, so its listeners on window run before the ones below.
  const picker = createPicker({ send, targetOf, stableClass });
  const extracting = () => picker.armed();
  hook('__flowctlStudioExtract', (field: string | null, all?: boolean) => picker.arm(typeof field === 'string' ? field : null, all === true));
  // Typing and keys (fill, press): page-typing.ts; paused while extract mode is armed (the picker takes the keys).
  installTyping({ send, targetOf: (el) => targetOf(el, 'action'), labelOf, paused: extracting });
  // The file chooser's input, named as a step names it (the service asks when the chooser opens).
  hook('__flowctlStudioTarget', (el: Element) => (el instanceof Element ? targetOf(el, 'action') : undefined));
  // Drags. HTML5: the source is named at its dragstart, the drop zone at its drop (before the page's
  // own handlers change anything); a drag that is not dropped on a target that takes it is no step.
  // The service relays an HTML5 drag with CDP drag events and asks `__flowctlStudioDragStarted` after
  // a move with the button held whether one began.
  let press: { el: Element; x: number; y: number; source?: Target | undefined; moved: boolean } | null = null;
  let swallowClick = false;
  let dragSource: Target | undefined | null = null;
  let dragStart: DragEvent | null = null;
  hook('__flowctlStudioDragStarted', () => {
    const started = dragStart !== null && !dragStart.defaultPrevented;
    dragStart = null;
    return started;
  });
  document.addEventListener(
    'dragstart',
    (event) => {
      if (extracting()) return;
      press = null;
      dragStart = event;
      const origin = event.target instanceof Element ? event.target : event.target instanceof Node ? event.target.parentElement : null;
      const el = origin ? (origin.closest('[draggable="true"]') ?? origin) : null;
      dragSource = el ? targetOf(el, 'action') : undefined;
    },
    { capture: true },
  );
  document.addEventListener(
    'drop',
    (event) => {
      const source = dragSource;
      dragSource = null;
      if (source === null || !(event.target instanceof Element)) return;
      const target = targetOf(dropElement(event.target), 'action');
      if (source && target) send({ kind: 'drag', source, target });
      else send({ kind: 'refused', message: 'the drag could not be captured: no locator found for its source or its drop target' });
    },
    { capture: true },
  );
  document.addEventListener('dragend', () => (dragSource = null), { capture: true });

  // Pointer drags (libraries that move things on mousemove, not HTML5): the button pressed on one
  // element, moved more than 8 px, and released over another. Selecting text this way is no step.
  document.addEventListener(
    'mousedown',
    (event) => {
      swallowClick = false;
      press = null;
      if (extracting() || event.button !== 0 || !(event.target instanceof Element)) return;
      const el = actionable(event.target);
      if (isTextEntry(el) || el instanceof HTMLSelectElement || el instanceof HTMLOptionElement) return;
      press = { el, x: event.clientX, y: event.clientY, moved: false };
    },
    { capture: true },
  );
  document.addEventListener(
    'mousemove',
    (event) => {
      if (!press || press.moved || (event.buttons & 1) === 0) return;
      if (Math.hypot(event.clientX - press.x, event.clientY - press.y) <= 8) return;
      press.moved = true;
      // Named before the page's own handlers (a sortable list) move it.
      press.source = targetOf(press.el, 'action');
    },
    { capture: true, passive: true },
  );
  document.addEventListener(
    'mouseup',
    (event) => {
      const p = press;
      press = null;
      if (!p?.moved || event.button !== 0 || extracting()) return;
      const selection = window.getSelection();
      if (selection && !selection.isCollapsed && selection.toString().trim() !== '') return;
      // Under the pointer, leaving out what is dragged (a library may move it along with the pointer).
      const under = document
        .elementsFromPoint(event.clientX, event.clientY)
        .find((el) => !p.el.contains(el) && el !== document.documentElement && el !== document.body);
      if (!under) return;
      const drop = dropElement(under);
      if (drop === p.el || drop.contains(p.el)) return;
      const target = targetOf(drop, 'action');
      if (!p.source || !target) return send({ kind: 'refused', message: 'the drag could not be captured: no locator found for its source or its drop target' });
      // The click the browser sends after the release (on the two elements' common ancestor) is part of the drag.
      swallowClick = true;
      send({ kind: 'drag', source: p.source, target });
    },
    { capture: true },
  );

  document.addEventListener(
    'click',
    (event) => {
      const origin = event.target instanceof Element ? event.target : null;
      if (!origin) return;
      if (swallowClick && !extracting()) {
        swallowClick = false;
        return;
      }
      if (extracting()) return;
      const el = actionable(origin);
      // Focusing a field (a contenteditable too) or opening a select is not a step: its fill or select is.
      if (isTextEntry(el) || el instanceof HTMLSelectElement || el instanceof HTMLOptionElement || (origin instanceof HTMLElement && origin.isContentEditable))
        return;
      if (el instanceof HTMLLabelElement && el.control && (isTextEntry(el.control) || el.control instanceof HTMLSelectElement)) return;
      // A file input's click opens its chooser: what is captured is the upload the chooser ends with.
      if (isFileInput(el) || (el instanceof HTMLLabelElement && isFileInput(el.control))) return;
      const target = targetOf(el, 'action');
      if (target) send({ kind: 'click', target });
    },
    { capture: true },
  );

  document.addEventListener(
    'change',
    (event) => {
      const el = event.target;
      if (el instanceof HTMLSelectElement) {
        const values = [...el.selectedOptions].map((o) => o.value);
        const target = targetOf(el, 'action');
        if (target) send({ kind: 'select', target, value: el.multiple ? values : (values[0] ?? '') });
        return;
      }
    },
    { capture: true },
  );
}

// At once, when the document is created: the listeners are on `document` (there before any element)
// and the extract hook is defined before the page's own scripts run.
install();
