/**
 * Typing capture (browser code, part of the studio's capture script: page-script.ts installs it).
 * Typing is never lost: a value the user typed into a text entry (an `<input>` of a text-like type, a
 * `<textarea>`, a `contenteditable` element, whose value is its `innerText`) becomes one `fill` when the
 * field is committed by any means, and the keys the page acts on become `press` reports after it.
 *
 * - A field is dirty only after a trusted `input` (or, in a contenteditable, `beforeinput`) event: a
 *   value the page sets itself never makes a fill (TodoMVC clears its field after Enter: no fill "").
 * - Every user input is reported as `typing` (the field's target, computed once per field and focus,
 *   and its value; a password field's never leaves the page). The service keeps the latest one and
 *   commits it itself when the page cannot: a navigation, the end of recording, the page closed.
 * - The page commits (reports `fill` with the value, then the field is clean) on its blur, its
 *   `change`, a keydown of Enter, Tab or Escape in it (in the capture phase on window, before the
 *   page's own handlers read or clear the value), a mousedown/pointerdown outside it (so the fill comes
 *   before the click), a form submit, and when the service asks (`__flowctlStudioTypingSettle`).
 * - Keys the page acts on become `press` after the fill: in a text entry Enter and Escape always, with
 *   the field as target (in a multi-line one a plain Enter is a new line: a step only when the page
 *   prevented it, as a chat box that sends does), any other key (Tab, an arrow in an autocomplete, a
 *   shortcut) only when the page handled it (`defaultPrevented` once the keydown's dispatch is over);
 *   outside text entries Escape, and keys the page prevented, with no target (page shortcuts), never
 *   Enter or Space on a native control that turns them into a click (the click is the step).
 * - What cannot be captured is reported as `refused` (a notice for the user), never dropped silently.
 */

type Target = Record<string, unknown>;

export type TypingMessage =
  | { kind: 'typing'; target: Target; value?: string; field: string; secret?: true }
  | { kind: 'fill'; target: Target; value?: string; field: string; secret?: true }
  | { kind: 'press'; key: string; target?: Target }
  | { kind: 'refused'; message: string };

export interface TypingDeps {
  send(message: TypingMessage): void;
  /** The element's ranked locator, or undefined when none is unique. */
  targetOf(el: Element): Target | undefined;
  /** A form control's label text ("" when none). */
  labelOf(el: Element): string;
  /** Extract mode is armed: keys and clicks are the picker's, not steps. */
  paused(): boolean;
}

type Entry = HTMLInputElement | HTMLTextAreaElement | HTMLElement;

/** A field being typed into (the focused one), its target computed once. */
interface Field {
  el: Entry;
  target: Target | undefined;
  field: string;
  secret: boolean;
  dirty: boolean;
  /** Said once per field and focus that it cannot be captured. */
  refused: boolean;
  /** A typing report waiting for the page's own beforeinput handling (contenteditable editors). */
  timer?: ReturnType<typeof setTimeout>;
}

/** A keydown whose fate (did the page handle it?) is known once its dispatch is over. */
interface Deferred {
  event: KeyboardEvent;
  key: string;
  /** Pressed in this text entry: the press targets it, and its typed value (before the page acted) is committed first. */
  field?: Field;
  value?: string;
}

const TEXT_INPUT = /^(text|email|password|search|tel|url|number|date|time|datetime-local|month|week|color)$/;
const MODIFIER_KEYS = new Set([
  'Shift',
  'Control',
  'Alt',
  'Meta',
  'AltGraph',
  'CapsLock',
  'NumLock',
  'ScrollLock',
  'Fn',
  'FnLock',
  'Hyper',
  'Super',
  'Symbol',
  'SymbolLock',
  'OS',
]);
/** Native controls that turn Enter or Space into a click (captured as the click). */
const CLICKERS =
  'button, a[href], area[href], summary, input[type=checkbox], input[type=radio], input[type=submit], input[type=button], input[type=reset], input[type=image], input[type=file], select, option';

