import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Viewer } from '../helpers/live-socket.js';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { imageRegions, NEAR_BLACK } from '../helpers/image-pixels.js';

/**
 * Run artifacts and re-record at a drifted step, end to end: the hosted service on 127.0.0.1 (PGlite
 * in memory) with screenshots on, a real Chromium for runs and one for the studio, and a site served
 * by this test whose pages change under the published capture.
 *
 * The capture: open the form, type a name (an input slot), type the password (a secret slot, read
 * from the org secret), click Continue, read the greeting. A first gateway run succeeds and stores a
 * screenshot per step, served by GET /api/executions/{id}/artifacts/{digest} to the org only. Then the
 * site renames the button: the next run fails `locator_drift` at click_4 and the automation turns
 * `failing` with its rerecord_href. The studio opened with `?from_step=click_4` replays steps 1 to 3
 * (the viewer is told each), the test clicks the renamed button in the streamed page, the new click
 * takes click_4's place, and after publish the gateway run succeeds again.
 */

const PASSWORD = 'sesame-42-Zq';
const TOKEN = 'TOKEN-VALUE-93xk';
const repo = resolve(import.meta.dirname, '../..');
const SHOTS = join(repo, 'test-artifacts', 'rerecord');

const box = (top: number) => `style="position:absolute;left:40px;top:${top}px;width:300px;height:32px;margin:0;box-sizing:border-box"`;
const at = (top: number) => ({ x: 190, y: top + 16 });
const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body style="margin:0;font:16px sans-serif;background:#fff">${body}</body></html>`;

/** The site. `version` 1: the button is Continue; 2: it is Proceed (new test id, text, place); 3: also the Name label is gone. */
async function startSite() {
  const state = {
    url: '',
    server: undefined as unknown as Server,
    version: 1,
    posts: [] as { name: string; passwordOk: boolean }[],
    /** Holds the next `GET /` until released (a replay then stays at its first step). */
    gate: undefined as { arrived(): void; release: Promise<void> } | undefined,
  };
  state.server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/' && req.method === 'GET' && state.gate) {
      const gate = state.gate;
      state.gate = undefined;
      gate.arrived();
      await gate.release;
    }
    const html = (text: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(text);
    if (url.pathname === '/' && req.method === 'GET') {
      const name =
        state.version === 3
          ? `<input id="n" name="name" placeholder="Your name" ${box(40)}>`
          : `<label for="n" style="position:absolute;left:360px;top:40px">Name</label><input id="n" name="name" ${box(40)}>`;
      const button =
        state.version === 1
          ? `<button type="submit" data-testid="continue" ${box(160)}>Continue</button>`
          : `<button type="submit" data-testid="proceed" ${box(220)}>Proceed</button>`;
      return html(
        page(
          'Sign in',
          `<form method="post" action="/hello">${name}<label for="p" style="position:absolute;left:360px;top:100px">Password</label><input id="p" type="password" name="password" ${box(100)}>${button}</form>`,
        ),
      );
    }
    if (url.pathname === '/hello' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const post = { name: form.get('name') ?? '', passwordOk: form.get('password') === PASSWORD };
        state.posts.push(post);
        res.writeHead(303, { location: post.passwordOk ? `/greeting?name=${encodeURIComponent(post.name)}` : '/denied' }).end();
      });
      return;
    }
    if (url.pathname === '/greeting')
      return html(page('Hello', `<h1 data-testid="greeting" ${box(40)}>Hello, ${(url.searchParams.get('name') ?? '').replace(/[<&]/g, '')}!</h1>`));
    if (url.pathname === '/denied') return html(page('Denied', '<h1 data-testid="greeting">Wrong password</h1>'));
    if (url.pathname === '/token') {
      // A token typed into a plain text field: only the screenshot mask hides it.
      return html(
        page(
          'Token',
          `<label for="t" style="position:absolute;left:360px;top:40px">Token</label><input id="t" type="text" ${box(40)}><div data-testid="done" ${box(100)}>ready</div>`,
        ),
      );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

let h: HostedFixture;
let site: Awaited<ReturnType<typeof startSite>>;
let owner: Client;
let other: Client;
let key: string;
let browser: Browser;
const ids = { automation: '', firstRun: '', firstExecution: '', driftRun: '', token: '', tokenRun: '' };

const gateway = async (flow: string, inputs: Record<string, unknown>) => {
  const res = await fetch(`${h.url}/v1/run/${flow}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ inputs }),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const liveUrl = (id: string, query: string) => `${h.url.replace(/^http/, 'ws')}/api/authoring/${id}/live?width=800&height=600&${query}`;
