import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';
import { stepFailure } from '../helpers/site-server.js';

/**
 * Drift is decided on the settled page, not after a share of the step's budget (docs/browser.md,
 * "Locator drift"). Every step here gets an hour of budget: a rule that waited for a share of it
 * before looking at the fallbacks would hang (the test's own timeout is only a cap on that hang).
 */

const HOUR = 3_600_000;

const FORM = `<!doctype html><html><body>
<label>Your name <input id="full-name"></label>
<button id="send">Send</button><p id="sent">no</p>
<ul><li>one</li><li>two</li></ul>
<script>
let clicks = 0;
document.getElementById('send').addEventListener('click', () => { document.getElementById('sent').textContent = String(++clicks); });
</script></body></html>`;

// Elements that arrive after the page settled, on a timer longer than settling follows (1,500 ms):
// the primary and its fallback together, so the primary must win.
const LATE = `<!doctype html><html><body><div id="slot"></div><p id="pressed">no</p><script>
setTimeout(() => {
  document.getElementById('slot').innerHTML = '<button id="late" aria-label="Late one">Late</button>';
  document.getElementById('late').addEventListener('click', () => { document.getElementById('pressed').textContent = 'yes'; });
}, 1600);
</script></body></html>`;

let server: Server;
let base: string;
let exec: PlaywrightExecutor;
let patient: PlaywrightExecutor;
const byRef = (e: PlaywrightExecutor, name: string): Tool => e.tools.find((t) => t.contract.ref === `browser/${name}`)!;
const tool = (name: string) => byRef(exec, name);

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(req.url === '/late' ? LATE : FORM);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Default options: no budget is configured anywhere.
  exec = createPlaywrightExecutor();
  // A window that only caps a hang, so an element on a late timer appears within it on any machine.
  patient = createPlaywrightExecutor({ appearTimeoutMs: 120_000 });
});

afterAll(async () => {
  await exec?.dispose();
  await patient?.dispose();
  await new Promise((r) => server.close(r));
});

describe('drift is decided on the settled page, whatever the step budget', () => {
  it('takes a unique fallback at once when the primary matches nothing, with a drift warning listing every count', async () => {
    const ctx = createTestToolContext({ runId: 'drift-1', cwd: process.cwd(), timeoutMs: HOUR });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      const out = await tool('fill').run({ target: { css: '#name', fallbacks: [{ testid: 'name' }, { label: 'Your name' }] }, value: 'Ada' }, ctx);
      expect(out).toEqual({ matched: 'label="Your name"' });
      expect(ctx.warnings).toEqual([
        {
          code: 'drift',
          message: 'fill: primary css=#name matched 0; fallback label="Your name" matched',
          data: {
            matched: 'label="Your name"',
            tried: [
              { locator: 'css=#name', count: 0 },
              { locator: 'testid=name', count: 0 },
              { locator: 'label="Your name"', count: 1 },
            ],
          },
        },
      ]);
      expect(await tool('extract').run({ target: '#full-name', attribute: 'value' }, ctx)).toEqual({ matched: 'css=#full-name', value: 'Ada' });
    } finally {
      await ctx.close();
    }
  });

  it('takes a unique fallback when the primary matches several, and clicks once', async () => {
    const ctx = createTestToolContext({ runId: 'drift-2', cwd: process.cwd(), timeoutMs: HOUR });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      const out = await tool('click').run({ target: { css: 'button, li', fallbacks: [{ role: 'button', name: 'Send' }] } }, ctx);
      expect(out).toEqual({ matched: 'role=button[name="Send"]' });
      expect(ctx.warnings.map((w) => w.message)).toEqual(['click: primary css=button, li matched 3; fallback role=button[name="Send"] matched']);
      expect(await tool('extract').run({ target: '#sent' }, ctx)).toMatchObject({ value: '1' });
    } finally {
      await ctx.close();
    }
  });

  it('fails with locator_drift and every count when nothing matches, after the appear window and not the step budget', async () => {
    const ctx = createTestToolContext({ runId: 'drift-3', cwd: process.cwd(), timeoutMs: HOUR });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      const err = await stepFailure(tool('click').run({ target: { css: '#gone', fallbacks: [{ text: 'Gone' }, { css: 'li' }] } }, ctx));
      expect(err.code).toBe('locator_drift');
      expect(err.data).toMatchObject({
        retryable: false,
        need: 'one',
        page: `${base}/`,
        tried: [
          { locator: 'css=#gone', count: 0 },
          { locator: 'text="Gone"', count: 0 },
          { locator: 'css=li', count: 2 },
        ],
      });
      expect(err.message).toContain('tried css=#gone: 0, text="Gone": 0, css=li: 2');
      // Nothing was clicked.
      expect(await tool('extract').run({ target: '#sent' }, ctx)).toMatchObject({ value: 'no' });
    } finally {
      await ctx.close();
    }
  });

  it('counts the fallbacks only when the primary does not match: a primary that matches is acted on at once', async () => {
    // A fallback that cannot be counted (its selector does not parse) shows whether it was counted.
    const target = { css: '#send', fallbacks: [{ role: 'button', name: 'Send' }, { css: 'li[' }] };
    const ctx = createTestToolContext({ runId: 'drift-primary', cwd: process.cwd(), timeoutMs: HOUR });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      expect(await tool('click').run({ target }, ctx)).toEqual({ matched: 'css=#send' });
      expect(ctx.warnings).toEqual([]);
      expect(await tool('extract').run({ target: '#sent' }, ctx)).toMatchObject({ value: '1' });
      // The same fallbacks behind a primary that matches nothing are counted, and the broken one fails the step.
      const err = await stepFailure(tool('click').run({ target: { ...target, css: '#gone' } }, ctx));
      expect(err.message).toContain('li[');
      expect(await tool('extract').run({ target: '#sent' }, ctx)).toMatchObject({ value: '1' });
    } finally {
      await ctx.close();
    }
  });

  it('extract all takes a fallback that matches several', async () => {
    const ctx = createTestToolContext({ runId: 'drift-4', cwd: process.cwd(), timeoutMs: HOUR });
    try {
      await tool('navigate').run({ url: `${base}/` }, ctx);
      const out = await tool('extract').run({ target: { css: '#items li', fallbacks: [{ css: 'ul > li' }] }, all: true }, ctx);
      expect(out).toEqual({ matched: 'css=ul > li', value: ['one', 'two'] });
      expect(ctx.warnings.map((w) => w.message)).toEqual(['extract: primary css=#items li matched 0; fallback css=ul > li matched']);
    } finally {
      await ctx.close();
    }
  });
});

describe('an element that appears after the page settled', () => {
  it('is waited for (within the appear window) and acted on through the primary when both appear together', async () => {
    const ctx = createTestToolContext({ runId: 'late-1', cwd: process.cwd(), timeoutMs: HOUR });
    try {
      await byRef(patient, 'navigate').run({ url: `${base}/late` }, ctx);
      const out = await byRef(patient, 'click').run({ target: { css: '#late', fallbacks: [{ role: 'button', name: 'Late one' }] } }, ctx);
      expect(out).toEqual({ matched: 'css=#late' });
      expect(ctx.warnings).toEqual([]);
      expect(await byRef(patient, 'extract').run({ target: '#pressed' }, ctx)).toMatchObject({ value: 'yes' });
    } finally {
      await ctx.close();
    }
  });
});
