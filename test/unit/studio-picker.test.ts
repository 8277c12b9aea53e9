import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { CAPTURE_SCRIPT } from '../../adapters/executor-playwright/studio/page-script.generated.js';

/**
 * The studio's extract picker (adapters/executor-playwright/studio/picker.ts) and the ranked targets
 * of the capture script, in real Chromium: the generated capture script runs in pages served here,
 * reporting through the binding as in the studio; the test moves the mouse, presses keys and clicks
 * as the studio relays a viewer's input. Each page records the events its own listeners see.
 */

const SEEN = `<script>window.seen=[];for(const t of ['keydown','keyup','keypress','mousedown','mouseup','pointerdown','click'])addEventListener(t,(e)=>seen.push(t+(e.key?':'+e.key:'')),false);</script>`;
const page = (body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body style="margin:0;font:16px/1.5 sans-serif">${body}${SEEN}</body></html>`;

const PAGES: Record<string, string> = {
  // TodoMVC's footer: the filters are absolutely positioned over the whole footer, the count under them.
  '/footer': page(`<section id="todoapp" style="width:600px;margin:0 40px">
<footer id="footer" style="position:relative;height:40px;line-height:40px">
<span id="todo-count" class="todo-count" style="float:left"><strong>2</strong> items left</span>
<ul id="filters" style="position:absolute;left:0;right:0;top:0;margin:0;padding:0;list-style:none;text-align:center">
<li style="display:inline"><a href="#/">All</a></li> <li style="display:inline"><a href="#/active">Active</a></li> <li style="display:inline"><a href="#/completed">Completed</a></li></ul>
</footer></section>
<h2 style="margin:40px">Order 42</h2>
<button class="css-1x2y3z sc-bdfBwQ is-active Button_root__3xYz1 save-button" style="margin:40px">Save</button>`),
  // A list of todos (one completed: a state class), and another list of labels that are no items of it.
  '/list': page(`<h1 style="margin:20px 40px">Todos</h1>
<ul id="todo-list" class="todo-list" style="width:400px;margin:0 40px;padding:0;list-style:none">
<li class="completed"><div class="view"><input class="toggle" type="checkbox"><label>Buy milk</label><button class="destroy">x</button></div></li>
<li><div class="view"><input class="toggle" type="checkbox"><label>Write report</label><button class="destroy">x</button></div></li>
<li><div class="view"><input class="toggle" type="checkbox"><label>Call mum</label><button class="destroy">x</button></div></li>
</ul>
<ul id="other" style="margin:20px 40px"><li><label>Not an item</label></li></ul>`),
};

let server: Server;
let base: string;
let browser: Browser;
let context: BrowserContext;
let tab: Page;
let messages: any[];
let arrived: () => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = PAGES[new URL(req.url ?? '/', 'http://x').pathname];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => server?.close(() => r()));
});

beforeEach(async () => {
  messages = [];
  arrived = () => {};
  context = await browser.newContext({ viewport: { width: 800, height: 600 } });
  await context.exposeBinding('__flowctlStudio', (_source, message: any) => {
    if (message?.kind === 'barrier') return;
    messages.push(message);
    if (process.env.PICKER_DEBUG) console.log(JSON.stringify(message));
    arrived();
  });
  await context.addInitScript({ content: CAPTURE_SCRIPT });
  tab = await context.newPage();
});

afterEach(async () => {
  await context?.close();
});

/** Every report the page sent before this call has arrived (bindings are delivered in order). */
const barrier = () => tab.evaluate(() => (window as any).__flowctlStudio({ kind: 'barrier' }));
const next = (n: number) => (messages.length >= n ? Promise.resolve() : new Promise<void>((r) => (arrived = () => messages.length >= n && r())));
const arm = (field: string, all = false) => tab.evaluate(([f, a]) => (window as any).__flowctlStudioExtract(f, a), [field, all] as const);
const label = (t: Page) => t.locator('[data-flowctl-picker-label]');
const labelText = () => label(tab).textContent();
/** The box of the (first) outline and of an element, rounded. */
const outlineBox = async () => round((await tab.locator('[data-flowctl-picker-box]').first().boundingBox())!);
const boxOf = async (css: string) => round((await tab.locator(css).boundingBox())!);
const round = (b: { x: number; y: number; width: number; height: number }) => ({
  x: Math.round(b.x),
  y: Math.round(b.y),
  w: Math.round(b.width),
  h: Math.round(b.height),
});
const seen = () => tab.evaluate(() => (window as any).seen as string[]);

/** The centre of the text node `index` of the element `css` (where a person points at that text). */
async function textPoint(css: string, index: number): Promise<{ x: number; y: number }> {
  return tab.evaluate(
    ([sel, i]) => {
      const node = [...document.querySelector(sel)!.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '')[i]!;
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    },
    [css, index] as const,
  );
}

describe('the extract picker', () => {
  it('picks the text under an overlapping positioned element, outlines it with its text before the click, and the click picks it unseen by the page', async () => {
    await tab.goto(`${base}/footer`);
    const p = await textPoint('#todo-count', 0);
    // The TodoMVC shape: what the browser hits at the count's text is the filters list on top.
    expect(await tab.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.id, p)).toBe('filters');
    await arm('count');
    await tab.mouse.move(p.x, p.y);
    await expect.poll(labelText).toBe('2 items left');
    expect(await outlineBox()).toEqual(await boxOf('#todo-count'));
    // The label is inside the viewport (the count is at the top edge: the label goes below it).
    const l = (await label(tab).boundingBox())!;
    expect(l.y >= 0 && l.x >= 0 && l.y + l.height <= 600 && l.x + l.width <= 800).toBe(true);
    await barrier();
    expect(messages).toEqual([]);

    await tab.mouse.click(p.x, p.y);
    await next(1);
    const [extract] = messages;
    expect(extract).toMatchObject({ kind: 'extract', name: 'count', target: { css: '#todo-count' } });
    // Fallbacks: the stable class, a CSS path that does not use the id, and the text (last: it is the output).
    expect(extract.target.fallbacks).toContainEqual({ css: '.todo-count' });
    expect(extract.target.fallbacks.at(-1)).toEqual({ text: '2 items left' });
    expect(extract.target.fallbacks.length).toBeLessThanOrEqual(3);
    expect(extract.all).toBeUndefined();
    // The overlay is gone; the page saw neither the move's pick nor the click.
    expect(await tab.locator('[data-flowctl-picker]').count()).toBe(0);
    expect(await seen()).toEqual([]);
  });

  it('ArrowUp and u move the pick to the parent, ArrowDown and d back toward the hovered element; the page sees no key', async () => {
    await tab.goto(`${base}/footer`);
    const p = await tab
      .locator('#todo-count strong')
      .boundingBox()
      .then((b) => ({ x: b!.x + b!.width / 2, y: b!.y + b!.height / 2 }));
    await arm('count');
    await tab.mouse.move(p.x, p.y);
    await expect.poll(labelText).toBe('2');
    expect(await outlineBox()).toEqual(await boxOf('#todo-count strong'));
    await tab.keyboard.press('ArrowUp');
    await expect.poll(labelText).toBe('2 items left');
    expect(await outlineBox()).toEqual(await boxOf('#todo-count'));
    await tab.keyboard.press('u');
    await expect.poll(labelText).toBe('2 items left All Active Completed');
    expect(await outlineBox()).toEqual(await boxOf('#footer'));
    await tab.keyboard.press('ArrowDown');
    await expect.poll(labelText).toBe('2 items left');
    await tab.keyboard.press('d');
    await expect.poll(labelText).toBe('2');
    // At the hovered element: down goes no further.
    await tab.keyboard.press('ArrowDown');
    await tab.keyboard.press('ArrowUp');
    await expect.poll(labelText).toBe('2 items left');
    await tab.mouse.click(p.x, p.y);
    await next(1);
    expect(messages[0]).toMatchObject({ kind: 'extract', name: 'count', target: { css: '#todo-count' } });
    expect(await seen()).toEqual([]);
  });

  it('Escape cancels extract mode (extract_cancelled), unseen by the page; the next click is a click again', async () => {
    await tab.goto(`${base}/footer`);
    const p = await textPoint('#todo-count', 0);
    await arm('count');
    await tab.mouse.move(p.x, p.y);
    await label(tab).waitFor();
    await tab.keyboard.press('Escape');
    await next(1);
    expect(messages).toEqual([{ kind: 'extract_cancelled' }]);
    expect(await tab.locator('[data-flowctl-picker]').count()).toBe(0);
    expect(await seen()).toEqual([]);
    // Not armed any more: a move outlines nothing, a click reaches the page and is captured as a click.
    await tab.mouse.move(p.x + 1, p.y);
    await tab.mouse.click(p.x, p.y);
    await next(2);
    expect(messages[1].kind).toBe('click');
    expect(await seen()).toContain('click');
    expect(await tab.locator('[data-flowctl-picker]').count()).toBe(0);
  });

  it('list mode: every item like the picked one is outlined and counted; the op names the items exactly and their container', async () => {
    await tab.goto(`${base}/list`);
    const p = await tab
      .locator('#todo-list li')
      .nth(1)
      .locator('label')
      .boundingBox()
      .then((b) => ({ x: b!.x + 20, y: b!.y + b!.height / 2 }));
    await arm('titles', true);
    await tab.mouse.move(p.x, p.y);
    await expect.poll(labelText).toBe('3 items: Buy milk, Write report, Call mum');
    expect(await tab.locator('[data-flowctl-picker-box]').count()).toBe(3);
    await barrier();
    expect(messages).toEqual([]);
    await tab.mouse.click(p.x, p.y);
    await next(1);
    const [op] = messages;
    expect(op).toMatchObject({ kind: 'extract', name: 'titles', all: true, container: { css: '#todo-list' } });
    const matched = (css: string) => tab.evaluate((s) => [...document.querySelectorAll(s)].map((e) => e.textContent), css);
    // The item selector and each of its fallbacks match exactly the three titles, nothing else on the page.
    for (const s of [op.target, ...(op.target.fallbacks ?? [])]) {
      expect(Object.keys(s).filter((k) => k !== 'fallbacks')).toEqual(['css']);
      expect(await matched(s.css)).toEqual(['Buy milk', 'Write report', 'Call mum']);
    }
    expect(op.target.css.startsWith('#todo-list > ')).toBe(true);
    expect(await tab.evaluate((s) => document.querySelectorAll(s).length === 1 && document.querySelector(s)!.id === 'todo-list', op.container.css)).toBe(true);
    // The container is named by its structure, never by its text (the items').
    expect(JSON.stringify(op.container)).not.toContain('"text"');
    expect(await seen()).toEqual([]);
  });

  it('list mode with nothing repeated: said in a notice, extracted as a single value', async () => {
    await tab.goto(`${base}/list`);
    const p = await textPoint('h1', 0);
    await arm('title', true);
    await tab.mouse.move(p.x, p.y);
    await expect.poll(labelText).toBe('no repeated items: Todos');
    await tab.mouse.click(p.x, p.y);
    await next(2);
    expect(messages[0]).toMatchObject({ kind: 'refused', message: expect.stringContaining('no repeated items') });
    expect(messages[1]).toMatchObject({ kind: 'extract', name: 'title' });
    expect(messages[1].all).toBeUndefined();
  });
});

describe('ranked targets', () => {
  it("a stable class is a candidate of every target (generated and state classes are not); an extract's text and content-named role are never its primary", async () => {
    await tab.goto(`${base}/footer`);
    await tab.locator('button').click();
    await next(1);
    const click = messages[0];
    expect(click).toMatchObject({ kind: 'click', target: { role: 'button', name: 'Save' } });
    expect(click.target.fallbacks).toContainEqual({ css: '.save-button' });
    expect(JSON.stringify(click.target)).not.toMatch(/css-1x2y3z|sc-bdfBwQ|is-active|Button_root/);
    expect(click.target.fallbacks.length).toBeLessThanOrEqual(3);

    // An extract of a heading: its role's name is its text (the output), so a CSS path leads.
    const p = await textPoint('h2', 0);
    await arm('order');
    await tab.mouse.move(p.x, p.y);
    await expect.poll(labelText).toBe('Order 42');
    await tab.mouse.click(p.x, p.y);
    await next(2);
    const extract = messages[1];
    expect(extract.kind).toBe('extract');
    expect(extract.target.css).toBeDefined();
    expect(extract.target.role).toBeUndefined();
    expect(extract.target.text).toBeUndefined();
    expect(extract.target.fallbacks).toEqual(expect.arrayContaining([{ role: 'heading', name: 'Order 42' }, { text: 'Order 42' }]));
  });
});
