import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Viewer } from '../helpers/live-socket.js';
import { at, setDriftVariant, studioOrgsOfFile } from '../helpers/studio-demo-site.js';

/**
 * The studio's live capture of what a page does beyond clicks and typing, in real Chromium on the
 * demo site (test/helpers/studio-demo-site.ts): HTML5 and pointer drags and a file upload, relayed for
 * real, published and run; upload refusals; the ranking of locators, their fallbacks carrying a run
 * through renamed ids and `locator_drift` when the element is gone.
 */

const orgs = studioOrgsOfFile();
const origin = () => orgs().h.url;

describe('drags and uploads', () => {
  it('an HTML5 drag and a pointer drag become drag ops, a file chosen for the page an upload op; relayed for real, published and run', async () => {
    const { h, site, owner, wsBase } = orgs();
    const a = (
      await owner.call('POST', '/api/automations', { name: 'board', site: `${site.url}/board`, task: 'Fill the basket and the shelf, attach the receipt' })
    ).body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    if (process.env.STUDIO_DEBUG) viewer.ws.on('message', (d) => !d.toString().startsWith('{"type":"frame"') && console.log(d.toString().slice(0, 300)));
    await viewer.next((m) => m.type === 'ready');
    await viewer.loaded('/board', true);
    const drag = (from: { x: number; y: number }, to: { x: number; y: number }) => {
      viewer.send({ type: 'mouse', action: 'move', ...from });
      viewer.send({ type: 'mouse', action: 'down', ...from, button: 'left', clickCount: 1 });
      // In steps, as a hand moves (each is relayed: moves are only coalesced while one is in flight).
      for (let i = 1; i <= 10; i++)
        viewer.send({ type: 'mouse', action: 'move', x: from.x + ((to.x - from.x) * i) / 10, y: from.y + ((to.y - from.y) * i) / 10 });
      viewer.send({ type: 'mouse', action: 'up', ...to, button: 'left', clickCount: 1 });
    };
    // HTML5: Pears onto the basket.
    drag(at(40), { x: 550, y: 100 });
    await viewer.opCount(2);
    // Pointer: the chip onto the shelf.
    drag(at(200), { x: 550, y: 260 });
    await viewer.opCount(3);

    // The file input: the chooser is the service's; the viewer sends the file in chunks.
    viewer.click(at(360));
    const chooser = await viewer.next((m) => m.type === 'file_chooser');
    expect(chooser).toMatchObject({ multiple: false, accept: '', max_bytes: 10 * 1024 * 1024, max_files: 1 });
    const RECEIPT = Buffer.from('item,total\npears,3\nchip,1\n'.repeat(2000));
    viewer.send({ type: 'files', files: [{ name: 'receipt.csv', size: RECEIPT.length }] });
    for (let at = 0; at < RECEIPT.length; at += 40_000) viewer.send({ type: 'file_data', data: RECEIPT.subarray(at, at + 40_000).toString('base64') });
    const received = await viewer.next((m) => m.type === 'files_received');
    expect(received.files).toEqual([{ name: 'receipt.csv', digest: `sha256:${createHash('sha256').update(RECEIPT).digest('hex')}`, size: RECEIPT.length }]);
    await viewer.opCount(4);
    viewer.click(at(420));
    await viewer.loaded('/board-result');
    viewer.send({ type: 'extract', field: 'outcome' });
    await viewer.next((m) => m.type === 'extract_armed');
    viewer.click(at(40));
    const ops = await viewer.opCount(6);
    viewer.close();

    expect(ops.map((o: any) => o.kind)).toEqual(['navigate', 'drag', 'drag', 'upload', 'click', 'extract']);
    const [, html5, pointer, upload] = ops;
    expect(html5).toMatchObject({ source: { text: 'Pears' }, target: { testid: 'basket' } });
    expect(pointer.source).toMatchObject({ text: 'Chip' });
    // The text first, then the id (a short CSS path may follow).
    expect([pointer.target.text, pointer.target.fallbacks[0]]).toEqual(['Shelf:', { css: '#shelf' }]);
    expect(upload).toEqual({ kind: 'upload', target: expect.objectContaining({ label: 'Receipt' }), files: 'receipt.csv' });
    // What the page did while it was recorded: the drops and the file reached it.
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.files).toEqual([{ name: 'receipt.csv', digest: received.files[0].digest, size: RECEIPT.length }]);
    expect(viewer.messages.find((m) => m.type === 'url' && /board-result/.test(m.url))?.url).toContain('basket=Pears&shelf=Chip&file=receipt.csv%20');

    // Published and run: the run drags, drops and uploads the stored file (read by digest, for this org).
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const run = await fetch(`${h.url}/v1/run/board`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const result = (await run.json()) as any;
    expect([run.status, result.status, result.error]).toEqual([200, 'succeeded', undefined]);
    expect(result.output).toEqual({ outcome: `basket Pears; shelf Chip; receipt receipt.csv ${RECEIPT.length} bytes, 6000 lines` });
  }, 120_000);
});

