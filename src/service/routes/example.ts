import { z } from '@hono/zod-openapi';
import type { ServiceDeps } from '../context.js';
import { giveExample } from '../domain/example.js';
import { jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { Automation, automationJson } from './automations.js';

/**
 * The starter example (docs/hosted-api.md, "Starter example"; domain/example.ts): the demo page it
 * automates, served on an origin of its own (`exampleSiteUrl`; also `GET /example/site` here), and
 * the route that gives an org the example.
 */

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

export function exampleRoutes(deps: ServiceDeps): ServiceRoute[] {
  // The hosted assembly serves the page on an origin of its own (runs never reach this service's
  // API); GET /example/site stays for people looking at it.
  const siteUrl = deps.exampleSiteUrl ?? `${deps.settings.publicUrl.replace(/\/+$/, '')}/example/site`;

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
        const { automation, existed } = await giveExample(deps, org.id, user.id, siteUrl);
        if (existed) return c.json({ automation: automationJson(deps, automation), existed: true as const }, 200);
        return c.json({ automation: automationJson(deps, automation) }, 201);
      },
    ),
  ];
}
