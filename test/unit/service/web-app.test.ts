import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHosted, type HostedFixture } from '../../helpers/hosted.js';
import { isReservedPath, reservedPrefixes } from '../../../src/service/web-app.js';

/**
 * The web app's static serving never shadows the API: a web folder that holds files named like every
 * API path (an `api/` folder, `openapi.json`, `healthz`, ...) still gets the API's answers there,
 * while `/`, client routes and assets are served from the folder.
 */

const INDEX = '<!doctype html><html><head><title>web app marker</title></head><body><div id="root"></div></body></html>';
const MARKER = 'web app marker';

let h: HostedFixture;
let off: HostedFixture;
let root: string;

async function put(path: string, body: string) {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), body);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowctl-web-'));
  await put('index.html', INDEX);
  await put('assets/app-abc123.js', 'console.log("app")');
  await put('favicon.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>');
  // Decoys: files named like API paths, each of which must never be served.
  for (const p of [
    'api/automations',
    'api/session',
    'api/index.html',
    'v1/run/x',
    'v1/index.html',
    'mcp/index.html',
    'openapi.json',
    'docs/index.html',
    'healthz',
    'readyz',
    'example/site',
  ]) {
    await put(p, `${MARKER} decoy ${p}`);
  }
  h = await startHosted({}, { web: root });
  off = await startHosted({}, { web: false });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await off?.close();
  await rm(root, { recursive: true, force: true });
});

const get = (base: string, path: string, init: RequestInit = {}) => fetch(base + path, { redirect: 'manual', ...init });

describe('web app static serving', () => {
  it('serves index.html at / and for client routes, assets by name with long caching', async () => {
    for (const path of ['/', '/automations', '/automations/123/versions', '/runs/abc', '/login']) {
      const res = await get(h.url, path);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'text/html; charset=utf-8']);
      expect(await res.text()).toBe(INDEX);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
    const js = await get(h.url, '/assets/app-abc123.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).toBe('console.log("app")');
    const head = await get(h.url, '/automations', { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('a missing file is the API 404, never index.html', async () => {
    for (const path of ['/assets/missing.js', '/favicon.ico', '/x/y.png']) {
      const res = await get(h.url, path);
      expect([path, res.status, await res.json()]).toEqual([path, 404, { error: 'not_found', message: 'no such route' }]);
    }
  });

  it('never answers under an API prefix: every route of the table keeps its own answer', async () => {
    for (const route of h.service.routes) {
      const path = route.path.replace(/\{[^}]+\}/g, 'x');
      for (const method of ['GET', 'HEAD']) {
        const res = await get(h.url, path, { method });
        const text = await res.text();
        expect([method, path, text.includes(MARKER)]).toEqual([method, path, false]);
        // (The OAuth interaction route is a redirect to the web app's consent page: no body.)
        if (path !== '/example/site' && method === 'GET' && !(res.status === 303 && res.headers.get('location')))
          expect([path, res.headers.get('content-type')]).toEqual([path, expect.stringMatching(/^(application\/([\w.-]+\+)?json|text\/event-stream)/)]);
      }
    }
    for (const path of [
      '/api',
      '/api/',
      '/api/nope',
      '/api/index.html',
      '/v1',
      '/v1/',
      '/v1/index.html',
      '/v1/run',
      '/mcp',
      '/mcp/index.html',
      '/openapi.json',
      '/docs',
      '/docs/index.html',
      '/healthz',
      '/readyz',
      '/example/site',
      '/API/session',
      '/example',
    ]) {
      const res = await get(h.url, path);
      const text = await res.text();
      expect([path, text.includes(MARKER)]).toEqual([path, false]);
    }
    expect(await (await get(h.url, '/healthz')).json()).toEqual({ status: 'ok' });
    expect((await (await get(h.url, '/openapi.json')).json()).openapi).toBe('3.1.0');
    const mcp = await get(h.url, '/mcp');
    expect([mcp.status, (await mcp.json()).error]).toEqual([405, 'method_not_allowed']);
    const unknownApi = await get(h.url, '/api/nope');
    expect([unknownApi.status, (await unknownApi.json()).error]).toEqual([404, 'not_found']);
    const session = await get(h.url, '/api/automations');
    expect([session.status, (await session.json()).error]).toEqual([401, 'unauthenticated']);
  });

  it('only GET and HEAD: other methods on a client route are the API 404', async () => {
    const res = await fetch(`${h.url}/automations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([res.status, (await res.json()).error]).toEqual([404, 'not_found']);
  });

  it('no traversal out of the folder', async () => {
    for (const path of ['/..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e/etc/passwd', '/assets/..%2F..%2Fpackage.json']) {
      const res = await get(h.url, path);
      const text = await res.text();
      expect([path, text.includes('root:'), text.includes('"name"')]).toEqual([path, false, false]);
    }
  });

  it('web: false serves no app', async () => {
    expect(h.service.webRoot).toBe(root);
    expect(off.service.webRoot).toBeUndefined();
    const res = await get(off.url, '/');
    expect([res.status, (await res.json()).error]).toEqual([404, 'not_found']);
    expect((await get(off.url, '/healthz')).status).toBe(200);
  });

  it("reserved prefixes: the fixed list plus the route table's first segments, matched by segment", () => {
    const reserved = reservedPrefixes(h.service.routes.map((r) => r.path));
    expect(reserved).toEqual(expect.arrayContaining(['/api', '/v1', '/mcp', '/openapi.json', '/docs', '/healthz', '/readyz', '/.well-known', '/example']));
    expect(isReservedPath('/.well-known/oauth-protected-resource', reserved)).toBe(true);
    expect(isReservedPath('/api', reserved)).toBe(true);
    expect(isReservedPath('/api/x', reserved)).toBe(true);
    expect(isReservedPath('/apis', reserved)).toBe(false);
    expect(isReservedPath('/docsx', reserved)).toBe(false);
    expect(isReservedPath('/automations', reserved)).toBe(false);
  });
});