describe('upload refusals', () => {
  it('files without a chooser, too large, badly named, more bytes than announced, a cancel; a chooser inside a frame: nothing captured', async () => {
    const { site, owner, wsBase } = orgs();
    const a = (await owner.call('POST', '/api/automations', { name: 'upload-refusals', site: `${site.url}/board`, task: 'x' })).body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    await viewer.next((m) => m.type === 'ready');
    await viewer.loaded('/board', true);
    const error = async (pattern: RegExp) => (await viewer.next((m) => m.type === 'error' && pattern.test(m.message), false)) as { error: string };
    let waiting = error(/no file chooser is open/);
    viewer.send({ type: 'files', files: [{ name: 'a.txt', size: 1 }] });
    expect((await waiting).error).toBe('invalid_message');

    viewer.click(at(360));
    await viewer.next((m) => m.type === 'file_chooser');
    waiting = error(/at most 10485760 bytes/);
    viewer.send({ type: 'files', files: [{ name: 'big.bin', size: 10 * 1024 * 1024 + 1 }] });
    expect((await waiting).error).toBe('file_too_large');
    for (const name of ['../up.txt', 'a/b.txt', '', 'x'.repeat(201), 'bell\u0007.txt']) {
      waiting = error(/a file name is/);
      viewer.send({ type: 'files', files: [{ name, size: 1 }] });
      await waiting;
    }
    waiting = error(/at most 1 files|1 to 10 files/);
    viewer.send({ type: 'files', files: [] });
    await waiting;
    viewer.send({ type: 'files', files: [{ name: 'two.txt', size: 2 }] });
    waiting = error(/more bytes than announced/);
    viewer.send({ type: 'file_data', data: Buffer.from('three').toString('base64') });
    await waiting;
    waiting = error(/file_data comes after a files message/);
    viewer.send({ type: 'file_data', data: 'AAAA' });
    await waiting;
    viewer.send({ type: 'files', files: [{ name: 'two.txt', size: 2 }] });
    viewer.send({ type: 'file_cancel' });
    waiting = error(/file_data comes after a files message/);
    viewer.send({ type: 'file_data', data: Buffer.from('ok').toString('base64') });
    await waiting;

    // A file input inside a frame: its chooser is refused with a notice.
    viewer.send({ type: 'navigate', url: `${site.url}/framed-board` });
    await viewer.loaded('/framed-board', true);
    viewer.click(at(360));
    await viewer.next((m) => m.type === 'notice' && /file chooser that cannot be captured/.test(m.message));
    viewer.close();
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.captured_ops.map((o: any) => o.kind)).toEqual(['navigate', 'navigate']);
    expect(session.files).toEqual([]);
    expect(
      viewer.messages.some(
        (m) => m.type === 'file_chooser' && viewer.messages.indexOf(m) > viewer.messages.findIndex((x) => x.type === 'url' && /framed/.test(x.url)),
      ),
    ).toBe(false);
  }, 120_000);
});

