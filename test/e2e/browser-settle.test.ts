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
<button id="save">Save</button><p id="saved">unsaved</p>
<input aria-label="Filter" id="filter"><p id="filtered">all</p>
<button id="chain">Chain</button><p id="chained">0</p>
<p id="clock">0</p><p id="spinner">0</p>
<script>
// A simulated delay, no request behind it: the change lands 400 ms after the click.
document.getElementById('save').addEventListener('click', async () => {
  document.getElementById('saved').textContent = 'saving';
  await new Promise((r) => setTimeout(r, 400));
  document.getElementById('saved').textContent = 'saved';
});
// A debounced search box: typing settles 300 ms after the last key, then a request answers.
let debounce;
document.getElementById('filter').addEventListener('input', (e) => {
  clearTimeout(debounce);
  debounce = setTimeout(async () => {
    const res = await fetch('/api/search?q=' + encodeURIComponent(e.target.value));
    document.getElementById('filtered').textContent = (await res.json()).join(', ');
  }, 300);
});
// Timers that set timers: three hops of 150 ms.
document.getElementById('chain').addEventListener('click', () => {
  const hop = (n) => setTimeout(() => { document.getElementById('chained').textContent = String(n); if (n < 3) hop(n + 1); }, 150);
  hop(1);
});
</script>
<script>
document.getElementById('go').addEventListener('click', async () => {
  const res = await fetch('/api/search?q=' + encodeURIComponent(document.getElementById('q').value));
  const items = await res.json();
  document.getElementById('rows').innerHTML = items.map((i) => '<tr><td>' + i + '</td></tr>').join('');
  document.getElementById('status').textContent = items.length + ' results';
});
</script></body></html>`;

// A named loop (a clock) is recognised as a loop after three fires; an anonymous one that keeps
// scheduling new closures is cut off by the timer bound.
const LOOPS = `<!doctype html><html><body><p id="clock">0</p><p id="spin">0</p><p id="native"></p><button id="noop">Noop</button><script>
document.getElementById('native').textContent = String(/\\[native code\\]/.test(String(setTimeout)) && /\\[native code\\]/.test(clearTimeout.toString()));
let ticks = 0;
function tick() { document.getElementById('clock').textContent = String(++ticks); setTimeout(tick, 50); }
tick();
if (location.hash === '#anonymous') {
  let spins = 0;
  const spin = () => setTimeout(() => { document.getElementById('spin').textContent = String(++spins); spin(); }, 50);
  spin();
}
</script></body></html>`;

// An action whose request the server holds until the test releases it, and one whose response starts a follow-up.
const HOLD = `<!doctype html><html><body><button id="start">Start</button><p id="held">waiting</p>
<input aria-label="Name" id="name"><button id="send">Send</button><p id="sent">no</p><script>
document.getElementById('start').addEventListener('click', async () => {
  const res = await fetch('/api/hold');
  document.getElementById('held').textContent = await res.text();
});
document.getElementById('send').addEventListener('click', async () => {
  await fetch('/api/first', { method: 'POST' });
  await fetch('/api/followup', { method: 'POST' });
  document.getElementById('sent').textContent = 'yes';
});
</script></body></html>`;

let server: Server;
let releaseHold: (() => void) | undefined;
const held: (() => void)[] = [];
let followups = 0;
let base: string;
let exec: PlaywrightExecutor;
let slowPosts = 0;
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
      slowPosts++;
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
    if (url.pathname === '/api/hold') {
      held.push(() => res.end('released'));
      releaseHold = () => held.splice(0).forEach((end) => end());
      return;
    }
    if (url.pathname === '/api/first') return void res.end('ok');
    if (url.pathname === '/api/followup') {
      followups++;
      return void res.end('ok');
    }
    if (url.pathname === '/hold') {
      res.setHeader('content-type', 'text/html');
      res.end(HOLD);
      return;
    }
    if (url.pathname === '/loops') {
      res.setHeader('content-type', 'text/html');
      res.end(LOOPS);
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

  it('a click whose navigation commits late is performed once, without trying fallbacks', async () => {
    // Before: the primary locator had a share of the step's budget (300 ms here, in CI); on a loaded
    // machine the click itself outlasted it ("performing click action") and the step failed with
    // browser_timeout. Now no locator has a budget of its own: the primary matched exactly one
    // element, so the click gets the step's budget, and the navigation it started settles after it.
    const ctx = createTestToolContext({ runId: 'settle-3', cwd: process.cwd(), timeoutMs: 60_000 });
    const before = slowPosts;
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      await tool('click').run({ target: { css: '#slow', fallbacks: [{ role: 'button', name: 'Post slowly' }] } }, ctx);
      expect(ctx.warnings).toEqual([]);
      const done = (await tool('extract').run({ target: '#done' }, ctx)) as { value: unknown };
      expect(done.value).toBe('posted slowly');
      expect(slowPosts - before).toBe(1);
    } finally {
      await ctx.close();
    }
  });
});

describe('reads after an action see the page after the short timers it set', () => {
  const read = async (ctx: ReturnType<typeof createTestToolContext>, target: string) =>
    ((await tool('extract').run({ target }, ctx)) as { value: unknown }).value;

  it('a click whose handler waits on a timer (no request): extract reads the result, not "saving"', async () => {
    const ctx = createTestToolContext({ runId: 'timers-1', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      await tool('click').run({ target: '#save' }, ctx);
      expect(await read(ctx, '#saved')).toBe('saved');
    } finally {
      await ctx.close();
    }
  });

  it('a debounced input: the timer, then the request it starts, are both awaited', async () => {
    const ctx = createTestToolContext({ runId: 'timers-2', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      await tool('fill').run({ target: { label: 'Filter' }, value: 'figs' }, ctx);
      expect(await read(ctx, '#filtered')).toBe('figs one, figs two');
    } finally {
      await ctx.close();
    }
  });

  it('timers that set timers are followed to the end', async () => {
    const ctx = createTestToolContext({ runId: 'timers-3', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      await tool('click').run({ target: '#chain' }, ctx);
      expect(await read(ctx, '#chained')).toBe('3');
    } finally {
      await ctx.close();
    }
  });

  it('a timer loop does not hold actions up: a named loop is recognised, an anonymous one is cut off and logged', async () => {
    const pendingLogs = (ctx: ReturnType<typeof createTestToolContext>) => ctx.logs.map((l) => l.message).filter((m) => m.includes('timers still pending'));
    const named = createTestToolContext({ runId: 'timers-4', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/loops` }, named);
      await tool('click').run({ target: '#noop' }, named);
      expect(pendingLogs(named)).toEqual([]);
      // The counter is invisible to a page that inspects the timer functions.
      expect(await read(named, '#native')).toBe('true');
    } finally {
      await named.close();
    }
    const anonymous = createTestToolContext({ runId: 'timers-5', cwd: process.cwd(), timeoutMs: 15_000 });
    try {
      await tool('navigate').run({ url: `${base}/loops#anonymous` }, anonymous);
      expect(pendingLogs(anonymous)).toEqual(['[flowctl] [browser] navigate: timers still pending after 3000 ms; going on']);
      // The page keeps working: the loop is still running and the step went on.
      expect(Number(await read(anonymous, '#spin'))).toBeGreaterThan(0);
    } finally {
      await anonymous.close();
    }
  });
});

