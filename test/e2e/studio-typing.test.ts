import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { Viewer } from '../helpers/live-socket.js';
import { signUpInWebApp, StudioCanvas } from '../helpers/studio-canvas.js';
import { at, openStudioPage, primary, startTypingSite } from '../helpers/typing-site.js';

/**
 * Typing is never lost (issue 28, point 1): the studio's capture script (page-typing.ts) in real
 * Chromium, on the shipped assembly's studio browser, with input sent as the viewer sends it (CDP
 * mouse, Playwright's keyboard, inserted text). A typed value becomes one `fill` when its field is
 * committed by any means, keys the page acts on become `press` after it, values the page sets itself
 * are no fill; the browser commits the typing the page could not (a navigation, commitTyping, close);
 * the live socket's `stop`, address bar and close store it too; the web app's Stop recording and
 * Test run store the value typed last, and its step list shows presses. The pages and the studio
 * page driven on them are test/helpers/typing-site.ts.
 */

const ROOT = resolve(import.meta.dirname, '../..');

let h: HostedFixture;
let site: { server: Server; url: string };

beforeAll(async () => {
  site = await startTypingSite();
  await mkdir(join(ROOT, 'test-artifacts', 'studio'), { recursive: true });
  h = await startHosted({ egressAllow: FIXTURE_SITES });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

const openStudio = (path: string) => openStudioPage(h.studio, site.url, path);

const TODO = { role: 'textbox', name: 'New todo' };
const NAME = { role: 'textbox', name: 'Name' };
const CITY = { role: 'textbox', name: 'City' };

describe('typing committed by any means', () => {
  it('Enter in a field the page clears: a fill with the typed value, then press Enter on the field; no fill ""', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(40));
      s.type('Buy milk');
      s.press('Enter');
      s.type('Write report');
      s.press('Enter');
      await s.next(4);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: TODO, value: 'Buy milk', field: 'todo' },
        { kind: 'press', key: 'Enter', target: TODO },
        { kind: 'fill', target: TODO, value: 'Write report', field: 'todo' },
        { kind: 'press', key: 'Enter', target: TODO },
      ]);
      // The press names the field with the same ranked locator as the fill (fallbacks too).
      expect(s.actions[1].target).toEqual(s.actions[0].target);
    } finally {
      await s.page.close();
    }
  });

  it('Tab: the fill, no press (the page did not take the key); the next field is typed into', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(100));
      s.type('Ada');
      s.press('Tab');
      s.type('Lyon');
      await s.next(1);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: NAME, value: 'Ada', field: 'name' },
        { kind: 'fill', target: CITY, value: 'Lyon', field: 'city' },
      ]);
    } finally {
      await s.page.close();
    }
  });

  it('a click elsewhere: the fill comes before the click', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(100));
      s.type('Grace');
      s.click(at(580));
      await s.next(2);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: NAME, value: 'Grace', field: 'name' },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
      ]);
    } finally {
      await s.page.close();
    }
  });

  it('a form the page submits: the fill at the submit, not the value the page clears after', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(340));
      s.type('12');
      s.type('34');
      await s.next(1);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([{ kind: 'fill', target: { role: 'textbox', name: 'Code' }, value: '1234', field: 'code' }]);
    } finally {
      await s.page.close();
    }
  });

  it('Escape in a field: the fill, then press Escape on it; Escape outside fields: press with no target', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(400));
      s.type('shoes');
      s.press('Escape');
      await s.next(2);
      s.click(at(580));
      s.press('Escape');
      await s.next(4);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: { role: 'textbox', name: 'Search' }, value: 'shoes', field: 'search' },
        { kind: 'press', key: 'Escape', target: { role: 'textbox', name: 'Search' } },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
        { kind: 'press', key: 'Escape' },
      ]);
    } finally {
      await s.page.close();
    }
  });

  it('a contenteditable: its text is the fill', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(220));
      s.type('Hello world');
      s.click(at(580));
      await s.next(2);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: { label: 'Note' }, value: 'Hello world', field: 'note' },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
      ]);
    } finally {
      await s.page.close();
    }
  });

  it('an autocomplete: ArrowDown the page takes is a press after the typed fill; Enter takes the suggestion; the value the page set is no fill', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(160));
      s.type('Par');
      // Moving the caret is the browser's: no step.
      s.press('ArrowLeft');
      s.press('ArrowDown');
      s.press('Enter');
      await s.next(3);
      s.click(at(580));
      await s.next(4);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: CITY, value: 'Par', field: 'city' },
        { kind: 'press', key: 'ArrowDown', target: CITY },
        { kind: 'press', key: 'Enter', target: CITY },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
      ]);
    } finally {
      await s.page.close();
    }
  });

  it('a password field: a secret fill with no value, and the value never leaves the page', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(280));
      s.type('hunter2-secret');
      s.click(at(580));
      await s.next(2);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: { label: 'Password' }, secret: true, field: 'pw' },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
      ]);
      expect(JSON.stringify(s.actions)).not.toContain('hunter2');
    } finally {
      await s.page.close();
    }
  });

  it('a value the page sets itself, in a field focused and left: no fill; a page shortcut it takes is a press, Enter on a button only its click', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(520));
      await s.next(1);
      s.click(at(460));
      s.click(at(580));
      await s.next(2);
      // Outside fields: k is the page's (prevented), Enter on the focused button is its click.
      s.press('k');
      s.press('Enter');
      await s.next(4);
      await s.settle();
      expect(s.actions.map(primary)).toEqual([
        { kind: 'click', target: { role: 'button', name: 'Fill for me' } },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
        { kind: 'press', key: 'k' },
        { kind: 'click', target: { role: 'button', name: 'Elsewhere' } },
      ]);
    } finally {
      await s.page.close();
    }
  });

  it('a chat box (textarea): Shift+Enter is a new line, Enter the page takes sends: fill with both lines, press Enter', async () => {
    const s = await openStudio('/chat');
    try {
      s.click(at(40));
      s.type('Hi');
      s.press('Shift+Enter');
      s.type('there');
      s.press('Enter');
      await s.next(2);
      await s.settle();
      const msg = { role: 'textbox', name: 'Message' };
      expect(s.actions.map(primary)).toEqual([
        { kind: 'fill', target: msg, value: 'Hi\nthere', field: 'msg' },
        { kind: 'press', key: 'Enter', target: msg },
      ]);
    } finally {
      await s.page.close();
    }
  });
});

