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
import { waitUntil } from '../helpers/wait.js';

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
      expect(exec.stats()).toEqual({ launches: 0, connections: 0, openContexts: 0, contextsCreated: 0, contextsClosed: 0, warmContexts: 0 });
      for (let i = 0; i < 3; i++) {
        const ctx = createTestToolContext({ runId: `lazy-${i}` });
        try {
          await byRef(exec.tools, 'navigate').run({ url: `${site.url}/index.html` }, ctx);
        } finally {
          await ctx.close();
        }
      }
      expect(exec.stats()).toEqual({ launches: 1, connections: 0, openContexts: 0, contextsCreated: 3, contextsClosed: 3, warmContexts: 0 });
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

describe('a remote browser that goes away (SVC_BROWSER_CDP_URL)', () => {
  const freePort = async () => {
    const { createServer } = await import('node:net');
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise((r) => s.close(r));
    return port;
  };
  const startRemote = async (port: number): Promise<ChildProcess> => {
    const profile = await mkdtemp(join(tmpdir(), 'flowctl-cdp-'));
    const child = spawn(
      '/usr/bin/chromium',
      [...LAUNCH_FLAGS, '--headless', `--remote-debugging-port=${port}`, '--remote-debugging-address=127.0.0.1', `--user-data-dir=${profile}`, 'about:blank'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        // Its own process group: /usr/bin/chromium is a wrapper script, and the browser must die with it.
        detached: true,
      },
    );
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        if (/DevTools listening on ws:\/\//.test(err)) resolve();
      });
      child.on('exit', () => reject(new Error(`chromium exited: ${err}`)));
    });
    return child;
  };

  it('a lost browser fails the next step clearly (browser_connect_failed, retryable) and the run after it reconnects', async () => {
    const port = await freePort();
    let remote = await startRemote(port);
    const exec = createPlaywrightExecutor({ cdpEndpoint: `http://127.0.0.1:${port}` });
    try {
      const first = createTestToolContext({ runId: 'remote-1' });
      try {
        await byRef(exec.tools, 'navigate').run({ url: `${site.url}/index.html` }, first);
      } finally {
        await first.close();
      }
      const gone = new Promise((r) => remote.once('exit', r));
      process.kill(-remote.pid!, 'SIGKILL');
      await gone;
      // The browser is gone once its DevTools port refuses connections.
      await waitUntil(
        async () =>
          fetch(`http://127.0.0.1:${port}/json/version`).then(
            () => false,
            () => true,
          ),
        { what: 'the DevTools port to close' },
      );
      const during = createTestToolContext({ runId: 'remote-2' });
      try {
        const err = await byRef(exec.tools, 'navigate')
          .run({ url: `${site.url}/index.html` }, during)
          .then(
            () => undefined,
            (e: unknown) => e as { code?: string; data?: { retryable?: boolean }; message: string },
          );
        expect(err?.code).toBe('browser_connect_failed');
        expect(err?.data?.retryable).toBe(true);
        expect(err?.message).toContain(`127.0.0.1:${port}`);
      } finally {
        await during.close();
      }
      remote = await startRemote(port);
      const after = createTestToolContext({ runId: 'remote-3' });
      try {
        await byRef(exec.tools, 'navigate').run({ url: `${site.url}/index.html` }, after);
        expect(await byRef(exec.tools, 'extract').run({ target: 'h1' }, after)).toEqual({ matched: 'css=h1', value: 'Shelf' });
      } finally {
        await after.close();
      }
      expect(exec.stats().connections).toBe(2);
    } finally {
      await exec.dispose();
      try {
        process.kill(-remote.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }, 180_000);
});
