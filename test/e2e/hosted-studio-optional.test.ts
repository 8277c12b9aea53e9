import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { startSite, type SiteServer } from '../helpers/site-server.js';

/**
 * The author marks a captured step optional in the studio page (the cookie banner of
 * test/fixtures/site/base/consent.html, shown only to visitors whose name starts with "new"); the
 * PATCH stores it, publish carries it onto the FlowSpec's step, and gateway runs take both paths:
 * the banner accepted, and the banner absent with the step skipped.
 */

let h: HostedFixture;
let site: SiteServer;
let owner: Client;

beforeAll(async () => {
  site = await startSite({ password: 'unused-optional' });
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('optional@example.test', 'correct horse battery', 'Optional org');
}, 120_000);

afterAll(async () => {
  await h?.close();
  await site?.close();
});

describe('an optional step marked in the studio page', () => {
  it('the toggle stores optional, publish carries it, and runs accept the banner or skip the step', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'consent', site: `${site.url}/consent.html`, task: 'Accept cookies if asked' })).body
      .automation;
    const ops = [
      { kind: 'navigate', url: `${site.url}/consent.html` },
      { kind: 'fill', target: { css: '#visitor' }, value: 'new-ann', slot: 'visitor' },
      { kind: 'click', target: { css: '#enter' } },
      { kind: 'click', target: { role: 'button', name: 'Accept all' } },
      { kind: 'extract', target: { css: '#consent' }, name: 'consent' },
    ];
    expect((await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops, input_slots: ['visitor'] })).status).toBe(200);
    // A bad value is refused at its path.
    const bad = await owner.call('PATCH', `/api/authoring/${a.id}`, { captured_ops: ops.map((o, i) => (i === 3 ? { ...o, optional: 'yes' } : o)) });
    expect(bad.status).toBe(422);
    expect(bad.body.issues[0]).toMatchObject({ path: ['captured_ops', 3, 'optional'] });

    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
    try {
      const context = await browser.newContext({ baseURL: h.url });
      context.setDefaultTimeout(60_000);
      await context.addCookies([{ name: 'svc_session', value: owner.cookie!, url: h.url }]);
      const page = await context.newPage();
      await page.goto(`/automations/${a.id}/capture`);
      const toggle = page.getByRole('button', { name: 'Step 4 optional' });
      await toggle.waitFor();
      // Navigate and extract are never optional: no toggle on them.
      expect(await page.getByRole('button', { name: 'Step 1 optional' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Step 5 optional' }).count()).toBe(0);
      expect(await toggle.getAttribute('aria-pressed')).toBe('false');
      await toggle.click();
      await expect.poll(async () => (await owner.call('GET', `/api/authoring/${a.id}`)).body.session.captured_ops[3].optional, { timeout: 60_000 }).toBe(true);
      await page.locator('[aria-label="Step 4 optional"][aria-pressed="true"]').waitFor();
      await page.getByTestId('op-list').getByText('optional', { exact: true }).waitFor();
    } finally {
      await browser.close();
    }
    const session = (await owner.call('GET', `/api/authoring/${a.id}`)).body.session;
    expect(session.captured_ops[3]).toEqual({ kind: 'click', target: { role: 'button', name: 'Accept all' }, optional: true });
    // The fill's slot stayed as it was.
    expect(session.captured_ops[1]).toMatchObject({ slot: 'visitor' });

    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    const spec = (await owner.call('GET', '/api/flowspecs/consent')).body;
    const steps = (spec.spec ?? spec).steps as { id: string; optional?: boolean }[];
    expect(steps.map((s) => s.optional ?? false)).toEqual([false, false, false, true, false]);

    const key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
    const run = async (visitor: string) => {
      const r = await fetch(`${h.url}/v1/run/consent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: { visitor } }),
      });
      return { status: r.status, body: (await r.json()) as any };
    };
    const shown = await run('new-bea');
    expect([shown.status, shown.body.status, shown.body.output]).toEqual([200, 'succeeded', { consent: 'accepted' }]);
    const absent = await run('carl');
    expect([absent.status, absent.body.status, absent.body.output]).toEqual([200, 'succeeded', { consent: 'none' }]);
    // The skip is in the run's journal, and the automation is not failing.
    const journal = (await owner.call('GET', `/api/executions/${absent.body.run_id}`)).body.journal;
    const skipped = (journal as { event: string; step?: string; reason?: string }[]).filter((e) => e.event === 'step_skipped');
    expect(skipped).toEqual([expect.objectContaining({ step: 'click_4', reason: expect.stringMatching(/^optional: target_absent: /) })]);
    const automation = (await owner.call('GET', `/api/automations/${a.id}`)).body.automation;
    expect(automation.status).toBe('published');
  }, 180_000);
});
