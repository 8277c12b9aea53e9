/**
 * The extract picker of the studio's capture script (browser code, bundled with page-script.ts into
 * page-script.generated.ts). Armed by the viewer (`StudioPage.extract(field, {all})` ->
 * `__flowctlStudioExtract(field, all)`), it shows what a click would extract before the click:
 *
 * - The pick under the pointer is the innermost element that shows text at that point: of
 *   `document.elementsFromPoint` (topmost first, our overlay left out), the first element with a
 *   direct text node drawn at the point; failing that, the topmost element with text whose box holds
 *   the point; failing that, the topmost element. An element painted over a text (TodoMVC's
 *   `#filters` over `#todo-count`) does not hide it.
 * - The pick is outlined, with a label of the text the extract would return (whitespace collapsed,
 *   as `extract` reads it; cut at 80 characters; "(no text)" when empty), kept inside the viewport.
 * - Keys move it: ArrowUp or `u` to the parent, ArrowDown or `d` back toward the hovered element;
 *   Escape cancels (reported as `extract_cancelled`). No key reaches the page while armed.
 * - The click picks the outlined element; the page sees none of it.
 * - List mode (`all`): the items are the children of the nearest ancestor whose child holding the
 *   pick has a sibling of the same tag and stable classes; each item's counterpart of the pick is one
 *   value. All of them are outlined ("3 items: a, b, c…"); the op is an `extract` with `all: true`,
 *   the items' CSS selector as its target and the ancestor as its `container`. No repetition: a
 *   notice, and the pick is extracted as a single value.
 *
 * The overlay lives in an open shadow root under <html> (outside <body>, so frameworks that own the
 * body leave it alone and its text is in no element's textContent), and is removed before targets are
 * computed.
 */

type Locator = { testid?: string; role?: string; name?: string; label?: string; text?: string; css?: string };
type Target = Locator & { fallbacks?: Locator[] };

export type PickerMessage =
  | { kind: 'extract'; target: Target; name: string; all?: true; container?: Target }
  | { kind: 'extract_cancelled' }
  | { kind: 'refused'; message: string };

export interface PickerDeps {
  send(message: PickerMessage): void;
  /** The ranked target of an element to extract, or of a list's container (page-script.ts). */
  targetOf(el: Element, purpose: 'extract' | 'container'): Target | undefined;
  /** Whether a class names what an element is, not its state or a build's hash (page-script.ts). */
  stableClass(name: string): boolean;
}

export interface Picker {
  /** Extract mode is armed. */
  armed(): boolean;
  /** Arm extract mode for output field `field` (a list of every item with `all`); null disarms. */
  arm(field: string | null, all?: boolean): void;
}

/** The most items outlined at once (the label counts them all). */
const MAX_BOXES = 300;
const LABEL_CHARS = 80;

const norm = (s: string | null | undefined): string => (s ?? '').replace(/\s+/g, ' ').trim();
const inside = (r: DOMRect, x: number, y: number): boolean => x >= r.left && x <= r.right && y >= r.top && y <= r.bottom;
const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Whether one of the element's own text nodes (not its children's) is drawn at (x, y). */
function textAt(el: Element, x: number, y: number): boolean {
  const range = document.createRange();
  for (const node of el.childNodes) {
    if (node.nodeType !== Node.TEXT_NODE || norm(node.textContent) === '') continue;
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) if (inside(r, x, y)) return true;
  }
  return false;
}

/** The pick at (x, y): the innermost element showing text there (see the file's comment). */
export function elementAt(x: number, y: number, overlay: Element | null): Element | null {
  const stack = document.elementsFromPoint(x, y).filter((el) => !overlay || (el !== overlay && !overlay.contains(el)));
  return (
    stack.find((el) => textAt(el, x, y)) ?? stack.find((el) => norm(el.textContent) !== '' && inside(el.getBoundingClientRect(), x, y)) ?? stack[0] ?? null
  );
}