function isTextInput(el: Element): el is HTMLInputElement | HTMLTextAreaElement {
  if (el instanceof HTMLTextAreaElement) return true;
  return el instanceof HTMLInputElement && TEXT_INPUT.test(el.type || 'text');
}

/** The outermost editable element of a contenteditable region (where its input events go). */
function editingHost(el: HTMLElement): HTMLElement {
  let host = el;
  while (host.parentElement instanceof HTMLElement && host.parentElement.isContentEditable) host = host.parentElement;
  return host;
}

/** The text entry an event happened in (its real target, inside shadow roots too), or null. */
function entryOf(event: Event): Entry | null {
  const origin = event.composedPath()[0] ?? event.target;
  const el = origin instanceof Element ? origin : origin instanceof Node ? origin.parentElement : null;
  if (!el) return null;
  if (isTextInput(el)) return el;
  if (el instanceof HTMLElement && el.isContentEditable) return editingHost(el);
  return null;
}

const isMultiline = (el: Entry): boolean => !(el instanceof HTMLInputElement);
const isSecret = (el: Entry): boolean => el instanceof HTMLInputElement && el.type === 'password';
const entryValue = (el: Entry): string => (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? el.value : el.innerText);

/** A key as Playwright names it, with its modifiers (`Enter`, `Control+Enter`, `Shift+Tab`, `Space`). */
function chord(event: KeyboardEvent): string {
  const key = event.key === ' ' ? 'Space' : event.key;
  const mods: string[] = [];
  if (event.altKey) mods.push('Alt');
  if (event.ctrlKey) mods.push('Control');
  if (event.metaKey) mods.push('Meta');
  if (event.shiftKey) mods.push('Shift');
  return [...mods, key].join('+');
}

type TypingWindow = Window & { __flowctlStudioTypingSettle?: () => void };