describe('what cannot be captured is said', () => {
  it('typing inside a frame: a refusal, no fill', async () => {
    const s = await openStudio('/framed');
    try {
      // The chat page in a frame at the top-left corner: its textarea is where it is on its own page.
      s.click(at(40));
      s.type('hello');
      await s.next(2);
      await s.settle();
      expect(s.actions).toEqual([
        { kind: 'refused', message: expect.stringMatching(/^actions inside frames \(iframes\) are not captured/) },
        { kind: 'refused', message: expect.stringMatching(/^typing inside frames \(iframes\) is not captured/) },
      ]);
    } finally {
      await s.page.close();
    }
  });
});

describe('typing the page could not commit is committed by the browser', () => {
  it('commitTyping: the typed value, once (the page commits it; nothing more later)', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(100));
      s.type('Half typed');
      await s.settle();
      expect(s.actions.map(primary)).toEqual([{ kind: 'fill', target: NAME, value: 'Half typed', field: 'name' }]);
      // Leaving the field later is no second fill of the same value.
      s.click(at(580));
      await s.next(2);
      await s.settle();
      expect(s.actions.map((a) => a.kind)).toEqual(['fill', 'click']);
    } finally {
      await s.page.close();
    }
  });

  it('a navigation the page makes while typing: the latest typing is a fill before anything the new document reports', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(640));
      s.type('Zed');
      // The page goes to the next page at "!" (no blur, no change: the document is gone).
      s.type('!');
      await s.next(1);
      expect(s.actions.map(primary)).toEqual([{ kind: 'fill', target: { role: 'textbox', name: 'Jump' }, value: 'Zed!', field: 'jump' }]);
      // The new document's first action comes after it (clicked once it is there to click).
      await s.loaded('/next');
      s.click(at(40));
      await s.next(2);
      expect(s.actions[1]).toMatchObject({ kind: 'click' });
    } finally {
      await s.page.close();
    }
  });

  it('close: the latest typing is the last action', async () => {
    const s = await openStudio('/fields');
    try {
      s.click(at(100, 400));
      s.type('Closing now');
      // The page's own script reports after each input (through the same binding, after the capture script's report).
      await s.next(1);
      expect(s.actions).toEqual([{ kind: 'refused', message: 'draft 11' }]);
    } finally {
      await s.page.close();
    }
    expect(s.actions.slice(1).map(primary)).toEqual([{ kind: 'fill', target: { role: 'textbox', name: 'Draft' }, value: 'Closing now', field: 'draft' }]);
  });
});

