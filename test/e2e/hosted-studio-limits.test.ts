import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioBrowser } from '../../adapters/executor-playwright/index.js';
import { createEgressGuard } from '../../src/tools/egress.js';
import { Client, FIXTURE_SITES, startHosted } from '../helpers/hosted.js';
import { refused, Viewer } from '../helpers/live-socket.js';
import { at, closeDemoSite, type DemoSite, startDemoSite } from '../helpers/studio-demo-site.js';

/**
 * The studio's live sockets under their limits, each test on a service of its own over the demo site
 * (test/helpers/studio-demo-site.ts): keepalive pings drop a deaf viewer and free its place; the
 * process-wide cap, the idle close, new tabs and frames refused, bad and flooding messages; the studio
 * browser under an egress guard.
 */

let site: DemoSite;

beforeAll(async () => {
  site = await startDemoSite();
});

afterAll(async () => {
  await closeDemoSite(site);
});

describe('keepalive of the live sockets', () => {
  it('a viewer that answers no pings is dropped (1006) and frees its studio session and its run live view place; one that answers stays', async () => {
    // Pings every second here; the run live view has one place per org and no frames source (only
    // the sockets are under test).
    const k = await startHosted(
      { streamHeartbeatSeconds: 1, egressAllow: FIXTURE_SITES },
      // A frames source that sends none: only the sockets are under test, no run is watched.
      { runLive: { maxViewersPerOrg: 1 }, screencast: { subscribe: () => () => {} } },
    );
    const opened: Viewer[] = [];
    try {
      const o = new Client(k.url);
      await o.signup('keepalive@example.test', 'correct horse battery', 'Keepalive');
      const a = (await o.call('POST', '/api/automations', { name: 'keepalive', site: `${site.url}/`, task: 'x' })).body.automation;
      const ws = k.url.replace(/^http/, 'ws');
      const headers = { origin: k.url, cookie: `svc_session=${o.cookie}` };

      // The studio: a deaf viewer and one that answers, side by side.
      const before = k.studio.openPages();
      const deaf = await Viewer.open(`${ws}/api/authoring/${a.id}/live?width=640&height=480`, headers, { autoPong: false });
      const polite = await Viewer.open(`${ws}/api/authoring/${a.id}/live?width=640&height=480`, headers);
      opened.push(deaf, polite);
      await polite.next((m) => m.type === 'ready');
      // The deaf viewer is dropped after two unanswered pings, which on a loaded machine can come before
      // its page is ready: only its drop and the freed place are asserted, never its 'ready'.
      expect((await deaf.closed).code).toBe(1006);
      await expect.poll(() => k.studio.openPages(), { timeout: 60_000 }).toBe(before + 1);
      await polite.pings(2);
      expect(polite.ws.readyState).toBe(polite.ws.OPEN);
      polite.close();
      await polite.closed;
      await expect.poll(() => k.studio.openPages(), { timeout: 60_000 }).toBe(before);

      // The run live view: the deaf viewer holds the org's one place until it is dropped.
      const url = `${ws}/api/automations/${a.id}/live`;
      const deafView = await Viewer.open(url, headers, { autoPong: false });
      opened.push(deafView);
      await deafView.next((m) => m.type === 'waiting');
      const full = await refused(url, headers);
      expect([full.status, full.body.error]).toEqual([429, 'rate_limited']);
      expect((await deafView.closed).code).toBe(1006);
      const next = await Viewer.open(url, headers);
      opened.push(next);
      await next.next((m) => m.type === 'waiting');
      await next.pings(3);
      expect(next.ws.readyState).toBe(next.ws.OPEN);
    } finally {
      for (const v of opened) v.ws.terminate();
      await k.close();
    }
  }, 120_000);
});

