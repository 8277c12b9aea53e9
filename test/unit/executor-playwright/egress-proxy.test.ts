import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startEgressProxy } from '../../../adapters/executor-playwright/egress-proxy.js';
import type { EgressGuard } from '../../../src/tools/egress.js';
import { createEgressGuard } from '../../../src/tools/egress.js';

/**
 * The proxy keeps connections to the origin alive (a page's files share them), and still asks the
 * run's guard about every request: a pooled connection never lets a request skip the check.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function origin(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer((_req, res) => res.end('ok'));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  closers.push(async () => server.closeAllConnections());
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

function get(proxy: string, url: string): Promise<{ status: number; body: string }> {
  const p = new URL(proxy);
  return new Promise((resolve, reject) => {
    const req = request({ host: p.hostname, port: Number(p.port), path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('egress proxy: connections to the origin', () => {
  it('reuses one origin connection for requests in a row, asking the guard about each', async () => {
    const o = await origin();
    const inner = createEgressGuard({ allow: [`127.0.0.1:${o.port}`] });
    let asked = 0;
    const guard: EgressGuard = {
      precheck: inner.precheck,
      resolve: (host, port) => {
        asked++;
        return inner.resolve(host, port);
      },
    };
    const proxy = await startEgressProxy(guard);
    closers.push(() => proxy.close());
    for (let i = 0; i < 4; i++) expect(await get(proxy.server, `http://127.0.0.1:${o.port}/f${i}`)).toEqual({ status: 200, body: 'ok' });
    expect(asked).toBe(4);
    expect(o.connections()).toBe(1);
  });

  it('refuses a request the guard refuses, though a connection to that origin is pooled', async () => {
    const o = await origin();
    let allow = true;
    const inner = createEgressGuard({ allow: [`127.0.0.1:${o.port}`] });
    const guard: EgressGuard = {
      precheck: inner.precheck,
      resolve: (host, port) => (allow ? inner.resolve(host, port) : createEgressGuard().resolve(host, port)),
    };
    const proxy = await startEgressProxy(guard);
    closers.push(() => proxy.close());
    expect((await get(proxy.server, `http://127.0.0.1:${o.port}/a`)).status).toBe(200);
    allow = false;
    expect((await get(proxy.server, `http://127.0.0.1:${o.port}/b`)).status).toBe(403);
    expect(proxy.refusalOf(`http://127.0.0.1:${o.port}/b`)?.error.code).toBe('egress_denied');
  });
});