/** A list the pick is a value of: the container, the item holding the pick, its like siblings, the values. */
interface ListPick {
  container: Element;
  item: Element;
  /** The item's selector step (tag and stable classes), and the path from an item to its value ('' when the item is the value). */
  itemStep: string;
  rel: string;
  values: Element[];
}

export function createPicker(deps: PickerDeps): Picker {
  const classKey = (el: Element) => [...el.classList].filter(deps.stableClass).sort().join(' ');
  /** An element's selector step: its tag and stable classes, with `:nth-of-type` when a sibling has the same step. */
  const stepOf = (el: Element, nth: boolean): string => {
    const base = `${CSS.escape(el.localName)}${[...el.classList]
      .filter(deps.stableClass)
      .map((c) => `.${CSS.escape(c)}`)
      .join('')}`;
    const parent = el.parentElement;
    if (!nth || !parent) return base;
    const alike = [...parent.children].filter((s) => s !== el && s.matches(base));
    if (alike.length === 0) return base;
    const index = [...parent.children].filter((s) => s.localName === el.localName).indexOf(el) + 1;
    return `${base}:nth-of-type(${index})`;
  };

  /** From the pick up: the nearest ancestor whose child holding the pick has a sibling of its tag and stable classes. */
  function findList(pick: Element): ListPick | undefined {
    for (let item: Element = pick; item !== document.body && item.parentElement && item.parentElement !== document.documentElement; item = item.parentElement) {
      const container = item.parentElement;
      const key = classKey(item);
      const items = [...container.children].filter((s) => s.localName === item.localName && classKey(s) === key);
      if (items.length < 2) continue;
      const steps: string[] = [];
      for (let at: Element = pick; at !== item; at = at.parentElement!) steps.unshift(stepOf(at, true));
      const rel = steps.join(' > ');
      let values: Element[];
      try {
        values = rel === '' ? items : items.flatMap((i) => [...i.querySelectorAll(`:scope > ${rel}`)]);
      } catch {
        continue;
      }
      if (!values.includes(pick)) continue;
      return { container, item, itemStep: stepOf(item, false), rel, values };
    }
    return undefined;
  }

  /** The items' target: CSS selectors that match exactly the list's values, anchored on the container first. */
  function itemsTarget(list: ListPick, container: Target): Target | undefined {
    const tail = `${list.itemStep}${list.rel ? ` > ${list.rel}` : ''}`;
    const anchors: string[] = [];
    for (const s of [container, ...(container.fallbacks ?? [])]) {
      if (s.css !== undefined) anchors.push(s.css);
      if (s.testid !== undefined) anchors.push(`[data-testid="${CSS.escape(s.testid)}"]`);
    }
    const tries = [...anchors.map((a) => `${a} > ${tail}`), `${CSS.escape(list.container.localName)} > ${tail}`, tail];
    const want = new Set(list.values);
    const exact = (css: string) => {
      try {
        const found = document.querySelectorAll(css);
        return found.length === want.size && [...found].every((el) => want.has(el));
      } catch {
        return false;
      }
    };
    const [primary, ...fallbacks] = [...new Set(tries)].filter(exact).map((css) => ({ css }));
    if (!primary) return undefined;
    return fallbacks.length > 0 ? { ...primary, fallbacks: fallbacks.slice(0, 3) } : primary;
  }

  let field: string | null = null;
  let all = false;
  /** The element under the pointer, the outlined one (it or an ancestor), and the way back down. */
  let hovered: Element | null = null;
  let pick: Element | null = null;
  const below: Element[] = [];
  let pointer: { x: number; y: number } | null = null;
  let listOf: { pick: Element; list: ListPick | undefined } | null = null;
  /** Keys pressed while armed: their keyup is the picker's too, even after it disarmed. */
  const keysDown = new Set<string>();

  let host: HTMLElement | null = null;
  let layer: HTMLDivElement | null = null;
  let label: HTMLDivElement | null = null;
  const boxes: HTMLDivElement[] = [];

  function overlay(): { layer: HTMLDivElement; label: HTMLDivElement } {
    if (!host || !layer || !label) {
      host = document.createElement('flowctl-picker');
      host.setAttribute('data-flowctl-picker', '');
      host.setAttribute('aria-hidden', 'true');
      host.style.cssText = 'all:initial;position:fixed;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none';
      const root = host.attachShadow({ mode: 'open' });
      const style = document.createElement('style');
      style.textContent =
        '.box{position:fixed;box-sizing:border-box;border:2px solid #4f46e5;background:rgba(79,70,229,.12);border-radius:2px;pointer-events:none}' +
        '.box.item{border-width:1px;border-style:dashed}' +
        '.label{position:fixed;max-width:min(480px,calc(100vw - 8px));box-sizing:border-box;padding:3px 7px;border-radius:4px;background:#312e81;color:#fff;' +
        'font:12px/1.35 system-ui,sans-serif;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;box-shadow:0 1px 4px rgba(0,0,0,.3);pointer-events:none}';
      layer = document.createElement('div');
      label = document.createElement('div');
      label.className = 'label';
      label.setAttribute('data-flowctl-picker-label', '');
      root.append(style, layer, label);
    }
    if (!host.isConnected) document.documentElement.appendChild(host);
    return { layer, label };
  }

  function hide(): void {
    host?.remove();
    host = null;
    layer = null;
    label = null;
    boxes.length = 0;
  }

  function currentList(): ListPick | undefined {
    if (!pick) return undefined;
    if (listOf?.pick !== pick || !listOf.list?.values.every((v) => v.isConnected)) listOf = { pick, list: findList(pick) };
    return listOf.list;
  }

  function render(): void {
    if (field === null || !pick || !pick.isConnected) return hide();
    const list = all ? currentList() : undefined;
    const values = list ? list.values : [pick];
    const { layer, label } = overlay();
    const shown = values.slice(0, MAX_BOXES);
    while (boxes.length < shown.length) {
      const b = document.createElement('div');
      b.setAttribute('data-flowctl-picker-box', '');
      layer.appendChild(b);
      boxes.push(b);
    }
    while (boxes.length > shown.length) boxes.pop()!.remove();
    shown.forEach((el, i) => {
      const r = el.getBoundingClientRect();
      const b = boxes[i]!;
      b.className = el === pick ? 'box' : 'box item';
      Object.assign(b.style, { left: `${r.left}px`, top: `${r.top}px`, width: `${r.width}px`, height: `${r.height}px` });
    });
    const text = (el: Element) => norm(el.textContent) || '(no text)';
    label.textContent = list
      ? cut(
          `${values.length} items: ${values
            .slice(0, 3)
            .map((v) => cut(text(v), 24))
            .join(', ')}${values.length > 3 ? '…' : ''}`,
          LABEL_CHARS,
        )
      : `${all ? 'no repeated items: ' : ''}${cut(text(pick), LABEL_CHARS)}`;
    // Above the pick, else below it, else inside its top; always in the viewport.
    const r = pick.getBoundingClientRect();
    const l = label.getBoundingClientRect();
    const vw = document.documentElement.clientWidth || window.innerWidth;
    const vh = document.documentElement.clientHeight || window.innerHeight;
    let top = r.top - l.height - 4;
    if (top < 4) top = r.bottom + 4 + l.height <= vh - 4 ? r.bottom + 4 : r.top + 4;
    top = Math.min(Math.max(4, top), Math.max(4, vh - l.height - 4));
    const left = Math.min(Math.max(4, r.left), Math.max(4, vw - l.width - 4));
    Object.assign(label.style, { left: `${left}px`, top: `${top}px` });
  }

  /** The pick under the pointer, anew (the key moves are forgotten). */
  function hover(x: number, y: number, force = false): void {
    const el = elementAt(x, y, host);
    if (force || el !== hovered || !pick?.isConnected) {
      hovered = el;
      pick = el;
      below.length = 0;
    }
    render();
  }

  function arm(next: string | null, list = false): void {
    field = next;
    all = next !== null && list;
    hovered = null;
    pick = null;
    below.length = 0;
    listOf = null;
    if (document.documentElement) document.documentElement.style.cursor = next ? 'crosshair' : '';
    if (next !== null && pointer) hover(pointer.x, pointer.y, true);
    else hide();
  }

  function finish(el: Element): void {
    const name = field!;
    const wantsList = all;
    // Removed before any target is computed: the page is as it was.
    arm(null);
    if (wantsList) {
      const list = findList(el);
      const container = list ? deps.targetOf(list.container, 'container') : undefined;
      const items = list && container ? itemsTarget(list, container) : undefined;
      if (items && container) return deps.send({ kind: 'extract', target: items, name, all: true, container });
      deps.send({ kind: 'refused', message: 'no repeated items around the picked element: it is extracted as a single value' });
    }
    const target = deps.targetOf(el, 'extract');
    if (target) return deps.send({ kind: 'extract', target, name });
    deps.send({ kind: 'refused', message: 'no locator found for that element' });
    deps.send({ kind: 'extract_cancelled' });
  }

  const swallow = (event: Event) => {
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  // On window, in the capture phase: before the page's listeners and the rest of the capture script.
  const on = (type: string, fn: (event: Event) => void, passive = false) => window.addEventListener(type, fn, { capture: true, passive });

  on(
    'mousemove',
    (event) => {
      const e = event as MouseEvent;
      pointer = { x: e.clientX, y: e.clientY };
      if (field !== null) hover(e.clientX, e.clientY);
    },
    true,
  );
  // What is under the pointer changes as the page scrolls or resizes.
  on('scroll', () => field !== null && pointer && hover(pointer.x, pointer.y), true);
  on('resize', () => field !== null && render(), true);
  for (const type of ['mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'auxclick', 'contextmenu']) {
    on(type, (event) => {
      if (field !== null) swallow(event);
    });
  }
  on('click', (event) => {
    if (field === null) return;
    swallow(event);
    const e = event as MouseEvent;
    // The outlined element, unless the pointer is elsewhere now (or the page replaced it).
    const same = pointer !== null && pointer.x === e.clientX && pointer.y === e.clientY;
    pointer = { x: e.clientX, y: e.clientY };
    if (!same || !pick?.isConnected) hover(e.clientX, e.clientY, true);
    if (pick) finish(pick);
    else {
      arm(null);
      deps.send({ kind: 'refused', message: 'nothing to extract there' });
      deps.send({ kind: 'extract_cancelled' });
    }
  });
  on('keydown', (event) => {
    if (field === null) return;
    const e = event as KeyboardEvent;
    swallow(e);
    keysDown.add(e.code || e.key);
    const plain = !e.ctrlKey && !e.metaKey && !e.altKey;
    if (e.key === 'Escape') {
      arm(null);
      deps.send({ kind: 'extract_cancelled' });
    } else if (plain && (e.key === 'ArrowUp' || e.key === 'u')) {
      const parent = pick?.parentElement;
      if (pick && parent && pick !== document.body && parent !== document.documentElement) {
        below.push(pick);
        pick = parent;
      }
      render();
    } else if (plain && (e.key === 'ArrowDown' || e.key === 'd')) {
      const child = below.pop();
      if (child?.isConnected) pick = child;
      render();
    }
  });
  for (const type of ['keypress', 'keyup']) {
    on(type, (event) => {
      const e = event as KeyboardEvent;
      const key = e.code || e.key;
      if (field === null && !(type === 'keyup' && keysDown.has(key))) return;
      if (type === 'keyup') keysDown.delete(key);
      swallow(e);
    });
  }

  return { armed: () => field !== null, arm };
}