describe('locator quality', () => {
  it('the primary is the highest-ranked unique strategy and the next ones are its fallbacks; the run survives renamed ids through them and fails locator_drift when the element is gone', async () => {
    const { h, site, owner, wsBase } = orgs();
    setDriftVariant('base');
    const a = (
      await owner.call('POST', '/api/automations', { name: 'drift-demo', site: `${site.url}/drift`, task: 'Send to an address and read the confirmation' })
    ).body.automation;
    const viewer = await Viewer.open(`${wsBase}/api/authoring/${a.id}/live?width=800&height=600`, { origin: origin(), cookie: `svc_session=${owner.cookie}` });
    await viewer.next((m) => m.type === 'ready');
    await viewer.loaded('/drift');
    viewer.click(at(40));
    viewer.send({ type: 'text', text: 'ada@example.test' });
    viewer.click(at(100));
    await viewer.opCount(3);
    viewer.send({ type: 'extract', field: 'confirmation' });
    await viewer.next((m) => m.type === 'extract_armed');
    viewer.click({ x: 60, y: 176 });
    const ops = await viewer.opCount(4);
    viewer.close();
    // Ranked as codegen ranks: test id, then role + name, then label (or text), then the id; three fallbacks.
    expect(ops[1]).toEqual({
      kind: 'fill',
      target: { testid: 'email-input', fallbacks: [{ role: 'textbox', name: 'Email' }, { label: 'Email' }, { css: '#email' }] },
      value: 'ada@example.test',
    });
    expect(ops[2]).toEqual({
      kind: 'click',
      target: { testid: 'send-button', fallbacks: [{ role: 'button', name: 'Send' }, { text: 'Send' }, { css: '#send' }] },
    });
    expect(ops[3]).toMatchObject({ kind: 'extract', name: 'confirmation', target: { role: 'status' } });

    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const call = async () => {
      const res = await fetch(`${h.url}/v1/run/drift-demo`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return (await res.json()) as any;
    };
    const journalOf = async (runId: string) => {
      const list = (await owner.call('GET', '/api/executions?flow=drift-demo')).body.executions;
      const execution = list.find((e: any) => e.run_id === runId);
      return (await owner.call('GET', `/api/executions/${execution.id}`)).body.journal as any[];
    };
    expect((await call()).output).toEqual({ confirmation: 'Sent to ada@example.test' });

    // Ids renamed: the fallbacks (role + name) carry the run, each such step with a drift warning.
    setDriftVariant('renamed');
    const renamed = await call();
    expect([renamed.status, renamed.output]).toEqual(['succeeded', { confirmation: 'Sent to ada@example.test' }]);
    const warned = (await journalOf(renamed.run_id)).filter((e) => e.event === 'step_succeeded' && e.warnings?.some((w: any) => w.code === 'drift'));
    expect(warned.map((e) => e.step)).toEqual(['fill_2', 'click_3']);
    expect(warned[1].warnings[0].data.matched).toBe('role=button[name="Send"]');
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation.status).toBe('published');

    // The button removed: no locator matches, the step fails locator_drift and the automation is failing.
    setDriftVariant('removed');
    const removed = await call();
    expect([removed.status, removed.error?.code, removed.error?.step]).toEqual(['failed', 'locator_drift', 'click_3']);
    expect((await owner.call('GET', `/api/automations/${a.id}`)).body.automation).toMatchObject({ status: 'failing', needs_attention: true });
    setDriftVariant('base');
  }, 120_000);
});

describe('locator ranking edge cases', () => {
  it('names that match several elements and generated ids give way to a short CSS path; a stable id is used', async () => {
    const { studio, site } = orgs();
    const actions: any[] = [];
    let arrived: () => void = () => {};
    let loaded!: () => void;
    const ready = new Promise<void>((r) => (loaded = r));
    const page = await studio.open({
      url: `${site.url}/dupes`,
      viewport: { width: 640, height: 480 },
      onFrame: (_f, ack) => ack(),
      onAction: (a) => {
        actions.push(a);
        arrived();
      },
      onNotice: () => {},
      onLoaded: () => loaded(),
    });
    const next = (n: number) => (actions.length >= n ? Promise.resolve() : new Promise<void>((r) => (arrived = () => actions.length >= n && r())));
    try {
      await ready;
      const click = (p: { x: number; y: number }) => {
        page.input({ type: 'mouse', action: 'down', ...p, button: 'left', clickCount: 1 });
        page.input({ type: 'mouse', action: 'up', ...p, button: 'left', clickCount: 1 });
      };
      click(at(40));
      click(at(100));
      await next(2);
      await page.extract('total');
      click(at(160));
      await next(3);
      const [first, second, total] = actions;
      for (const a of [first, second]) {
        expect(a.kind).toBe('click');
        expect(Object.keys(a.target).filter((k) => k !== 'fallbacks')).toEqual(['css']);
        expect(a.target.css).not.toContain('ember');
        expect(JSON.stringify(a.target)).not.toContain('"role"');
      }
      expect(first.target.css).not.toBe(second.target.css);
      // The stable id leads; the text (the output) is the last fallback.
      expect(total).toMatchObject({ kind: 'extract', target: { css: '#totals' }, name: 'total' });
      expect(total.target.fallbacks.at(-1)).toEqual({ text: 'Total 42' });
    } finally {
      await page.close();
    }
  });
});
