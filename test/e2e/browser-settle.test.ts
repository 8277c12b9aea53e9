import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';

/**
 * Pages that change after an action's requests answer: a search whose results arrive by fetch (the
 * table shows stale rows until then), and a form that posts and navigates. Reads after the action
 * must see the page after those requests, with no sleep in the flow.
 */
const PAGE = `<!doctype html><html><body>
<input aria-label="Query" id="q"><button id="go">Search</button>
<table><tbody id="rows"><tr><td>stale result</td></tr></tbody></table>
<p id="status">idle</p>
<form method="post" action="/submit"><input name="n" value="7"><button id="post">Post</button></form>
<form method="post" action="/slow-submit"><button id="slow">Post slowly</button></form>
<script>
document.getElementById('go').addEventListener('click', async () => {
  const res = await fetch('/api/search?q=' + encodeURIComponent(document.getElementById('q').value));
  const items = await res.json();
  document.getElementById('rows').innerHTML = items.map((i) => '<tr><td>' + i + '</td></tr>').join('');
  document.getElementById('status').textContent = items.length + ' results';
});
</script></body></html>`;

let server: Server;
let base: string;
let exec: PlaywrightExecutor;
const tool = (name: string): Tool => exec.tools.find((t) => t.contract.ref === `browser/${name}`)!;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/api/search') {
      // Answer late, so a read right after the click would still see the stale row.
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify([`${url.searchParams.get('q')} one`, `${url.searchParams.get('q')} two`]));
      }, 400);
      return;
    }
    if (url.pathname === '/slow-submit') {
      setTimeout(() => {
        res.setHeader('content-type', 'text/html');
        res.end('<!doctype html><p id="done">posted slowly</p>');
      }, 1200);
      return;
    }
    if (url.pathname === '/submit') {
      setTimeout(() => {
        res.setHeader('content-type', 'text/html');
        res.end('<!doctype html><p id="done">posted</p>');
      }, 300);
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  exec = createPlaywrightExecutor();
});

afterAll(async () => {
  await exec?.dispose();
  await new Promise((r) => server.close(r));
});

describe('reads after an action see the page after the requests it started', () => {
  it('a click that fetches: extract reads the new rows, not the stale ones', async () => {
    const ctx = createTestToolContext({ runId: 'settle-1', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      await tool('fill').run({ target: { label: 'Query' }, value: 'pears' }, ctx);
      await tool('click').run({ target: { role: 'button', name: 'Search' } }, ctx);
      const rows = (await tool('extract').run({ target: '#rows td', all: true }, ctx)) as { value: unknown };
      expect(rows.value).toEqual(['pears one', 'pears two']);
      const status = (await tool('extract').run({ target: '#status' }, ctx)) as { value: unknown };
      expect(status.value).toBe('2 results');
    } finally {
      await ctx.close();
    }
  });

  it('a click that posts a form and navigates: extract reads the next page', async () => {
    const ctx = createTestToolContext({ runId: 'settle-2', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      await tool('click').run({ target: '#post' }, ctx);
      const done = (await tool('extract').run({ target: '#done' }, ctx)) as { value: unknown };
      expect(done.value).toBe('posted');
    } finally {
      await ctx.close();
    }
  });

  it('a click whose navigation outlasts the primary locator budget succeeds once, without trying fallbacks', async () => {
    // Before: Playwright's click waited for the navigation it started; the primary budget ran out
    // after the click was performed, and the fallbacks were tried on the next page (locator_drift,
    // or a second click). The click now returns once performed and the navigation settles after it.
    const quick = createPlaywrightExecutor({ primaryTimeoutMs: 300 });
    const ctx = createTestToolContext({ runId: 'settle-3', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      const use = (name: string): Tool => quick.tools.find((t) => t.contract.ref === `browser/${name}`)!;
      await use('navigate').run({ url: `${base}/` }, ctx);
      await use('click').run({ target: { css: '#slow', fallbacks: [{ role: 'button', name: 'Post slowly' }] } }, ctx);
      expect(ctx.warnings).toEqual([]);
      const done = (await use('extract').run({ target: '#done' }, ctx)) as { value: unknown };
      expect(done.value).toBe('posted slowly');
    } finally {
      await ctx.close();
      await quick.dispose();
    }
  });
});
