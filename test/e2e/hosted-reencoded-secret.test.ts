import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';

/**
 * Issue 27, point 1, end to end: a page that shows the secret typed into it upper-cased, lower-cased
 * and in hex (both cases). A published browser automation extracts that text; the gateway's answer
 * and the execution (run, journal) hold none of those forms, only `***`.
 */

const SECRET = 'Mixed-Case.Secret-7q';
const hex = Buffer.from(SECRET).toString('hex');
const FORMS = [SECRET, SECRET.toUpperCase(), SECRET.toLowerCase(), hex, hex.toUpperCase()];

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Key</title></head><body>
<label for="key">Key</label><input id="key" type="password" autocomplete="off">
<button type="button" id="show">Show</button><p id="result"></p>
<script>
document.getElementById('show').addEventListener('click', () => {
  const v = document.getElementById('key').value;
  const h = [...new TextEncoder().encode(v)].map((b) => b.toString(16).padStart(2, '0')).join('');
  document.getElementById('result').textContent = 'KEY ' + v.toUpperCase() + ' key ' + v.toLowerCase() + ' hex ' + h + ' HEX ' + h.toUpperCase();
});
</script></body></html>`;

let h: HostedFixture;
let site: Server;
let siteUrl: string;
let owner: Client;
let live: string;

beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === '/key') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  owner = new Client(h.url);
  await owner.signup('reencoded@example.test');
  live = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
}, 120_000);
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
});

describe('a page that shows the secret re-encoded', () => {
  it('the gateway answer and the execution hold no upper-cased, lower-cased or hex form of it', async () => {
    const a = (await owner.call('POST', '/api/automations', { name: 'show-key', site: `${siteUrl}/key`, task: 'Show the key' })).body.automation;
    const patched = await owner.call('PATCH', `/api/authoring/${a.id}`, {
      captured_ops: [
        { kind: 'navigate', url: `${siteUrl}/key` },
        { kind: 'fill', target: { label: 'Key' }, slot: 'api_key' },
        { kind: 'click', target: { role: 'button', name: 'Show' } },
        { kind: 'extract', target: '#result', name: 'shown' },
      ],
      secret_slots: ['api_key'],
    });
    expect(patched.status).toBe(200);
    expect((await owner.call('POST', `/api/authoring/${a.id}/publish`)).status).toBe(200);
    expect((await owner.call('PUT', '/api/secrets/api_key', { value: SECRET })).status).toBeLessThan(300);

    const res = await fetch(`${h.url}/v1/run/show-key`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const text = await res.text();
    const body = JSON.parse(text);
    expect([res.status, body.status]).toEqual([200, 'succeeded']);
    // The page did show it: four masked forms where the value was.
    expect(body.output.shown).toBe('KEY *** key *** hex *** HEX ***');
    const execution = await owner.call('GET', `/api/executions/${body.run_id}`);
    expect(execution.status).toBe(200);
    const stream = await fetch(`${h.url}/api/runs/${body.run_id}/stream`, { headers: { cookie: `svc_session=${owner.cookie}` } });
    const surfaces: [string, string][] = [
      ['gateway', text],
      ['execution', JSON.stringify(execution.body)],
      ['stream', await stream.text()],
    ];
    for (const [where, surface] of surfaces) {
      for (const form of FORMS) expect(surface.includes(form), `${where} holds ${form}`).toBe(false);
    }
  }, 120_000);
});
