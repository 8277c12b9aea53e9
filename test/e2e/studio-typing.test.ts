import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import type { StudioAction, StudioPage } from '../../src/ports/studio.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { Viewer } from '../helpers/live-socket.js';
import { signUpInWebApp, StudioCanvas } from '../helpers/studio-canvas.js';

/**
 * Typing is never lost (issue 28, point 1): the studio's capture script (page-typing.ts) in real
 * Chromium, on the shipped assembly's studio browser, with input sent as the viewer sends it (CDP
 * mouse, Playwright's keyboard, inserted text). A typed value becomes one `fill` when its field is
 * committed by any means, keys the page acts on become `press` after it, values the page sets itself
 * are no fill; the browser commits the typing the page could not (a navigation, commitTyping, close);
 * the live socket's `stop`, address bar and close store it too; the web app's Stop recording and
 * Test run store the value typed last, and its step list shows presses.
 */

/** Every element the test touches sits at a fixed place: left 40, width 300, height 32, at `top`. */
const box = (top: number, left = 40) => `style="position:absolute;left:${left}px;top:${top}px;width:300px;height:32px;margin:0;box-sizing:border-box"`;
const at = (top: number, left = 40) => ({ x: left + 150, y: top + 16 });

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body style="margin:0;font:16px sans-serif">${body}</body></html>`;

/** The fields page: each kind of commit, a page that clears, an autocomplete, a contenteditable, a password. */
const FIELDS = page(
  'Fields',
  `<label for="todo" style="position:absolute;left:360px;top:40px">New todo</label><input id="todo" autocomplete="off" ${box(40)}>
<ul id="list" style="position:absolute;left:700px;top:40px;margin:0"></ul>
<label for="name" style="position:absolute;left:360px;top:100px">Name</label><input id="name" autocomplete="off" ${box(100)}>
<label for="city" style="position:absolute;left:360px;top:160px">City</label><input id="city" autocomplete="off" ${box(160)}>
<p id="choice" style="position:absolute;left:700px;top:160px;margin:0"></p>
<div id="note" contenteditable="true" aria-label="Note" ${box(220)}></div>
<label for="pw" style="position:absolute;left:360px;top:280px">Password</label><input id="pw" type="password" ${box(280)}>
<form id="codes" style="margin:0"><label for="code" style="position:absolute;left:360px;top:340px">Code</label><input id="code" autocomplete="off" ${box(340)}></form>
<p id="submitted" style="position:absolute;left:700px;top:340px;margin:0"></p>
<label for="search" style="position:absolute;left:360px;top:400px">Search</label><input id="search" autocomplete="off" ${box(400)}>
<label for="greeting" style="position:absolute;left:360px;top:460px">Greeting</label><input id="greeting" autocomplete="off" ${box(460)}>
<button id="prefill" ${box(520)}>Fill for me</button>
<button id="elsewhere" ${box(580)}>Elsewhere</button>
<p id="shortcut" style="position:absolute;left:700px;top:580px;margin:0"></p>
<label for="jump" style="position:absolute;left:360px;top:640px">Jump</label><input id="jump" autocomplete="off" ${box(640)}>
<label for="draft" style="position:absolute;left:720px;top:100px">Draft</label><input id="draft" autocomplete="off" ${box(100, 400)}>
<script>
const todo = document.getElementById('todo');
// As TodoMVC: Enter adds the todo and clears the field (no blur, no change).
todo.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' || !todo.value.trim()) return;
  e.preventDefault();
  const li = document.createElement('li');
  li.textContent = todo.value.trim();
  document.getElementById('list').append(li);
  todo.value = '';
});
// An autocomplete: ArrowDown highlights the suggestion (the page takes the key), Enter takes it.
const city = document.getElementById('city');
city.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown') { e.preventDefault(); document.getElementById('choice').textContent = 'Paris'; }
  if (e.key === 'Enter' && document.getElementById('choice').textContent) { e.preventDefault(); city.value = 'Paris'; }
});
// The code is submitted by the page itself at four characters.
document.getElementById('code').addEventListener('input', (e) => { if (e.target.value.length >= 4) document.getElementById('codes').requestSubmit(); });
document.getElementById('codes').addEventListener('submit', (e) => { e.preventDefault(); document.getElementById('submitted').textContent = 'submitted ' + document.getElementById('code').value; document.getElementById('code').value = ''; });
// Escape clears the search.
document.getElementById('search').addEventListener('keydown', (e) => { if (e.key === 'Escape') e.target.value = ''; });
document.getElementById('prefill').addEventListener('click', () => { document.getElementById('greeting').value = 'Hello from the page'; });
document.getElementById('jump').addEventListener('input', (e) => { if (e.target.value.endsWith('!')) location.href = '/next'; });
document.getElementById('draft').addEventListener('input', (e) => window.__flowctlStudio?.({ kind: 'refused', message: 'draft ' + e.target.value.length }));
// A page shortcut: k (outside fields) is the page's.
document.addEventListener('keydown', (e) => {
  if (e.key === 'k' && !(e.target instanceof HTMLInputElement) && !e.target.isContentEditable) { e.preventDefault(); document.getElementById('shortcut').textContent = 'k pressed'; }
});
</script>`,
);

/** A chat box: a textarea where Enter sends (the page takes it) and Shift+Enter is a new line. */
const CHAT = page(
  'Chat',
  `<label for="msg" style="position:absolute;left:360px;top:40px">Message</label><textarea id="msg" ${box(40)}></textarea>
