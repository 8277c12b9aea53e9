import { z } from '@hono/zod-openapi';
import { isFlowError } from '../../errors.js';
import { audit, type ServiceDeps } from '../context.js';
import { compileCapture, publishVersion } from '../domain/publish.js';
import { jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { Automation, automationJson, newDraft } from './automations.js';

/**
 * The starter example (docs/hosted-api.md, "Starter example"): a browser automation against a small
 * demo page served on an origin of its own (`exampleSiteUrl`; also `GET /example/site` here), with one input (`city`) and
 * one extracted output (`forecast`). With browser tools wired in it is published at once; without, it
 * is a draft prefilled with the site and task. One per org, also under concurrent calls.
 */

export const EXAMPLE_NAME = 'example-forecast';
export const EXAMPLE_TASK = 'Look up the forecast for a city on the demo site and read it back';

/** The demo page: a form whose answer appears after a short client-side delay (as real pages do). */
export const EXAMPLE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Forecast demo</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
label{display:block;margin:.5rem 0 .25rem}input{font:inherit;padding:.4rem .5rem;width:16rem}
button{font:inherit;padding:.4rem .9rem;margin-left:.5rem}#result{margin-top:1.25rem;font-weight:600}</style></head>
<body><h1>Forecast demo</h1><p>The flowctl starter example automates this page.</p>
<form id="f"><label for="city">City</label><input id="city" name="city" autocomplete="off"><button type="submit">Look up</button></form>
<p id="result" aria-live="polite"></p>
<script>
const skies=['sunny','cloudy','rain showers','clear skies','light wind'];
document.getElementById('f').addEventListener('submit',e=>{e.preventDefault();
const city=document.getElementById('city').value.trim();let h=0;for(const c of city)h=(h*31+c.codePointAt(0))>>>0;
setTimeout(()=>{document.getElementById('result').textContent=city?'Forecast for '+city+': '+skies[h%skies.length]:'Type a city first';},150);});
</script></body></html>`;

export function exampleOps(siteUrl: string): unknown[] {
  return [
    { kind: 'navigate', url: siteUrl },
    { kind: 'fill', target: { label: 'City', fallbacks: [{ css: '#city' }] }, value: 'Lisbon', slot: 'city' },
    { kind: 'click', target: { role: 'button', name: 'Look up' } },
    { kind: 'extract', target: '#result', name: 'forecast' },
  ];
}

export function exampleRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;
  // The hosted assembly serves the page on an origin of its own (runs never reach this service's
  // API); GET /example/site stays for people looking at it.
  const siteUrl = deps.exampleSiteUrl ?? `${deps.settings.publicUrl.replace(/\/+$/, '')}/example/site`;
  const wired = () => deps.engine !== undefined && deps.tools?.resolve('browser/navigate', '1') !== undefined;

  return [
    defineRoute(
      {
        method: 'get',
        path: '/example/site',
        auth: 'public',
        summary: 'The demo page the starter example automates',
        tags: ['example'],
        responses: { 200: { description: 'HTML', content: { 'text/html': { schema: z.string() } } } },
      },
      (c) => c.html(EXAMPLE_PAGE),
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/automations/example',
        auth: 'session',
        summary: 'Give the org the starter example (idempotent)',
        tags: ['automations'],
        responses: {
          201: jsonResponse('Created (published when a browser is wired in, else a prefilled draft)', z.object({ automation: Automation })),
          200: jsonResponse('It already existed', z.object({ automation: Automation, existed: z.literal(true) })),
        },
      },
      async (c) => {
        const { org, user } = c.get('auth');
        const existing = await storage.automations.getExample(org.id);
        if (existing) return c.json({ automation: automationJson(deps, existing), existed: true as const }, 200);
        const { automation, session } = newDraft(deps, org.id, { name: EXAMPLE_NAME, site: siteUrl, task: EXAMPLE_TASK }, true);
        if (wired()) {
          session.captured_ops = exampleOps(siteUrl);
          session.input_slots = ['city'];
          session.input_params = [{ name: 'city', required: true, sample: 'Lisbon' }];
        }
        try {
          await storage.transaction(async (tx) => {
            await tx.automations.create(automation);
            await tx.authoring.create(session);
            await audit(deps, tx, {
              org_id: org.id,
              actor: user.id,
              target: `automation:${automation.id}`,
              action: 'automation.create',
              detail: { name: automation.name, example: true },
            });
          });
        } catch (err) {
          // A concurrent call (or an automation already named like the example) won: answer with it.
          if (isFlowError(err, 'conflict')) {
            const winner = (await storage.automations.getExample(org.id)) ?? (await storage.automations.getByName(org.id, EXAMPLE_NAME));
            if (winner) return c.json({ automation: automationJson(deps, winner), existed: true as const }, 200);
          }
          throw err;
        }
        if (!wired()) return c.json({ automation: automationJson(deps, automation) }, 201);
        const compiled = await compileCapture(deps, storage, automation, session);
        const published = await publishVersion(deps, automation, compiled, user.id);
        return c.json({ automation: automationJson(deps, published) }, 201);
      },
    ),
  ];
}
