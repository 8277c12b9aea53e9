import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, LAUNCH_FLAGS, resolveBrowser } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';
import { startSite, type SiteServer } from '../helpers/site-server.js';

/** Launch, connect and resolve for real: lazy launch, a remote browser over CDP, the @sparticuz/chromium fallback. */

let site: SiteServer;
const byRef = (tools: Tool[], name: string) => tools.find((t) => t.contract.ref === `browser/${name}`)!;

beforeAll(async () => {
  site = await startSite({ password: 'unused' });
});
afterAll(async () => {
  await site?.close();
});

describe('launching', () => {
  it('launches nothing until the first browser step, then one browser for every run', async () => {
    const exec = createPlaywrightExecutor();
    try {
      expect(exec.stats()).toEqual({ launches: 0, connections: 0, openContexts: 0, contextsCreated: 0 });
      for (let i = 0; i < 3; i++) {
        const ctx = createTestToolContext({ runId: `lazy-${i}` });
        try {
          await byRef(exec.tools, 'navigate').run({ url: `${site.url}/index.html` }, ctx);
        } finally {
          await ctx.close();
        }
      }
      expect(exec.stats()).toEqual({ launches: 1, connections: 0, openContexts: 0, contextsCreated: 3 });
    } finally {
      await exec.dispose();
    }
  });

  it('fails the step with browser_not_found when the configured Chromium does not exist', async () => {
    const exec = createPlaywrightExecutor({ executablePath: '/nonexistent/chromium' });
    const ctx = createTestToolContext();
    try {
      await expect(byRef(exec.tools, 'navigate').run({ url: `${site.url}/` }, ctx)).rejects.toMatchObject({ code: 'browser_not_found' });
    } finally {
      await ctx.close();
      await exec.dispose();
    }
  });
});

describe('a remote browser over CDP', () => {
  let remote: ChildProcess;
  let endpoint: string;

  beforeAll(async () => {
    const profile = await mkdtemp(join(tmpdir(), 'flowctl-cdp-'));
    remote = spawn('/usr/bin/chromium', [...LAUNCH_FLAGS, '--headless', '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    endpoint = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`no DevTools endpoint: ${err}`)), 90_000);
      remote.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      remote.on('exit', () => reject(new Error(`chromium exited: ${err}`)));
    });
  });

  afterAll(() => {
    remote?.kill('SIGKILL');
  });

  it('connects instead of launching, isolates runs in their own contexts, and leaves the remote running', async () => {
    const exec = createPlaywrightExecutor({ cdpEndpoint: endpoint });
    try {
      const a = createTestToolContext({ runId: 'cdp-a' });
      const b = createTestToolContext({ runId: 'cdp-b' });
      try {
        await byRef(exec.tools, 'navigate').run({ url: `${site.url}/index.html` }, a);
        await byRef(exec.tools, 'navigate').run({ url: `${site.url}/index.html` }, b);
        expect(await byRef(exec.tools, 'extract').run({ target: 'h1' }, a)).toEqual({ matched: 'css=h1', value: 'Shelf' });
        expect(exec.stats()).toMatchObject({ launches: 0, connections: 1, openContexts: 2 });
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      await exec.dispose();
    }
    expect(remote.exitCode).toBeNull();
  });
});

describe('the @sparticuz/chromium fallback', () => {
  it('resolves and launches when there is no system Chromium', async () => {
    const found = await resolveBrowser({ env: {}, systemPaths: [] });
    expect(found.source).toBe('sparticuz');
    const browser = await chromium.launch({ executablePath: found.executablePath, args: [...LAUNCH_FLAGS] });
    try {
      const page = await browser.newPage();
      await page.goto(`${site.url}/index.html`);
      expect(await page.locator('h1').textContent()).toBe('Shelf');
    } finally {
      await browser.close();
    }
  });
});
