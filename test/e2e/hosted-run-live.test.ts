import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused, Viewer } from '../helpers/live-socket.js';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext } from '../../src/tools/testing-context.js';
import type { RunWorker } from '../../src/service/worker.js';
import { Client, FIXTURE_SITES, startBareService, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { publishPureAutomation } from '../helpers/pure-automation.js';
import { waitUntil } from '../helpers/wait.js';
import {
  blackedOut,
  FIELD,
  fieldLuminance,
  gatewayRun,
  type LiveSite,
  NAME_TOP,
  publishForm,
  SECRET,
  showsText,
  startLiveSite,
} from '../helpers/run-live-site.js';

/**
 * The run live view end to end (docs/hosted-api.md, "Run live view"): the hosted service on
 * 127.0.0.1 (PGlite in memory) with the Playwright executor's screencast wired in, a loopback site
 * whose page holds the run in flight on a request the test releases, and the test as the viewer on
 * `GET /api/automations/{id}/live`. Refusals are HTTP answers with no upgrade; a member watches a
 * sync gateway run (frames, then `run_finished` and close 1000); what the viewer sends never reaches
 * the page; the secret field is black in every frame (decoded in Chromium) and was painted over
 * before the value went in; a queue-dispatched run relays nothing; the web app shows the frames.
 */

let h: HostedFixture;
let site: LiveSite;
let owner: Client;
let member: Client;
let other: Client;
let wsBase: string;
let form: { id: string; org_id: string; name: string };
let key: string;
let browser: Browser;
let decoder: Page;

beforeAll(async () => {
  site = await startLiveSite();
  // Schedules may fire every second here (the schedule test).
  h = await startHosted({ minCronIntervalSeconds: 1, egressAllow: FIXTURE_SITES });
  wsBase = h.url.replace(/^http/, 'ws');
  owner = new Client(h.url);
  member = new Client(h.url);
  other = new Client(h.url);
  const mine = await owner.signup('live-owner@example.test', 'correct horse battery', 'Live org');
  await other.signup('live-other@example.test', 'correct horse battery', 'Other org');
  await member.signup('live-member@example.test');
  await owner.addMember(member, 'live-member@example.test', mine.org.id);
  form = await publishForm(owner, site.url, 'live-form');
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
  decoder = await browser.newPage();
}, 180_000);

afterAll(async () => {
  site?.release();
  await browser?.close();
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

describe('the run live view refuses before upgrading', () => {
  it('foreign or missing Origin, no cookie, another org, bad or foreign run_id, a plain GET; no run screencast is 503', async () => {
    const url = `${wsBase}/api/automations/${form.id}/live`;
    const cookie = `svc_session=${member.cookie}`;
    const origin = h.url;

    const foreign = await refused(url, { cookie, origin: 'https://evil.example' });
    expect([foreign.status, foreign.body.error]).toEqual([403, 'forbidden']);
    const missing = await refused(url, { cookie });
    expect([missing.status, missing.body.error]).toEqual([403, 'forbidden']);
    const anonymous = await refused(url, { origin });
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'unauthenticated']);
    const tampered = await refused(url, { origin, cookie: `${cookie}x` });
    expect(tampered.status).toBe(401);
    // Another org's automation is the same 404 as one that does not exist.
    const otherOrg = await refused(url, { origin, cookie: `svc_session=${other.cookie}` });
    expect([otherOrg.status, otherOrg.body.error]).toEqual([404, 'not_found']);
    const unknown = await refused(`${wsBase}/api/automations/nope/live`, { origin, cookie });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    const badRun = await refused(`${url}?run_id=${encodeURIComponent('../x y')}`, { origin, cookie });
    expect([badRun.status, badRun.body.error]).toEqual([422, 'invalid_request']);
    const noSuchRun = await refused(`${url}?run_id=0b6f3c1e-0000-4000-8000-000000000000`, { origin, cookie });
    expect([noSuchRun.status, noSuchRun.body.error]).toEqual([404, 'not_found']);
    const elsewhere = await refused(`${wsBase}/api/automations/${form.id}/lively`, { origin, cookie });
    expect(elsewhere.status).toBe(404);

    const plain = await member.call('GET', `/api/automations/${form.id}/live`);
    expect([plain.status, plain.body.error]).toEqual([426, 'upgrade_required']);

    // A service without a frames source (no browser) answers 503 after the same checks.
    // Not the assembly on purpose: the library embedded with no browser (the assembly always has one).
    const bare = await startBareService();
    try {
      const c = new Client(bare.url);
      await c.signup('bare@example.test');
      const a = (await c.call('POST', '/api/automations', { name: 'bare', site: 'https://example.test', task: 'x' })).body.automation;
      const none = await refused(`${bare.url.replace(/^http/, 'ws')}/api/automations/${a.id}/live`, { origin: bare.url, cookie: `svc_session=${c.cookie}` });
      expect([none.status, none.body.error]).toEqual([503, 'not_ready']);
    } finally {
      await bare.close();
    }
  });
});

describe('watching a sync gateway run', () => {
  it('a member waits, sees the run start and its frames (the secret field black), is never relayed, and is told run_finished before the close', async () => {
    const origin = h.url;
    const url = `${wsBase}/api/automations/${form.id}/live`;
    // A member (not an owner) may watch; no run yet: the view waits for the next one.
    const viewer = await Viewer.open(url, { origin, cookie: `svc_session=${member.cookie}` });
    expect(await viewer.next((m) => m.type === 'waiting')).toMatchObject({ automation_id: form.id });

    const run = gatewayRun(h.url, key, form.name);
    const started = await viewer.next((m) => m.type === 'run_started');
    expect(started).toMatchObject({ run_id: expect.any(String), execution_id: expect.any(String), dispatch: 'sync' });
    const runId: string = started.run_id;
    const first = await viewer.next((m) => m.type === 'frame');
    expect(first.run_id).toBe(runId);
    expect([first.width, first.height]).toEqual([1280, 720]);
    expect(Buffer.from(first.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));

    // Both fields are filled and the page holds the run in flight.
    await waitUntil(() => site.held() > 0, { what: 'the page to hold the run' });
    // An owner picks this run by id; a second viewer gets its own frames.
    const byId = await Viewer.open(`${url}?run_id=${encodeURIComponent(runId)}`, { origin, cookie: `svc_session=${owner.cookie}` });
    expect(await byId.next((m) => m.type === 'run_started')).toMatchObject({ run_id: runId });
    await byId.next((m) => m.type === 'frame');

    // Read-only: pointer, keys, text, navigation, binary and junk from the viewer go nowhere.
    const at = { x: FIELD.left + 100, y: NAME_TOP + 30 };
    viewer.ws.send(JSON.stringify({ type: 'mouse', action: 'move', ...at }));
    viewer.ws.send(JSON.stringify({ type: 'mouse', action: 'down', ...at, button: 'left', clickCount: 1 }));
    viewer.ws.send(JSON.stringify({ type: 'mouse', action: 'up', ...at, button: 'left', clickCount: 1 }));
    viewer.ws.send(JSON.stringify({ type: 'key', action: 'down', key: 'a' }));
    viewer.ws.send(JSON.stringify({ type: 'key', action: 'up', key: 'a' }));
    viewer.ws.send(JSON.stringify({ type: 'text', text: 'typed by the viewer' }));
    viewer.ws.send(JSON.stringify({ type: 'mouse', action: 'wheel', ...at, deltaY: 200 }));
    viewer.ws.send(JSON.stringify({ type: 'navigate', url: `${site.url}/elsewhere` }));
    viewer.ws.send(Buffer.from([1, 2, 3]));
    viewer.ws.send('not json');
    await viewer.roundTrip();
    // A message over 4 KiB closes that viewer (1009); the others go on.
    const big = await Viewer.open(url, { origin, cookie: `svc_session=${member.cookie}` });
    await big.next((m) => m.type === 'run_started');
    big.ws.send('x'.repeat(5000));
    expect((await big.closed).code).toBe(1009);

    // The secret: painted over before the value went in (the page's own view at its input event) ...
    const tokenReport = await waitUntil(() => site.reports.find((r) => r.field === 'token'), { what: 'the token field report' });
    expect(tokenReport).toEqual({ field: 'token', color: 'rgba(0, 0, 0, 0)', fill: 'rgba(0, 0, 0, 0)', background: 'rgb(0, 0, 0)', length: SECRET.length });
    const nameReport = site.reports.find((r) => r.field === 'name');
    expect(nameReport).toMatchObject({ color: 'rgb(17, 17, 17)', background: 'rgb(255, 255, 255)', length: 'Ada Lovelace'.length });
    // ... and black in the frames: wait for a frame showing the name (filled after the secret).
    const shownName = await waitUntil(
      async () => {
        const frame = viewer.frames().at(-1);
        if (!frame) return undefined;
        const [l] = await fieldLuminance(decoder, [frame]);
        if (showsText(l!.name)) return l;
        await viewer.next((m) => m.type === 'frame', false);
        return undefined;
      },
      { what: 'a frame that shows the typed name' },
    );
    expect(blackedOut(shownName.token)).toBe(true);
    // No frame so far shows text in the token field.
    const all = await fieldLuminance(decoder, viewer.frames());
    expect(all.filter((l) => showsText(l.token))).toEqual([]);
    expect(all.some((l) => blackedOut(l.token))).toBe(true);

    // Release: the run ends, its frames stop, run_finished, close 1000.
    site.release();
    const finished = await viewer.next((m) => m.type === 'run_finished');
    expect(finished).toEqual({ type: 'run_finished', run_id: runId, status: 'succeeded' });
    expect(await viewer.closed).toEqual({ code: 1000, reason: 'run finished' });
    expect(await byId.closed).toMatchObject({ code: 1000 });
    const result = await run;
    expect([result.status, result.body.status, result.body.run_id]).toEqual([200, 'succeeded', runId]);
    // Nothing the viewer sent reached the page: no pointer or key event, only the two fills' input events.
    expect(result.body.output).toEqual({ events: '0', inputs: '2' });
    expect(viewer.messages.indexOf(finished)).toBe(viewer.messages.length - 1);
    expect(viewer.frames().every((f) => f.run_id === runId)).toBe(true);
    expect(JSON.stringify(viewer.messages.filter((m) => m.type !== 'frame'))).not.toContain(SECRET);
    expect(h.executor!.screencast.active()).toEqual([]);

    // Afterwards: that run by id is over at once; without an id the view waits again.
    const late = await Viewer.open(`${url}?run_id=${encodeURIComponent(runId)}`, { origin, cookie: `svc_session=${member.cookie}` });
    expect(await late.next((m) => m.type === 'run_finished')).toEqual({ type: 'run_finished', run_id: runId, status: 'succeeded' });
    expect((await late.closed).code).toBe(1000);
    expect(late.frames()).toEqual([]);
  }, 180_000);

  it('an MCP sync run is shown too (a run with no browser step: started and finished, no frames)', async () => {
    const me = (await owner.call('GET', '/api/session')).body;
    const pure = await publishPureAutomation(h.storage, h.engine, me.org.id, me.user.id, 'live-greet');
    const viewer = await Viewer.open(`${wsBase}/api/automations/${pure.id}/live`, { origin: h.url, cookie: `svc_session=${member.cookie}` });
    await viewer.next((m) => m.type === 'waiting');
    const client = new McpClient({ name: 'run-live-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const call = await client.callTool({ name: 'live-greet', arguments: { who: 'viewer' } });
      expect(call.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const started = await viewer.next((m) => m.type === 'run_started');
    expect(started.dispatch).toBe('mcp');
    expect(await viewer.next((m) => m.type === 'run_finished')).toMatchObject({ run_id: started.run_id, status: 'succeeded' });
    expect((await viewer.closed).code).toBe(1000);
    expect(viewer.frames()).toEqual([]);
  });
});

describe('watching a scheduled run', () => {
  it('a schedule fire in sync dispatch executes here and is shown: run_started (dispatch schedule), its frames, run_finished', async () => {
    const viewer = await Viewer.open(`${wsBase}/api/automations/${form.id}/live`, { origin: h.url, cookie: `svc_session=${member.cookie}` });
    await viewer.next((m) => m.type === 'waiting');
    const schedule = (await owner.call('POST', `/api/automations/${form.id}/schedules`, { cron: '* * * * * *' })).body.schedule;
    expect(schedule?.id, 'the schedule was created').toEqual(expect.any(String));
    const started = await viewer.next((m) => m.type === 'run_started');
    expect((await owner.call('DELETE', `/api/schedules/${schedule.id}`)).status).toBe(204);
    expect(started.dispatch).toBe('schedule');
    const execution = (await owner.call('GET', `/api/executions/${started.execution_id}`)).body.execution;
    expect([execution.dispatch, execution.run_id]).toEqual(['schedule', started.run_id]);
    const frame = await viewer.next((m) => m.type === 'frame');
    expect(frame.run_id).toBe(started.run_id);
    // Let this run (and any fire of the second before the delete) finish.
    site.setOpen(true);
    try {
      expect(await viewer.next((m) => m.type === 'run_finished')).toEqual({ type: 'run_finished', run_id: started.run_id, status: 'succeeded' });
      expect((await viewer.closed).code).toBe(1000);
      await waitUntil(
        async () => {
          const list = (await owner.call('GET', `/api/executions?limit=200&flow=${form.name}`)).body.executions as { dispatch: string; status: string }[];
          return list.filter((e) => e.dispatch === 'schedule').every((e) => ['succeeded', 'failed', 'canceled'].includes(e.status));
        },
        { what: 'every scheduled run of the form to end' },
      );
    } finally {
      site.setOpen(false);
    }
  }, 180_000);
});

describe('the web app', () => {
  it('Watch live on the automation page and the Live panel of the run page show the frames; the run page ends with the run', async () => {
    const SHOTS = join(resolve(import.meta.dirname, '../..'), 'test-artifacts', 'run-live');
    await mkdir(SHOTS, { recursive: true });
    const context = await browser.newContext({ viewport: { width: 1360, height: 1000 }, baseURL: h.url });
    context.setDefaultTimeout(60_000);
    try {
      await context.addCookies([{ name: 'svc_session', value: member.cookie!, url: h.url }]);
      const page = await context.newPage();
      await page.goto(`/automations/${form.id}/live`);
      const panel = page.getByTestId('run-live');
      await page.locator('[data-testid="run-live"][data-state="waiting"]').waitFor();
      await page.getByText('No run of this automation is in flight').waitFor();
      await page.screenshot({ path: join(SHOTS, '01-watch-live-waiting.png'), fullPage: true });

      const run = gatewayRun(h.url, key, form.name);
      await page.locator('[data-testid="run-live"][data-state="live"]').waitFor();
      await waitUntil(() => site.held() > 0, { what: 'the page to hold the run' });
      const canvas = panel.getByLabel('Live view of the run');
      await waitUntil(async () => Number((await canvas.getAttribute('data-frames')) ?? 0) > 0, { what: 'a frame drawn on the canvas' });
      expect([await canvas.getAttribute('width'), await canvas.getAttribute('height')]).toEqual(['1280', '720']);
      await page.screenshot({ path: join(SHOTS, '02-watch-live-frames.png'), fullPage: true });

      // The run page of the run in flight: its Live panel.
      await panel.getByRole('link', { name: 'open the run' }).click();
      await page.getByRole('heading', { name: /Run of live-form/ }).waitFor();
      const live = page.getByTestId('run-live');
      await page.locator('[data-testid="run-live"][data-state="live"]').waitFor();
      const runCanvas = live.getByLabel('Live view of the run');
      await waitUntil(async () => Number((await runCanvas.getAttribute('data-frames')) ?? 0) > 0, { what: 'a frame on the run page' });
      await page.screenshot({ path: join(SHOTS, '03-run-page-live.png'), fullPage: true });

      site.release();
      expect((await run).body.status).toBe('succeeded');
      await page.locator('[data-testid="run-live"][data-state="finished"]').waitFor();
      await live.getByText('The run ended').waitFor();
      await page.getByText('run finished').waitFor();
      await page.screenshot({ path: join(SHOTS, '04-run-page-finished.png'), fullPage: true });
    } finally {
      await context.close();
    }
  }, 180_000);
});

describe("the executor's screencast under the live view", () => {
  it("a viewer that subscribes while the run's first navigation commits still gets frames (Chromium refuses a screencast started then)", async () => {
    // The site subscribes when the run's document request arrives: the navigation is in flight and
    // about to commit in another renderer, where Page.startScreencast fails ("Not attached to an
    // active page"); the capture must start again once the page has loaded, not pass for running.
    const exec = h.executor!;
    const counts = new Map<string, number>();
    const stops: (() => void)[] = [];
    const spin = `<!doctype html><style>@keyframes spin { to { transform: rotate(360deg); } } #s { width: 60px; height: 60px; background: #c33; animation: spin 2s steps(8) infinite; }</style><div id="s"></div>`;
    const server = createServer((req, res) => {
      const run = new URL(req.url ?? '/', 'http://x').searchParams.get('run');
      if (run && !counts.has(run)) {
        counts.set(run, 0);
        stops.push(exec.screencast.subscribe(run, () => counts.set(run, counts.get(run)! + 1)));
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(spin);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const navigate = exec.tools.find((t) => t.contract.ref === 'browser/navigate')!;
    const seen: number[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const ctx = createTestToolContext({ runId: `late-viewer-${i}`, cwd: process.cwd(), timeoutMs: 60_000 });
        try {
          await navigate.run({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/?run=${ctx.runId}` }, ctx);
          // A capture that never started sends nothing, ever: the cap ends that hang.
          await waitUntil(() => (counts.get(ctx.runId) ?? 0) >= 2, { what: `frames of ${ctx.runId}`, capMs: 30_000 }).catch(() => undefined);
          seen.push(counts.get(ctx.runId) ?? 0);
        } finally {
          await ctx.close();
        }
      }
    } finally {
      for (const stop of stops) stop();
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(seen.filter((n) => n < 2)).toEqual([]);
  }, 300_000);
});

describe('queue dispatch', () => {
  let q: HostedFixture;
  let worker: RunWorker;
  afterAll(async () => {
    site.release();
    await worker?.stop();
    await q?.close();
  });

  it('a queue-dispatched run relays no frames: the viewer is told so and the socket closes 4004', async () => {
    q = await startHosted({ runDispatch: 'queue', egressAllow: FIXTURE_SITES }, {}, { queue: true });
    worker = await q.service.startWorker({ concurrency: 1 });
    const c = new Client(q.url);
    await c.signup('queue-live@example.test');
    const a = await publishForm(c, site.url, 'queued-form');
    const k = (await c.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const qws = q.url.replace(/^http/, 'ws');
    const headers = { origin: q.url, cookie: `svc_session=${c.cookie}` };

    const acked = await gatewayRun(q.url, k, a.name);
    expect(acked.body).toEqual({ run_id: expect.any(String), status: 'queued' });
    const runId = acked.body.run_id as string;
    // The worker (in this process, same executor) has the run in flight, held by its page.
    await waitUntil(() => site.held() > 0, { what: 'the worker run to hold' });

    const byId = await Viewer.open(`${qws}/api/automations/${a.id}/live?run_id=${encodeURIComponent(runId)}`, headers);
    expect(await byId.next((m) => m.type === 'notice')).toMatchObject({ run_id: runId, reason: 'no_frames', message: expect.stringContaining('worker') });
    expect((await byId.closed).code).toBe(4004);
    const any = await Viewer.open(`${qws}/api/automations/${a.id}/live`, headers);
    expect(await any.next((m) => m.type === 'notice')).toMatchObject({ reason: 'no_frames', message: expect.stringContaining('queue-dispatched') });
    expect((await any.closed).code).toBe(4004);
    expect([...byId.frames(), ...any.frames()]).toEqual([]);
    // Nobody subscribed: the executor captures nothing of the run.
    expect(q.executor!.screencast.active()).toEqual([]);

    site.release();
    const done = await waitUntil(
      async () => {
        const r = await c.call('GET', `/api/executions/${runId}`);
        return r.status === 200 && r.body.execution.status === 'succeeded' ? r.body : undefined;
      },
      { what: 'the queued run to succeed' },
    );
    expect(done.run.output).toEqual({ events: '0', inputs: '2' });
  }, 180_000);
});