const headers = () => ({ origin: h.url, cookie: `svc_session=${owner.cookie}` });
/** The greet capture (sign in with a name and the password, continue, read the greeting) of both automations. */
const greetOps = () => [
  { kind: 'navigate', url: `${site.url}/` },
  { kind: 'fill', target: { label: 'Name' }, value: 'Ada', slot: 'name' },
  { kind: 'fill', target: { label: 'Password' }, slot: 'password' },
  { kind: 'click', target: { testid: 'continue' } },
  { kind: 'extract', target: { testid: 'greeting' }, name: 'greeting' },
];
/** Every artifact digest of a run, by step. */
const artifactsOf = (journal: any[]) =>
  journal.filter((e) => e.event === 'step_succeeded').map((e) => ({ step: e.step as string, artifacts: (e.artifacts ?? []) as string[] }));

/** The RGB of a pixel of a screenshot (a JPEG), decoded by Chromium (a canvas). */
async function pixel(image: Buffer, x: number, y: number): Promise<[number, number, number]> {
  const p = await browser.newPage();
  try {
    const { regions } = await imageRegions(p, `data:image/jpeg;base64,${image.toString('base64')}`, [{ x, y, width: 1, height: 1 }]);
    return [regions[0]![0]!, regions[0]![1]!, regions[0]![2]!];
  } finally {
    await p.close();
  }
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite();
  h = await startHosted({ egressAllow: FIXTURE_SITES }, {}, { screenshots: true });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
  owner = new Client(h.url);
  other = new Client(h.url);
  await owner.signup('owner@rerecord.test', 'correct horse battery', 'Rerecord org');
  await other.signup('other@rerecord.test', 'correct horse battery', 'Other org');
  expect((await owner.call('PUT', '/api/secrets/password', { value: PASSWORD })).status).toBe(200);
  expect((await owner.call('PUT', '/api/secrets/api_token', { value: TOKEN })).status).toBe(200);
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;

  const a = (await owner.call('POST', '/api/automations', { name: 'greet', site: `${site.url}/`, task: 'Sign in and read the greeting' })).body.automation;
  ids.automation = a.id;
  const ops = greetOps();
  expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, input_slots: ['name'], secret_slots: ['password'] })).status).toBe(200);
  expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);

  const t = (await owner.call('POST', '/api/automations', { name: 'token', site: `${site.url}/token`, task: 'Type the token' })).body.automation;
  ids.token = t.id;
  const tokenOps = [
    { kind: 'navigate', url: `${site.url}/token` },
    { kind: 'fill', target: { label: 'Token' }, slot: 'api_token' },
    { kind: 'extract', target: { testid: 'done' }, name: 'done' },
  ];
  expect((await owner.call('PATCH', `/api/authoring/${t.id}`, { captured_ops: tokenOps, secret_slots: ['api_token'] })).status).toBe(200);
  expect((await owner.call('POST', `/api/authoring/${t.id}/publish`)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await new Promise<void>((r) => (site?.server ? site.server.close(() => r()) : r()));
});

