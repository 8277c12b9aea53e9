import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { StudioBrowser } from '../../src/ports/studio.js';
import { Client, FIXTURE_SITES, type HostedFixture, startHosted } from './hosted.js';

/**
 * The studio's demo site (test/e2e/hosted-studio*.test.ts): a multi-page site on 127.0.0.1 whose
 * elements sit at fixed places (`at`), one page for each kind of locator (labels, test ids, ARIA roles,
 * CSS only), plus drags and an upload, duplicates, pop-ups and frames, and a page that drifts.
 */

export interface DemoSite {
  server: Server;
  url: string;
}

/** The demo site's password: the one a recording types into its sign-in form. */
export const PASSWORD = 'demo-pass-7Q';

/** Every element the test touches sits at a fixed place: left 40, width 300, height 32, at `top`. */
const box = (top: number) => `style="position:absolute;left:40px;top:${top}px;width:300px;height:32px;margin:0;box-sizing:border-box"`;
export const at = (top: number) => ({ x: 190, y: top + 16 });

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body style="margin:0;font:16px sans-serif">${body}</body></html>`;
}

/** The drift page's variant: as recorded, its test ids and ids renamed, or the Send button removed. */
let driftVariant: 'base' | 'renamed' | 'removed' = 'base';

export function setDriftVariant(variant: typeof driftVariant): void {
  driftVariant = variant;
}

export async function startDemoSite(): Promise<DemoSite> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (text: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    const signedIn = /(?:^|;\s*)who=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (url.pathname === '/' && req.method === 'GET') {
      // Labels: a textbox (role + name first), a password field (no role: its label), a button.
      return html(
        page(
          'Sign in',
          `<form method="post" action="/login">
<label for="u" style="position:absolute;left:360px;top:40px">Username</label><input id="u" name="user" autocomplete="off" ${box(40)}>
<label for="p" style="position:absolute;left:360px;top:100px">Password</label><input id="p" type="password" name="password" ${box(100)}>
<button type="submit" ${box(160)}>Sign in</button></form>`,
        ),
      );
    }
    if (url.pathname === '/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const ok = form.get('password') === PASSWORD && (form.get('user') ?? '') !== '';
        res.writeHead(303, { location: '/search', ...(ok ? { 'set-cookie': `who=${encodeURIComponent(form.get('user')!)}; Path=/` } : {}) }).end();
      });
      return;
    }
    if (url.pathname === '/search') {
      // Test ids.
      return html(
        page(
          'Search',
          `<input data-testid="product" ${box(40)}>
<select data-testid="size" ${box(100)}><option value="s">Small</option><option value="m">Medium</option><option value="l">Large</option></select>
<button data-testid="find" ${box(160)} onclick="location.href='/confirm?q='+encodeURIComponent(document.querySelector('[data-testid=product]').value)+'&size='+document.querySelector('[data-testid=size]').value">Find</button>`,
        ),
      );
    }
    if (url.pathname === '/confirm') {
      // ARIA roles on plain divs.
      return html(
        page(
          'Confirm',
          `<div role="checkbox" aria-checked="false" aria-label="Gift wrap" tabindex="0" ${box(40)} onclick="this.setAttribute('aria-checked', this.getAttribute('aria-checked')==='true'?'false':'true')">[ ] wrap it</div>
<div role="button" aria-label="Continue" tabindex="0" ${box(100)} onclick="location.href='/result'+location.search+'&gift='+document.querySelector('[role=checkbox]').getAttribute('aria-checked')">&rarr;</div>`,
        ),
      );
    }
    if (url.pathname === '/dupes') {
      // Two buttons named alike (one with a generated id), and a total with a stable id.
      return html(
        page(
          'Dupes',
          `<ul style="margin:0;padding:0;list-style:none"><li class="item"><button id="ember123" ${box(40)}>Delete</button></li><li class="item"><button ${box(100)}>Delete</button></li></ul>
<div id="totals" ${box(160)}>Total 42</div>`,
        ),
      );
    }
    if (url.pathname === '/popup') {
      return html(
        page(
          'Popup',
          `<a href="/" target="_blank" ${box(40)}>Open in a new tab</a><iframe src="/" title="framed" style="position:absolute;left:40px;top:120px;width:400px;height:240px"></iframe>`,
        ),
      );
    }
    if (url.pathname === '/drift') {
      // Every strategy names the field and the button: test id, role + name, label or text, id. The
      // variants rename the test ids and ids (the page's own script follows), or remove the button.
      const v = driftVariant === 'base' ? '' : '-v2';
      const button = driftVariant === 'removed' ? '' : `<button id="send${v}" data-testid="send-button${v}" ${box(100)}>Send</button>`;
      return html(
        page(
          'Drift',
          `<label for="email${v}" style="position:absolute;left:360px;top:40px">Email</label><input id="email${v}" data-testid="email-input${v}" autocomplete="off" ${box(40)}>
${button}<output class="result" ${box(160)}></output>
<script>document.getElementById('send${v}')?.addEventListener('click', () => { document.querySelector('.result').textContent = 'Sent to ' + document.getElementById('email${v}').value; });</script>`,
        ),
      );
    }
    if (url.pathname === '/board') {
      // Drags and an upload: an HTML5 card dropped on a basket, a pointer-dragged chip dropped on a
      // shelf (mousedown/mousemove/mouseup, no HTML5), a file input; Done carries what happened.
      return html(
        page(
          'Board',
          `<div draggable="true" id="pears" ${box(40)}>Pears</div>