describe('actions do not wait for what only a read needs', () => {
  it('an action goes on while the request of the action before it is still in flight; the read then waits for it', async () => {
    // Before: every action waited for the requests it started, so the click below waited for a
    // response the server sends only after the fill: a hang (until the step budget ran out).
    const ctx = createTestToolContext({ runId: 'pending-1', cwd: process.cwd(), timeoutMs: 60_000 });
    try {
      await tool('navigate').run({ url: `${base}/hold` }, ctx);
      await tool('click').run({ target: '#start' }, ctx);
      await tool('fill').run({ target: { label: 'Name' }, value: 'Ada' }, ctx);
      expect(held).toHaveLength(1);
      releaseHold!();
      expect(await tool('extract').run({ target: '#held' }, ctx)).toMatchObject({ value: 'released' });
      expect(await tool('extract').run({ target: '#name', attribute: 'value' }, ctx)).toMatchObject({ value: 'Ada' });
    } finally {
      releaseHold?.();
      await ctx.close();
    }
  });

  it("the run's last action finishes what it started before the page closes", async () => {
    const ctx = createTestToolContext({ runId: 'pending-2', cwd: process.cwd(), timeoutMs: 60_000 });
    const before = followups;
    try {
      await tool('navigate').run({ url: `${base}/hold` }, ctx);
      await tool('click').run({ target: '#send' }, ctx);
    } finally {
      await ctx.close();
    }
    // The click's handler posts twice, the second after the first answered: both happened.
    expect(followups - before).toBe(1);
  });
});