describe('limits and refusals', () => {
  it('the process-wide cap, the idle close (which frees the place and the browser context), new tabs and frames refused', async () => {
    let shown: Viewer | undefined;
    const small = await startHosted({ egressAllow: FIXTURE_SITES }, { studio: { maxSessions: 1, idleTimeoutMs: 6000 } });
    try {
      const o = new Client(small.url);
      const p = new Client(small.url);
      await o.signup('solo@example.test', 'correct horse battery', 'Solo');
      await p.signup('peer@example.test', 'correct horse battery', 'Peer');
      const mine = (await o.call('POST', '/api/automations', { name: 'popups', site: `${site.url}/popup`, task: 'x' })).body.automation;
      const theirs = (await p.call('POST', '/api/automations', { name: 'theirs', site: `${site.url}/`, task: 'x' })).body.automation;
      const ws = small.url.replace(/^http/, 'ws');
      const before = small.studio.openPages();
      const viewer = await Viewer.open(`${ws}/api/authoring/${mine.id}/live?width=640&height=480`, { origin: small.url, cookie: `svc_session=${o.cookie}` });
      shown = viewer;
      await viewer.next((m) => m.type === 'ready');
      expect(small.studio.openPages()).toBe(before + 1);
      // Another org, same process: the one place is taken.
      const full = await refused(`${ws}/api/authoring/${theirs.id}/live`, { origin: small.url, cookie: `svc_session=${p.cookie}` });
      expect([full.status, full.body.error]).toEqual([429, 'rate_limited']);

      // Complete: the iframe's document (and its capture script) is there too.
      await viewer.loaded('/popup', true);
      // A click into the frame is refused; the link's click is captured and its new tab closed.
      viewer.click({ x: 140, y: 200 });
      await viewer.next((m) => m.type === 'notice' && /frames/.test(m.message));
      viewer.click(at(40));
      await viewer.next((m) => m.type === 'notice' && /new tabs/.test(m.message));
      const ops = await viewer.opCount(2);
      expect(ops[1]).toMatchObject({ kind: 'click', target: { role: 'link', name: 'Open in a new tab' } });
      // Bad messages are answered, and the session goes on.
      viewer.send({ type: 'mouse', action: 'hover', x: 1, y: 1 });
      await viewer.next((m) => m.type === 'error' && m.error === 'invalid_message');
      viewer.send({ type: 'extract', field: '1bad' });
      await viewer.next((m) => m.type === 'error' && /identifier/.test(m.message));
      viewer.send({ type: 'extract', field: 'ok', all: 'yes' });
      await viewer.next((m) => m.type === 'error' && m.error === 'invalid_message' && /extract\.all must be true or false/.test(m.message));
      // A flood: past 400 messages in a second the rest is dropped, said once.
      for (let i = 0; i < 450; i++) viewer.send({ type: 'ping' });
      await viewer.next((m) => m.type === 'error' && m.error === 'rate_limited');
      expect(viewer.messages.filter((m) => m.type === 'error' && m.error === 'rate_limited')).toHaveLength(1);

      // No more input: the idle close, then the place is free again.
      const closed = new Promise<number>((r) => viewer.ws.once('close', (code) => r(code)));
      expect(await viewer.next((m) => m.type === 'closed')).toMatchObject({ reason: 'idle' });
      expect(await closed).toBe(4000);
      await expect.poll(() => small.studio.openPages(), { timeout: 60_000 }).toBe(before);
      const next = await Viewer.open(`${ws}/api/authoring/${theirs.id}/live`, { origin: small.url, cookie: `svc_session=${p.cookie}` });
      await next.next((m) => m.type === 'ready');
      await next.loaded('/');
      // Logging out ends the capture at the next action: nothing more is stored.
      expect((await p.call('POST', '/api/auth/logout')).status).toBeLessThan(300);
      next.click(at(160));
      expect(await next.next((m) => m.type === 'closed')).toMatchObject({ reason: 'unauthenticated' });
      const stored = await small.storage.authoring.get(theirs.org_id, theirs.id);
      expect(stored?.captured_ops).toEqual([{ kind: 'navigate', url: `${site.url}/` }]);
    } finally {
      // On a failure, what the viewer was told (frames left out).
      if (process.env.STUDIO_DEBUG) console.log(JSON.stringify(shown?.messages.filter((m) => m.type !== 'frame')));
      await small.close();
    }
  }, 240_000);
});

describe('the studio browser under an egress guard', () => {
  it('a site the guard refuses is not loaded, and the viewer is told why', async () => {
    const guarded = createStudioBrowser({ egress: createEgressGuard({}) });
    const notices: string[] = [];
    let told!: () => void;
    const notice = new Promise<void>((r) => (told = r));
    try {
      const page = await guarded.open({
        url: `${site.url}/`,
        viewport: { width: 640, height: 480 },
        onFrame: (_f, ack) => ack(),
        onAction: () => {},
        onNotice: (m) => {
          notices.push(m);
          if (/may not reach/.test(m)) told();
        },
      });
      await notice;
      expect(notices.find((m) => /may not reach/.test(m))).toContain(new URL(site.url).host);
      await page.close();
    } finally {
      await guarded.dispose();
    }
  });
});