describe('the live socket: stop, the address bar and the end of recording store the typing', () => {
  it('stop answers stopped with the typed value stored; typing before an address is a step before its navigate; closing the socket stores the last typing', async () => {
    const owner = new Client(h.url);
    await owner.signup('typing@example.test', 'correct horse battery', 'Typing org');
    const a = (await owner.call('POST', '/api/automations', { name: 'typing', site: `${site.url}/fields`, task: 'Type and leave' })).body.automation;
    const viewer = await Viewer.open(`${h.url.replace(/^http/, 'ws')}/api/authoring/${a.id}/live?width=1100&height=720`, {
      origin: h.url,
      cookie: `svc_session=${owner.cookie}`,
    });
    try {
      await viewer.next((m) => m.type === 'ready');
      await viewer.loaded('/fields', true);
      // Typed, not left: stop commits it, and says what the capture is.
      viewer.click(at(100));
      viewer.send({ type: 'text', text: 'Ada' });
      viewer.send({ type: 'stop' });
      const stopped = await viewer.next((m) => m.type === 'stopped');
      const fillAda = { kind: 'fill', target: expect.objectContaining(NAME), value: 'Ada' };
      expect(stopped.captured_ops).toEqual([{ kind: 'navigate', url: `${site.url}/fields` }, fillAda]);
      expect([stopped.input_slots, stopped.secret_slots]).toEqual([[], []]);
      // The session stays open: typing, then an address.
      viewer.click(at(160));
      viewer.send({ type: 'text', text: 'Lyon' });
      viewer.send({ type: 'navigate', url: `${site.url}/fields?again=1` });
      const ops = await viewer.opCount(4);
      expect(ops.slice(2)).toEqual([
        { kind: 'fill', target: expect.objectContaining(CITY), value: 'Lyon' },
        { kind: 'navigate', url: `${site.url}/fields?again=1` },
      ]);
      await viewer.next((m) => m.type === 'loaded' && m.complete === true && m.url.endsWith('again=1'));
      // The end of recording by closing the socket: the last typing is stored.
      viewer.click(at(100));
      viewer.send({ type: 'text', text: 'Bye' });
      await viewer.roundTrip();
      viewer.close();
      await viewer.closed;
      await expect.poll(async () => (await h.storage.authoring.get(a.org_id, a.id))?.captured_ops.length, { timeout: 30_000 }).toBe(5);
      const stored = await h.storage.authoring.get(a.org_id, a.id);
      expect(stored?.captured_ops.slice(4)).toEqual([{ kind: 'fill', target: expect.objectContaining(NAME), value: 'Bye' }]);
    } finally {
      viewer.close();
    }
  });
});

describe('the web app', () => {
  it('lists a press readably; Test run and Stop recording store the value typed last (a field not left)', async () => {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
    try {
      const web = await signUpInWebApp(browser, h.url, 'typing-web@example.test');
      const s = await StudioCanvas.open(web.page, browser, { name: 'typing-web', site: `${site.url}/fields`, task: 'Add a todo, type a name and a city' });
      try {
        await s.click((t) => t.locator('#todo'));
        await s.type('Buy milk');
        await s.press('Enter');
        await s.steps(3);
        // The kind's badge, then the key and the element it goes to.
        expect(await s.rows.nth(2).locator('.badge').first().textContent()).toBe('press');
        expect(await s.rows.nth(2).locator('.op-desc').textContent()).toBe('Enter on textbox "New todo"');
        // Typed, not left: Test run commits it first, and runs it.
        await s.click((t) => t.locator('#name'));
        await s.type('Ada');
        await web.page.getByRole('button', { name: 'Test run' }).click();
        await web.page.getByTestId('test-result').getByText('Test run succeeded').waitFor();
        await s.steps(4);
        expect((await s.session()).captured_ops[3]).toMatchObject({ kind: 'fill', value: 'Ada' });
        // Typed, not left: Stop recording commits it before the socket closes.
        await s.click((t) => t.locator('#city'));
        await s.type('Lyon');
        await web.page.getByRole('button', { name: 'Stop recording' }).click();
        await web.page.getByText('Recording stopped').waitFor();
        await s.steps(5);
        const ops = (await s.session()).captured_ops;
        expect(ops.map((o: any) => [o.kind, o.value ?? o.key ?? o.url])).toEqual([
          ['navigate', `${site.url}/fields`],
          ['fill', 'Buy milk'],
          ['press', 'Enter'],
          ['fill', 'Ada'],
          ['fill', 'Lyon'],
        ]);
        expect(ops[4].target).toMatchObject(CITY);
        await s.page.getByTestId('op-list').screenshot({ path: join(ROOT, 'test-artifacts', 'studio', 'typing-steps.png') });
      } finally {
        await s.close();
      }
    } finally {
      await browser.close();
    }
  });
});