describe('run artifacts', () => {
  it('a run stores a screenshot per browser step, served to the org by digest; other orgs, no session and bad digests are refused', async () => {
    const run = await gateway('greet', { name: 'Grace' });
    expect([run.status, run.body.status, run.body.output]).toEqual([200, 'succeeded', { greeting: 'Hello, Grace!' }]);
    ids.firstRun = run.body.run_id;
    const fetched = await owner.call('GET', `/api/executions/${ids.firstRun}`);
    ids.firstExecution = fetched.body.execution.id;
    const steps = artifactsOf(fetched.body.journal);
    expect(steps.map((s) => s.step)).toEqual(['navigate_1', 'fill_2', 'fill_3', 'click_4', 'extract_5']);
    for (const s of steps) expect([s.step, s.artifacts.length]).toEqual([s.step, 1]);

    const digest = steps.find((s) => s.step === 'fill_3')!.artifacts[0]!;
    for (const id of [ids.firstExecution, ids.firstRun]) {
      const res = await fetch(`${h.url}/api/executions/${id}/artifacts/${digest}`, { headers: { cookie: `svc_session=${owner.cookie}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/jpeg');
      expect(res.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
      expect(res.headers.get('etag')).toBe(`"${digest}"`);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff])); // a JPEG's start of image
      expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    }
    const again = await fetch(`${h.url}/api/executions/${ids.firstExecution}/artifacts/${digest}`, {
      headers: { cookie: `svc_session=${owner.cookie}`, 'if-none-match': `"${digest}"` },
    });
    expect(again.status).toBe(304);

    // Another org: 404 whether by run_ref id or engine run id, the same body as an unknown execution.
    for (const id of [ids.firstExecution, ids.firstRun]) {
      const res = await other.call('GET', `/api/executions/${id}/artifacts/${digest}`);
      expect([res.status, res.body]).toEqual([404, { error: 'not_found', message: 'no such execution in this org' }]);
    }
    // No session, a tampered one.
    expect((await new Client(h.url).call('GET', `/api/executions/${ids.firstExecution}/artifacts/${digest}`)).status).toBe(401);
    const tampered = Object.assign(new Client(h.url), { cookie: `${owner.cookie}x` });
    expect((await tampered.call('GET', `/api/executions/${ids.firstExecution}/artifacts/${digest}`)).body.error).toBe('unauthenticated');
    // A malformed digest: 422 with the issue; a well-formed one no step of this run lists: 404.
    for (const bad of ['nope', 'sha256:XYZ', `sha256:${'a'.repeat(63)}`, `${'a'.repeat(64)}`, '..%2F..%2Fetc']) {
      const res = await owner.call('GET', `/api/executions/${ids.firstExecution}/artifacts/${bad}`);
      expect([bad, res.status, res.body.error]).toEqual([bad, 422, 'invalid_request']);
      expect(res.body.issues[0].path).toEqual(['digest']);
    }
    const absent = await owner.call('GET', `/api/executions/${ids.firstExecution}/artifacts/sha256:${'0'.repeat(64)}`);
    expect([absent.status, absent.body]).toEqual([404, { error: 'not_found', message: 'no such artifact in this run' }]);
    // The token run's screenshot, asked for through the greet run: not this run's, so 404.
    const tokenRun = await gateway('token', {});
    expect(tokenRun.body.status).toBe('succeeded');
    ids.tokenRun = tokenRun.body.run_id;
    const tokenShot = artifactsOf((await owner.call('GET', `/api/executions/${ids.tokenRun}`)).body.journal).find((s) => s.step === 'fill_2')!.artifacts[0]!;
    expect((await owner.call('GET', `/api/executions/${ids.firstExecution}/artifacts/${tokenShot}`)).status).toBe(404);
    // The route is in the OpenAPI document.
    const doc = (await fetch(`${h.url}/openapi.json`).then((r) => r.json())) as any;
    expect(Object.keys(doc.paths['/api/executions/{id}/artifacts/{digest}'].get.responses['200'].content)).toEqual(['image/png', 'image/jpeg']);
  }, 120_000);

  it('a field filled from a secret slot is blacked out in the screenshot that is served, and the secret is in no answer', async () => {
    const journal = (await owner.call('GET', `/api/executions/${ids.tokenRun}`)).body.journal;
    const byStep = artifactsOf(journal);
    for (const step of ['fill_2', 'extract_3']) {
      const digest = byStep.find((s) => s.step === step)!.artifacts[0]!;
      const res = await fetch(`${h.url}/api/executions/${ids.tokenRun}/artifacts/${digest}`, { headers: { cookie: `svc_session=${owner.cookie}` } });
      const image = Buffer.from(await res.arrayBuffer());
      expect(image.includes(Buffer.from(TOKEN))).toBe(false);
      // The token field (left 40, top 40, 300 x 32) is solid black; the page beside it is white (both
      // within the JPEG's rounding).
      for (const [x, y] of [
        [50, 46],
        [190, 56],
        [330, 66],
      ] as const)
        expect([step, x, y, Math.max(...(await pixel(image, x, y))) <= NEAR_BLACK]).toEqual([step, x, y, true]);
      expect(Math.min(...(await pixel(image, 600, 300)))).toBeGreaterThanOrEqual(255 - NEAR_BLACK);
    }
    expect(JSON.stringify(journal)).not.toContain(TOKEN);
  }, 60_000);
});

describe('re-record at a drifted step', () => {
  it('the site changes: the run fails locator_drift, the automation is failing with its rerecord_href', async () => {
    site.version = 2;
    const run = await gateway('greet', { name: 'Grace' });
    expect([run.status, run.body.status, run.body.error.code, run.body.error.step]).toEqual([200, 'failed', 'locator_drift', 'click_4']);
    ids.driftRun = run.body.run_id;
    const a = (await owner.call('GET', `/api/automations/${ids.automation}`)).body.automation;
    expect([a.status, a.needs_attention]).toEqual(['failing', true]);
    expect(a.rerecord_href).toBe(`${h.url}/automations/${ids.automation}/studio?step=click_4`);
  }, 60_000);

  it('refusals: a step not in the capture, a replay that drifts earlier, a secret that would show', async () => {
    expect((await owner.call('POST', `/api/authoring/${ids.automation}/edit`)).status).toBe(200);
    const before = (await owner.call('GET', `/api/authoring/${ids.automation}`)).body.session.captured_ops;

    // Not in the capture (op 9 does not exist; op 4 is a click, not a fill): closed before any browser.
    for (const [step, words] of [
      ['click_9', /has 5 operations/],
      ['fill_4', /is a click, not a fill/],
      ['bogus', /not a step id/],
    ] as const) {
      const v = await Viewer.open(liveUrl(ids.automation, `from_step=${step}`), headers());
      expect(await v.next((m) => m.type === 'closed')).toMatchObject({ reason: 'invalid_request', message: expect.stringMatching(words) });
      expect((await v.closed).code).toBe(4022);
    }

    // The Name label is gone too: the replay stops at fill_2 with locator_drift; the capture is unchanged.
    site.version = 3;
    const v = await Viewer.open(liveUrl(ids.automation, 'from_step=click_4'), headers());
    const failed = await v.next((m) => m.type === 'replay_failed');
    expect(failed).toMatchObject({ step: 2, of: 3, id: 'fill_2', code: 'locator_drift' });
    expect(failed.message).toMatch(/replay stopped at step fill_2/);
    expect(v.messages.filter((m) => m.type === 'replaying').map((m) => m.id)).toEqual(['navigate_1', 'fill_2']);
    expect((await v.closed).code).toBe(4024);
    expect(v.messages.some((m) => m.type === 'ready')).toBe(false);
    expect((await owner.call('GET', `/api/authoring/${ids.automation}`)).body.session.captured_ops).toEqual(before);
    site.version = 2;

    // The token automation types its secret into a plain text field: the studio would show it.
    expect((await owner.call('POST', `/api/authoring/${ids.token}/edit`)).status).toBe(200);
    const t = await Viewer.open(liveUrl(ids.token, 'from_step=extract_3'), headers());
    expect(await t.next((m) => m.type === 'replay_failed')).toMatchObject({ id: 'fill_2', code: 'secret_not_shown' });
    expect((await t.closed).code).toBe(4024);
    expect(t.text()).not.toContain(TOKEN);
  }, 90_000);

  it('the studio replays the steps before the drifted one, the new click takes its place, publish, and the next run succeeds', async () => {
    const posts = site.posts.length;
    const v = await Viewer.open(liveUrl(ids.automation, 'from_step=click_4'), headers());
    const ready = await v.next((m) => m.type === 'ready');
    expect(v.messages.filter((m) => m.type === 'replaying').map((m) => [m.step, m.of, m.id])).toEqual([
      [1, 3, 'navigate_1'],
      [2, 3, 'fill_2'],
      [3, 3, 'fill_3'],
    ]);
    expect(v.messages.find((m) => m.type === 'replayed')).toEqual({ type: 'replayed', of: 3 });
    expect(ready.rerecord).toEqual({ step: 'click_4', index: 3 });
    expect(ready.captured_ops).toHaveLength(5);
    // Nothing the replay did was captured (the fills' change events included).
    expect(v.messages.filter((m) => m.type === 'op')).toEqual([]);

    // The page is as before step 4: both fields filled (the server sees the name and the right password).
    v.click(at(220));
    await v.loaded('/greeting');
    expect(site.posts.slice(posts)).toEqual([{ name: 'Ada', passwordOk: true }]);
    const op = await v.next((m) => m.type === 'op');
    expect(op).toMatchObject({ index: 3, replaced: true, op: { kind: 'click', target: { testid: 'proceed' } } });
    v.close();

    const session = (await owner.call('GET', `/api/authoring/${ids.automation}`)).body.session;
    expect(session.captured_ops.map((o: any) => o.kind)).toEqual(['navigate', 'fill', 'fill', 'click', 'extract']);
    expect(session.captured_ops[3].target).toMatchObject({ testid: 'proceed' });
    expect([session.input_slots, session.secret_slots]).toEqual([['name'], ['password']]);
    expect(v.text()).not.toContain(PASSWORD);

    const published = await owner.call('POST', `/api/authoring/${ids.automation}/publish`);
    expect(published.status).toBe(200);
    expect([published.body.automation.status, published.body.automation.needs_attention, published.body.automation.rerecord_href]).toEqual([
      'published',
      false,
      null,
    ]);
    const run = await gateway('greet', { name: 'Lin' });
    expect([run.status, run.body.status, run.body.output]).toEqual([200, 'succeeded', { greeting: 'Hello, Lin!' }]);
  }, 120_000);
});

describe('the web app: step screenshots in the inspector, re-record from the drift', () => {
  it('thumbnails per step (full size on click), the drifted step offers Re-record, the studio replays and records in its place', async () => {
    // A second automation with the original capture, for the UI round: it works on version 1 and drifts on 2.
    site.version = 1;
    const a = (await owner.call('POST', '/api/automations', { name: 'greet-ui', site: `${site.url}/`, task: 'Sign in and read the greeting (UI)' })).body
      .automation;
    const ops = greetOps();
    await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, input_slots: ['name'], secret_slots: ['password'] });
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const ok = await gateway('greet-ui', { name: 'Grace' });
    expect(ok.body.status).toBe('succeeded');
    site.version = 2;
    const drift = await gateway('greet-ui', { name: 'Grace' });
    expect(drift.body.error.code).toBe('locator_drift');

    const context = await browser.newContext({ viewport: { width: 1360, height: 1000 }, baseURL: h.url });
    context.setDefaultTimeout(60_000);
    await context.addCookies([{ name: 'svc_session', value: owner.cookie!, url: h.url }]);
    const page = await context.newPage();
    const shot = (name: string) => page.screenshot({ path: join(SHOTS, name), fullPage: true });
    try {
      // The succeeded run: a thumbnail per step, each loaded from the artifact route.
      await page.goto(`/runs/${ok.body.run_id}`);
      const timeline = page.getByTestId('timeline');
      await timeline.locator('[data-step="extract_5"]').waitFor();
      const thumbs = timeline.locator('.shot');
      expect(await thumbs.count()).toBe(5);
      for (let i = 0; i < 5; i++) {
        await thumbs.nth(i).scrollIntoViewIfNeeded();
        await timeline.locator('.shot.shot-ok').nth(i).waitFor();
      }
      await shot('01-inspector-screenshots.png');
      await page.getByRole('button', { name: 'Screenshot after step fill_3: show full size' }).click();
      const dialog = page.getByRole('dialog', { name: 'Screenshot after step fill_3' });
      await dialog.waitFor();
      expect(await dialog.locator('img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1280);
      await shot('02-inspector-full-size.png');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });

      // The drifted run: the failed step shows the page it looked at, and offers Re-record.
      await page.goto(`/runs/${drift.body.run_id}`);
      const failedStep = page.locator('[data-step="click_4"]');
      await failedStep.getByRole('link', { name: 'Re-record this step' }).waitFor();
      await failedStep.locator('.shot.shot-ok').waitFor();
      expect(await failedStep.getByText('The page this step looked at (after fill_3)').count()).toBe(1);
      await shot('03-inspector-drift.png');

      // The automation says it is failing; its Re-record opens the studio at the step.
      await page.goto(`/automations/${a.id}`);
      await page.getByText('Locator drift.').waitFor();
      await shot('04-automation-failing.png');
      await page.locator('.drift-notice').getByRole('link', { name: 'Re-record step click_4' }).click();
      await page.waitForURL(`**/automations/${a.id}/studio?step=click_4`);
      const panel = page.getByTestId('rerecord-panel');
      await panel.getByRole('button', { name: 'Re-record step 4' }).waitFor();
      expect(await page.locator('.op-row[data-drifted]').count()).toBe(1);
      await shot('05-studio-rerecord-idle.png');

      // Reopen and replay. With the Name label gone too, the replay stops at step 2 and says so.
      site.version = 3;
      await panel.getByRole('button', { name: 'Re-record step 4' }).click();
      await panel.getByText('The replay stopped at step 2 of 3 (fill_2)').waitFor();
      await panel.getByRole('button', { name: 'Re-record from step 2 (fill_2)' }).waitFor();
      await shot('06-studio-replay-failed.png');
      site.version = 2;
      // Again: the progress is shown (the site's first page held while it is), then the page is ready
      // where step 4 starts.
      let release!: () => void;
      let arrived!: () => void;
      const held = new Promise<void>((r) => (arrived = r));
      site.gate = { arrived, release: new Promise<void>((r) => (release = r)) };
      await panel.getByRole('button', { name: 'Try the replay again' }).click();
      await held;
      await panel.getByText('Replaying step 1 of 3 (navigate_1)').waitFor();
      await shot('07-studio-replaying.png');
      release();
      await panel.getByText('The page is as it was before step 4').waitFor();
      await page.locator('.studio-overlay').waitFor({ state: 'detached' });
      await shot('08-studio-rerecord-live.png');
      const canvas = page.getByLabel('Remote browser');
      await canvas.scrollIntoViewIfNeeded();
      const box = (await canvas.boundingBox())!;
      const scale = box.width / Number(await canvas.getAttribute('width'));
      const button = at(220);
      await page.mouse.click(box.x + button.x * scale, box.y + button.y * scale);
      await panel.getByText('Step 4 is re-recorded').waitFor();
      const row = page.getByTestId('op-list').locator('.op-row').nth(3);
      await row.getByText('test id "proceed"').waitFor();
      expect(await row.getAttribute('class')).toContain('op-new');
      expect(await page.getByTestId('op-list').locator('.op-row').count()).toBe(5);
      await page.getByTestId('studio-url').getByText(`${site.url}/greeting`).waitFor();
      await shot('09-studio-rerecorded.png');

      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByText('Published: version').waitFor();
      const run = await gateway('greet-ui', { name: 'Mo' });
      expect([run.body.status, run.body.output]).toEqual(['succeeded', { greeting: 'Hello, Mo!' }]);
      expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('published');
    } finally {
      await context.close();
    }
  }, 180_000);
});