export function installTyping(deps: TypingDeps): void {
  const { send } = deps;
  let current: Field | null = null;
  const deferred: Deferred[] = [];

  const fieldName = (el: Entry): string =>
    (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? el.name || el.id || deps.labelOf(el) || el.type : el.id || deps.labelOf(el)) ||
    'field';

  /** The field for `el`, made current (its target computed now, once for this focus); another dirty one is committed first. */
  function fieldOf(el: Entry): Field {
    if (current?.el === el) return current;
    commit(current);
    const target = deps.targetOf(el);
    current = { el, target, field: fieldName(el), secret: isSecret(el), dirty: false, refused: false };
    return current;
  }

  function refuse(f: Field, what: string): void {
    if (f.refused) return;
    f.refused = true;
    send({ kind: 'refused', message: `${what} could not be captured: no locator found for the field (${f.field.slice(0, 60)})` });
  }

  /** Report `fill` with `value` (the field's value now when not given) and mark the field clean. */
  function commit(f: Field | null, value?: string): void {
    if (!f?.dirty) return;
    f.dirty = false;
    clearTimeout(f.timer);
    if (!f.target) return refuse(f, 'the text typed');
    if (f.secret) send({ kind: 'fill', target: f.target, field: f.field, secret: true });
    else send({ kind: 'fill', target: f.target, value: value ?? entryValue(f.el), field: f.field });
  }

  function report(f: Field): void {
    clearTimeout(f.timer);
    if (!f.dirty) return;
    if (!f.target) return refuse(f, 'the text typed');
    if (f.secret) send({ kind: 'typing', target: f.target, field: f.field, secret: true });
    else send({ kind: 'typing', target: f.target, value: entryValue(f.el), field: f.field });
  }

  function press(key: string, f?: Field): void {
    if (!f) return send({ kind: 'press', key });
    if (!f.target) return send({ kind: 'refused', message: `the key ${key} could not be captured: no locator found for the field (${f.field.slice(0, 60)})` });
    send({ kind: 'press', key, target: f.target });
  }

  /** Settle the keydowns whose dispatch is over, in order (a later one waits for an earlier one). */
  function flushKeys(): void {
    while (deferred.length > 0 && deferred[0]!.event.eventPhase === Event.NONE) {
      const d = deferred.shift()!;
      if (!d.event.defaultPrevented) continue;
      if (d.field) commit(d.field, d.value);
      press(d.key, d.field);
    }
  }

  /** A user edit in `el`: it is dirty, and the value is reported (now, or after the page's beforeinput handling). */
  function edited(el: Entry, later: boolean): void {
    flushKeys();
    const f = fieldOf(el);
    f.dirty = true;
    if (!later) return report(f);
    clearTimeout(f.timer);
    f.timer = setTimeout(() => report(f), 0);
  }

  const opts = { capture: true } as const;
  window.addEventListener(
    'input',
    (event) => {
      if (!event.isTrusted) return;
      const el = entryOf(event);
      if (el) edited(el, false);
    },
    opts,
  );
  // Rich editors handle beforeinput themselves and cancel it (no input event follows).
  window.addEventListener(
    'beforeinput',
    (event) => {
      if (!event.isTrusted) return;
      const el = entryOf(event);
      if (el && !(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) edited(el, true);
    },
    opts,
  );
  window.addEventListener(
    'change',
    (event) => {
      flushKeys();
      const el = entryOf(event);
      if (el && current?.el === el) commit(current);
    },
    opts,
  );
  window.addEventListener(
    'blur',
    (event) => {
      flushKeys();
      const el = entryOf(event);
      if (!el || current?.el !== el) return;
      commit(current);
      current = null;
    },
    opts,
  );
  const outside = (event: Event) => {
    flushKeys();
    if (!current?.dirty) return;
    const origin = event.composedPath()[0] ?? event.target;
    if (origin instanceof Node && current.el.contains(origin)) return;
    commit(current);
  };
  window.addEventListener('pointerdown', outside, opts);
  window.addEventListener('mousedown', outside, opts);
  window.addEventListener(
    'submit',
    () => {
      flushKeys();
      commit(current);
    },
    opts,
  );

  window.addEventListener(
    'keydown',
    (event) => {
      if (!event.isTrusted || event.isComposing || deps.paused()) return;
      flushKeys();
      if (MODIFIER_KEYS.has(event.key) || event.key === 'Unidentified' || event.key === 'Dead' || event.key === 'Process') return;
      const key = chord(event);
      const el = entryOf(event);
      const later = (d: Omit<Deferred, 'event'>) => {
        deferred.push({ event, ...d });
        setTimeout(flushKeys, 0);
      };
      if (el) {
        const f = fieldOf(el);
        if (event.key === 'Enter' && isMultiline(el) && !(event.ctrlKey || event.altKey || event.metaKey)) {
          // A new line, unless the page takes the key (a chat box sends): decided after its handlers,
          // with the value as it was before them.
          return later({ key, field: f, value: entryValue(el) });
        }
        if (event.key === 'Enter' || event.key === 'Escape') {
          commit(f);
          return press(key, f);
        }
        if (event.key === 'Tab') {
          commit(f);
          return later({ key, field: f });
        }
        // Any other key (an arrow in an autocomplete, a shortcut): a step only when the page handled it.
        return later({ key, field: f, value: entryValue(el) });
      }
      if (event.key === 'Escape') return press(key);
      const origin = event.composedPath()[0] ?? event.target;
      if ((event.key === 'Enter' || event.key === ' ') && origin instanceof Element && origin.closest(CLICKERS)) return;
      later({ key });
    },
    opts,
  );

  // The service settles typing before it reads what was captured (stop, an address typed, a replay's
  // end): keydowns whose dispatch is over are settled, and the dirty field is committed.
  Object.defineProperty(window as TypingWindow, '__flowctlStudioTypingSettle', {
    value: () => {
      flushKeys();
      commit(current);
    },
    writable: false,
    configurable: false,
    enumerable: false,
  });
}

/** In a frame nothing is captured: typing there is said once, as clicks there are. */
export function refuseFrameTyping(send: (message: TypingMessage) => void): void {
  window.addEventListener(
    'input',
    (event) => {
      if (event.isTrusted)
        send({ kind: 'refused', message: "typing inside frames (iframes) is not captured: open the frame's page itself with the address bar" });
    },
    { capture: true, once: true },
  );
}