<div data-testid="basket" aria-label="Basket" style="position:absolute;left:400px;top:40px;width:300px;height:120px;border:1px solid #999">Basket: <span id="basket-items"></span></div>
<div id="chip" ${box(200)}>Chip</div>
<div id="shelf" aria-label="Shelf" style="position:absolute;left:400px;top:200px;width:300px;height:120px;border:1px solid #999">Shelf: <span id="shelf-items"></span></div>
<label for="receipt" style="position:absolute;left:360px;top:360px">Receipt</label><input type="file" id="receipt" ${box(360)}>
<p id="file-status" style="position:absolute;left:400px;top:400px;margin:0"></p>
<button id="done" ${box(420)}>Done</button>
<script>
const basket = document.getElementById('basket-items'), shelf = document.getElementById('shelf-items');
document.getElementById('pears').addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'Pears'));
const zone = document.querySelector('[data-testid=basket]');
zone.addEventListener('dragover', (e) => e.preventDefault());
zone.addEventListener('drop', (e) => { e.preventDefault(); basket.textContent = e.dataTransfer.getData('text/plain'); });
const chip = document.getElementById('chip');
let dragging = false;
chip.addEventListener('mousedown', () => { dragging = true; });
document.addEventListener('mousemove', (e) => { if (dragging) { chip.style.left = (e.clientX - 150) + 'px'; chip.style.top = (e.clientY - 16) + 'px'; } });
document.addEventListener('mouseup', (e) => {
  if (!dragging) return;
  dragging = false;
  const r = document.getElementById('shelf').getBoundingClientRect();
  if (e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom) shelf.textContent = 'Chip';
  chip.style.left = '40px'; chip.style.top = '200px';
});
let file = 'none';
document.getElementById('receipt').addEventListener('change', async (e) => {
  const f = e.target.files[0];
  file = f ? f.name + ' ' + f.size + ' bytes, ' + (await f.text()).trim().split('\\n').length + ' lines' : 'none';
  document.getElementById('file-status').textContent = file;
});
document.getElementById('done').addEventListener('click', () => {
  location.href = '/board-result?basket=' + encodeURIComponent(basket.textContent) + '&shelf=' + encodeURIComponent(shelf.textContent) + '&file=' + encodeURIComponent(file);
});
</script>`,
        ),
      );
    }
    if (url.pathname === '/framed-board') {
      return html(
        page('Framed board', `<iframe src="/board" title="board" style="position:absolute;left:0;top:0;width:780px;height:560px;border:0"></iframe>`),
      );
    }
    if (url.pathname === '/board-result') {
      const q = url.searchParams;
      return html(
        page(
          'Board result',
          `<p id="outcome" ${box(40)}>${`basket ${q.get('basket')}; shelf ${q.get('shelf')}; receipt ${q.get('file')}`.replace(/[<&]/g, '')}</p>`,
        ),
      );
    }
    if (url.pathname === '/result') {
      // CSS only: no test id, role, label or id on the summary.
      const summary = signedIn
        ? `Found ${url.searchParams.get('q')} (${url.searchParams.get('size')}) for ${decodeURIComponent(signedIn)}, gift ${url.searchParams.get('gift')}`
        : 'Not signed in';
      return html(page('Result', `<div class="panel" ${box(40)}><span class="summary">${summary.replace(/[<&]/g, '')}</span></div>`));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The hosted service with the studio (two live sessions an org), the demo site, and three users. */
export interface StudioOrgs {
  h: HostedFixture;
  studio: StudioBrowser;
  site: DemoSite;
  /** Owner of "Studio org"; `member` is a member of it, `other` the owner of another org. */
  owner: Client;
  member: Client;
  other: Client;
  /** The service's URL as ws:. */
  wsBase: string;
  close(): Promise<void>;
}

export async function startStudioOrgs(): Promise<StudioOrgs> {
  const site = await startDemoSite();
  const h = await startHosted({ egressAllow: FIXTURE_SITES }, { studio: { maxSessionsPerOrg: 2 } });
  const owner = new Client(h.url);
  const other = new Client(h.url);
  const member = new Client(h.url);
  const mine = await owner.signup('owner@example.test', 'correct horse battery', 'Studio org');
  await other.signup('other@example.test', 'correct horse battery', 'Other org');
  await member.signup('member@example.test');
  // The member joins the owner's org as a member.
  await owner.addMember(member, 'member@example.test', mine.org.id);
  return {
    h,
    studio: h.studio,
    site,
    owner,
    member,
    other,
    wsBase: h.url.replace(/^http/, 'ws'),
    async close() {
      await h.close();
      await closeDemoSite(site);
    },
  };
}

/**
 * The studio orgs of one test file: started before its tests, closed after them. The returned
 * function gives them to a test (it throws before they are started).
 */
export function studioOrgsOfFile(): () => StudioOrgs {
  let orgs: StudioOrgs | undefined;
  beforeAll(async () => {
    orgs = await startStudioOrgs();
  }, 120_000);
  afterAll(async () => {
    await orgs?.close();
  });
  return () => {
    if (!orgs) throw new Error('the studio orgs are not started: call studioOrgsOfFile() at the top of the test file');
    return orgs;
  };
}

export function closeDemoSite(site: DemoSite | undefined): Promise<void> {
  return new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
}
