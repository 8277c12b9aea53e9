import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';

// A real loopback server: the success paths and the status, body and URL handling of http/request.
let server: Server;
let base: string;
let host: string;
const pending = new Set<import('node:http').ServerResponse>();
/** Called when the server holds a /hang request: tests act on that event instead of after a delay. */
let onHang: (() => void) | undefined;

async function readAll(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = await readAll(req);
    const json = (status: number, value: unknown, type = 'application/json; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'x-served-by': 'loopback' });
      res.end(JSON.stringify(value));
    };
    switch (url.pathname) {
      case '/echo':
        return json(200, {
          method: req.method,
          query: Object.fromEntries([...url.searchParams.keys()].map((k) => [k, url.searchParams.getAll(k)])),
          headers: { 'x-token': req.headers['x-token'] ?? null, 'content-type': req.headers['content-type'] ?? null },
          body,
        });
      case '/cookies':
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.setHeader('content-type', 'text/plain');
        return res.end('');
      case '/text':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('plain text');
      case '/problem':
        return json(200, { title: 'x' }, 'application/problem+json');
      case '/redirect':
        res.writeHead(302, { location: '/text' });
        return res.end();
      case '/bad-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{not json');
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('x'.repeat(5000));
      case '/hang':
        pending.add(res); // never answered; closed in afterAll
        onHang?.();
        return;
      default: {
        const status = /^\/status\/(\d{3})$/.exec(url.pathname);
        if (status) return json(Number(status[1]), { status: Number(status[1]) });
        return json(404, { error: 'not found' });
      }
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  host = `127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const res of pending) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('http/request against a loopback server', () => {
  it('GETs JSON with query and headers, and reports the host as a net effect', async () => {
    const ctx = createTestToolContext();
    const out = (await httpRequest.run({ url: `${base}/echo?a=1`, query: { b: 'two', c: [3, true] }, headers: { 'X-Token': 't1' } }, ctx)) as any;
    expect(out.status).toBe(200);
    expect(out.headers['x-served-by']).toBe('loopback');
    expect(out.body).toEqual({
      method: 'GET',
      query: { a: ['1'], b: ['two'], c: ['3', 'true'] },
      headers: { 'x-token': 't1', 'content-type': null },
      body: '',
    });
    expect(out.url).toBe(`${base}/echo?a=1&b=two&c=3&c=true`);
    expect(ctx.effects).toEqual([{ kind: 'net', target: host }]);
  });

  it('POSTs a JSON body with its content-type, or a text body as given', async () => {
    const ctx = createTestToolContext();
    const a = (await httpRequest.run({ method: 'POST', url: `${base}/echo`, json: { x: [1] } }, ctx)) as any;
    expect(a.body).toMatchObject({ method: 'POST', body: '{"x":[1]}', headers: { 'content-type': 'application/json' } });
    const b = (await httpRequest.run({ method: 'PUT', url: `${base}/echo`, body: 'raw', headers: { 'content-type': 'text/csv' } }, ctx)) as any;
    expect(b.body).toMatchObject({ method: 'PUT', body: 'raw', headers: { 'content-type': 'text/csv' } });
  });

  it('returns text for non-JSON types, parses +json types, follows redirects', async () => {
    const ctx = createTestToolContext();
    expect(await httpRequest.run({ url: `${base}/text` }, ctx)).toMatchObject({ status: 200, body: 'plain text' });
    expect(await httpRequest.run({ url: `${base}/problem` }, ctx)).toMatchObject({ body: { title: 'x' } });
    expect(await httpRequest.run({ url: `${base}/redirect` }, ctx)).toMatchObject({ status: 200, body: 'plain text', url: `${base}/text` });
  });

  it('keeps every value of a repeated header', async () => {
    expect(await httpRequest.run({ url: `${base}/cookies` }, createTestToolContext())).toMatchObject({ headers: { 'set-cookie': 'a=1, b=2' }, body: '' });
  });

  it('fails 4xx with http_status, not retryable, and 5xx retryable', async () => {
    const ctx = createTestToolContext();
    await expect(httpRequest.run({ url: `${base}/status/404` }, ctx)).rejects.toMatchObject({
      code: 'http_status',
      data: { status: 404, retryable: false, body: { status: 404 } },
    });
    await expect(httpRequest.run({ url: `${base}/status/503` }, ctx)).rejects.toMatchObject({ code: 'http_status', data: { status: 503, retryable: true } });
  });

  it('honours expect_status both ways', async () => {
    const ctx = createTestToolContext();
    expect(await httpRequest.run({ url: `${base}/status/404`, expect_status: [200, 404] }, ctx)).toMatchObject({ status: 404 });
    await expect(httpRequest.run({ url: `${base}/status/201`, expect_status: 200 }, ctx)).rejects.toMatchObject({ code: 'http_status', data: { status: 201 } });
  });

  it('times out on a server that never answers, retryable', async () => {
    const ctx = createTestToolContext();
    await expect(httpRequest.run({ url: `${base}/hang`, timeout_ms: 200 }, ctx)).rejects.toMatchObject({ code: 'http_timeout', data: { retryable: true } });
  });

  it('reports a refused connection as http_network, retryable', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    await expect(httpRequest.run({ url: `http://127.0.0.1:${port}/` }, createTestToolContext())).rejects.toMatchObject({
      code: 'http_network',
      data: { retryable: true, detail: 'ECONNREFUSED' },
    });
  });

  it('refuses bad URLs and headers before any effect', async () => {
    const ctx = createTestToolContext();
    await expect(httpRequest.run({ url: '/relative' }, ctx)).rejects.toMatchObject({ code: 'http_bad_url' });
    await expect(httpRequest.run({ url: 'file:///etc/passwd' }, ctx)).rejects.toMatchObject({ code: 'http_bad_url' });
    await expect(httpRequest.run({ url: `${base}/echo`, headers: { 'bad header': 'x' } }, ctx)).rejects.toMatchObject({ code: 'http_bad_request' });
    await expect(httpRequest.run({ url: `${base}/echo`, json: {}, body: 'x' }, ctx)).rejects.toMatchObject({ code: 'invalid_tool_input' });
    expect(ctx.effects).toEqual([]);
  });

  it('fails on invalid JSON and on a body larger than max_bytes', async () => {
    const ctx = createTestToolContext();
    await expect(httpRequest.run({ url: `${base}/bad-json` }, ctx)).rejects.toMatchObject({ code: 'http_bad_json' });
    await expect(httpRequest.run({ url: `${base}/big`, max_bytes: 100 }, ctx)).rejects.toMatchObject({ code: 'http_response_too_large' });
    expect(await httpRequest.run({ url: `${base}/big`, max_bytes: 5000 }, ctx)).toMatchObject({ status: 200 });
  });

  it('stops when ctx.signal aborts, with the signal reason', async () => {
    const controller = new AbortController();
    const ctx = createTestToolContext({ signal: controller.signal });
    const held = new Promise<void>((resolve) => (onHang = resolve));
    const call = httpRequest.run({ url: `${base}/hang` }, ctx);
    // Abort while the request is in flight: the server holds it and will never answer.
    await held;
    onHang = undefined;
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'aborted' });
  });
});
