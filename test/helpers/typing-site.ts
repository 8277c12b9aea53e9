import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StudioAction, StudioBrowser, StudioPage } from '../../src/ports/studio.js';

/**
 * The pages of test/e2e/studio-typing.test.ts (fields committed each way a page commits them, an
 * autocomplete, a contenteditable, a password, a chat box) and a studio page on them driven as the
 * viewer drives it, with what the capture script reports.
 */

/** Every element the test touches sits at a fixed place: left 40, width 300, height 32, at `top`. */
const box = (top: number, left = 40) => `style="position:absolute;left:${left}px;top:${top}px;width:300px;height:32px;margin:0;box-sizing:border-box"`;
export const at = (top: number, left = 40) => ({ x: left + 150, y: top + 16 });

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

/** The typing pages on 127.0.0.1: /fields, /chat, /next, and /framed (the chat in a frame). */
export async function startTypingSite(): Promise<{ server: Server; url: string }> {
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

/** A studio page of the shipped assembly's browser, with what it reports and the viewer's input. */
export async function openStudioPage(studio: StudioBrowser, siteUrl: string, path: string) {
  const actions: any[] = [];
  const notices: string[] = [];
  let arrived: () => void = () => {};
  /** Documents loaded completely, by path; and who waits for one. */
  const loadedPaths = new Set<string>();
  const loadWaiters = new Map<string, (() => void)[]>();
  const whenLoaded = (p: string) => (loadedPaths.has(p) ? Promise.resolve() : new Promise<void>((r) => loadWaiters.set(p, [...(loadWaiters.get(p) ?? []), r])));
  const ready = whenLoaded(path);
  const studioPage: StudioPage = await studio.open({
    url: `${siteUrl}${path}`,
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
export function primary(a: any): any {
  const strip = (t: any) => {
    if (!t) return t;
    const { fallbacks: _f, ...p } = t;
    return p;
  };
  return a.target === undefined ? a : { ...a, target: strip(a.target) };
}