<ol id="sent" style="position:absolute;left:700px;top:40px;margin:0"></ol>
<script>
const msg = document.getElementById('msg');
msg.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' || e.shiftKey) return;
  e.preventDefault();
  const li = document.createElement('li');
  li.textContent = msg.value;
  document.getElementById('sent').append(li);
  msg.value = '';
});
</script>`,
);

async function startSite(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const html = (text: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    if (path === '/fields') return html(FIELDS);
    if (path === '/chat') return html(CHAT);
    if (path === '/next') return html(page('Next', `<p ${box(40)}>The next page</p>`));
    if (path === '/framed')
      return html(page('Framed', `<iframe src="/chat" title="chat" style="position:absolute;left:0;top:0;width:1000px;height:300px;border:0"></iframe>`));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const ROOT = resolve(import.meta.dirname, '../..');

let h: HostedFixture;
let site: { server: Server; url: string };

beforeAll(async () => {
  site = await startSite();
  await mkdir(join(ROOT, 'test-artifacts', 'studio'), { recursive: true });
  h = await startHosted({ egressAllow: FIXTURE_SITES });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

/** A studio page of the shipped assembly's browser, with what it reports and the viewer's input. */
async function openStudio(path: string) {
  const actions: any[] = [];
  const notices: string[] = [];
  let arrived: () => void = () => {};
  /** Documents loaded completely, by path; and who waits for one. */
  const loadedPaths = new Set<string>();
  const loadWaiters = new Map<string, (() => void)[]>();
  const whenLoaded = (p: string) => (loadedPaths.has(p) ? Promise.resolve() : new Promise<void>((r) => loadWaiters.set(p, [...(loadWaiters.get(p) ?? []), r])));
  const ready = whenLoaded(path);
  const studioPage: StudioPage = await h.studio.open({
    url: `${site.url}${path}`,
    viewport: { width: 1100, height: 720 },
    onFrame: (_f, ack) => ack(),
    onAction: (a: StudioAction) => {
      actions.push(a);
      arrived();
    },
    onNotice: (m) => notices.push(m),
    onLoaded: (url, complete) => {
      if (!complete) return;
      const loadedPath = new URL(url).pathname;
      loadedPaths.add(loadedPath);
      for (const w of loadWaiters.get(loadedPath) ?? []) w();
      loadWaiters.delete(loadedPath);
    },
  });
  await ready;
  const s = {
    page: studioPage,
    actions,
    notices,
    /** Resolves once `n` actions are reported. */
    next: (n: number) => (actions.length >= n ? Promise.resolve() : new Promise<void>((r) => (arrived = () => actions.length >= n && r()))),
    click(p: { x: number; y: number }) {
      studioPage.input({ type: 'mouse', action: 'move', ...p });
      studioPage.input({ type: 'mouse', action: 'down', ...p, button: 'left', clickCount: 1 });
      studioPage.input({ type: 'mouse', action: 'up', ...p, button: 'left', clickCount: 1 });
    },
    type(text: string) {
      studioPage.input({ type: 'text', text });
    },
    /** A key as a keyboard sends it; `Shift+Enter` holds Shift around it. */
    press(chord: string) {
      const keys = chord.split('+');
      for (const k of keys) studioPage.input({ type: 'key', action: 'down', key: k });
      for (const k of [...keys].reverse()) studioPage.input({ type: 'key', action: 'up', key: k });
    },
    /** Resolves once a document at `path` has loaded completely. */
    loaded: whenLoaded,
    /** Everything typed so far is committed and reported (the browser's barrier): the list is final. */
    settle: () => studioPage.commitTyping(),
  };
  return s;
}

/** An action with its target's primary locator only (fallbacks left out). */
function primary(a: any): any {
  const strip = (t: any) => {
    if (!t) return t;
    const { fallbacks: _f, ...p } = t;
    return p;
  };
  return a.target === undefined ? a : { ...a, target: strip(a.target) };
}

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
