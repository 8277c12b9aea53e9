import { resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { startStaticServer, type StaticServer } from '../helpers/static-server.js';
import { signUpInWebApp, StudioCanvas, type Point } from '../helpers/studio-canvas.js';

/**
 * The extract picker through the studio canvas on the shipped assembly (issue 28, point 2): TodoMVC
 * (vanilla JS, from the `todomvc` package, served as it ships) recorded as a person does it in the web
 * app: three todos, the count read by clicking its words (which lie under the filter bar, an
 * absolutely positioned list over the whole footer), the titles read as a list by clicking one of
 * them. Published and called through the gateway with new titles; then the app's variant with the
 * count's id renamed (in its HTML, script and CSS) still gives the count, through a fallback.
 */

const TODOMVC = resolve(import.meta.dirname, '../../node_modules/todomvc');
/** The app as it ships, or with `todo-count` renamed everywhere (index.html, js/view.js, base.css). */
let variant: 'base' | 'renamed' = 'base';

let h: HostedFixture;
let browser: Browser;
let web: { context: BrowserContext; page: Page };
let app: StaticServer;

beforeAll(async () => {
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  app = await startStaticServer(TODOMVC, {
    transform: (path, body) =>
      variant === 'renamed' && /\.(html|js|css)$/.test(path) ? Buffer.from(body.toString('utf8').replaceAll('todo-count', 'items-left')) : body,
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
  web = await signUpInWebApp(browser, h.url, 'picker@example.test');
}, 120_000);

afterAll(async () => {
  await web?.context.close();
  await browser?.close();
  await app?.close();
  await h?.close();
});

/** The centre of the first text node with words under `css` in the twin (where a person points at that text). */
function textCentre(twin: Page, css: string, words: RegExp): Promise<Point> {
  return twin.evaluate(
    ([sel, source]) => {
      const walker = document.createTreeWalker(document.querySelector(sel)!, NodeFilter.SHOW_TEXT);
      const re = new RegExp(source);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!re.test(n.textContent ?? '')) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        const r = range.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }
      throw new Error(`no text ${source} under ${sel}`);
    },
    [css, words.source] as const,
  );
}

describe('the extract picker through the studio canvas (TodoMVC)', () => {
  it('a count under an overlapping element and a list of titles are extracted, published and run with new inputs; a renamed id is carried by a fallback', async () => {
    const site = `${app.url}/examples/vanillajs/index.html`;
    const s = await StudioCanvas.open(web.page, browser, { name: 'todo-picker', site, task: 'Add three todos, read how many are left and their titles' });
    try {
      const input = (t: Page) => t.locator('#new-todo');
      const heading = (t: Page) => t.getByRole('heading', { name: 'todos' });
      for (const [i, title] of ['Buy milk', 'Write report', 'Call mum'].entries()) {
        await s.click(input);
        await s.type(title);
        // This TodoMVC adds the todo on `change`: a click outside the field commits it.
        await s.click(heading);
        await s.steps(3 + 2 * i);
      }

      // Armed: a hint says the keys; Escape in the page leaves extract mode and the button un-arms.
      await s.arm('nothing');
      expect(await web.page.getByTestId('extract-hint').textContent()).toContain('↑ parent · ↓ child · Esc cancel');
      await web.page.keyboard.press('Escape');
      await web.page.getByRole('button', { name: 'Extract', exact: true }).waitFor();
      expect(await web.page.getByTestId('extract-hint').count()).toBe(0);

      // The count: its words, where the browser's hit test finds the filter bar on top.
      const words = await textCentre(s.twin, '#todo-count', /items left/);
      expect(await s.twin.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.id, words)).toBe('filters');
      await s.extractAt('count', words);
      // The titles: list mode, pointing at the second todo's title.
      await s.extractAt('titles', await textCentre(s.twin, '#todo-list li:nth-child(2) label', /Write report/), { list: true });

      const session = await s.session();
      expect(session.captured_ops.map((o: any) => o.kind)).toEqual(['navigate', 'fill', 'click', 'fill', 'click', 'fill', 'click', 'extract', 'extract']);
      const [count, titles] = session.captured_ops.slice(7);
      expect(count).toMatchObject({ kind: 'extract', name: 'count', target: { css: '#todo-count' } });
      expect(count.all).toBeUndefined();
      // A CSS path that does not lean on the id, and the text last (it is the output).
      expect(count.target.fallbacks.some((f: any) => f.css !== undefined && !f.css.includes('todo-count'))).toBe(true);
      expect(count.target.fallbacks.at(-1)).toEqual({ text: '3 items left' });
      expect(titles).toMatchObject({
        kind: 'extract',
        name: 'titles',
        all: true,
        target: { css: '#todo-list > li > div.view > label' },
        container: { css: '#todo-list' },
      });
      // The step list says it is a list, and where.
      expect(await s.rows.nth(8).textContent()).toContain('list: all matches in #todo-list');

      for (const [step, slot] of [
        [2, 'first'],
        [4, 'second'],
        [6, 'third'],
      ] as const)
        await s.markInput(step, slot);
      await expect.poll(async () => [...(await s.session()).input_slots].sort(), { timeout: 60_000 }).toEqual(['first', 'second', 'third']);
      const { key } = await s.publish();

      const call = async (inputs: Record<string, string>) => {
        const res = await fetch(`${h.url}/v1/run/todo-picker`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ inputs }),
        });
        const body = (await res.json()) as any;
        expect([res.status, body.status, body.error], JSON.stringify(body)).toEqual([200, 'succeeded', undefined]);
        return body;
      };
      const first = await call({ first: 'Feed the cat', second: 'Pay rent', third: 'Water plants' });
      expect(first.output).toEqual({ count: '3 items left', titles: ['Feed the cat', 'Pay rent', 'Water plants'] });

      // The app's variant: the count's id renamed. The count is read through a fallback (a drift warning).
      variant = 'renamed';
      const renamed = await call({ first: 'Call mum', second: 'Buy bread', third: 'Fix bike' });
      expect(renamed.output).toEqual({ count: '3 items left', titles: ['Call mum', 'Buy bread', 'Fix bike'] });
      const executions = (await (await web.page.request.get('/api/executions?flow=todo-picker')).json()).executions as any[];
      const execution = executions.find((e) => e.run_id === renamed.run_id);
      const journal = (await (await web.page.request.get(`/api/executions/${execution.id}`)).json()).journal as any[];
      const warned = journal.filter((e) => e.event === 'step_succeeded' && e.warnings?.some((w: any) => w.code === 'drift'));
      expect(warned.map((e) => e.step)).toEqual(['extract_8']);
      expect(warned[0].warnings[0].data.matched).not.toContain('todo-count');
    } finally {
      variant = 'base';
      await s.close();
    }
  }, 300_000);
});
