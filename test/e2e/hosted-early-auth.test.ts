import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Issue 27, point 2: the gateway and MCP authenticate from the headers before reading the body (a bad
 * key is refused while the body is still arriving), and a body that stops arriving is closed after
 * the body-idle window (SVC_BODY_IDLE_TIMEOUT_MS; short here so the test does not wait) on every
 * route. Raw sockets: the client sends headers and part of a body, never the rest.
 */

interface Raw {
  socket: Socket;
  received(): string;
  closed(): boolean;
}

/** Headers for a body of `length` bytes, and only `partial` of that body. */
function rawRequest(url: string, path: string, headers: Record<string, string>, length: number, partial: string): Raw {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let data = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (data += d.toString('utf8')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  const head = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(`${head.join('\r\n')}\r\n\r\n${partial}`);
  return { socket, received: () => data, closed: () => closed };
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: string };

let h: HostedFixture;
let owner: Client;
let key: string;
const open: Socket[] = [];

beforeAll(async () => {
  h = await startHosted({ bodyIdleTimeoutMs: 300 });
  owner = new Client(h.url);
  await owner.signup('early-auth@example.test');
  key = (await owner.call('POST', '/api/keys', { mode: 'live' })).body.secret;
}, 120_000);
afterAll(async () => {
  for (const s of open) s.destroy();
  await h?.close();
});

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('authenticate before the body', () => {
  for (const [name, path, headers] of [
    ['gateway', '/v1/run/anything', { 'Content-Type': 'application/json' }],
    ['MCP', '/mcp', MCP_HEADERS],
  ] as const) {
    it(`${name}: a bad key is 401 invalid_key while the body is still arriving`, async () => {
      for (const auth of ['Bearer svc_live_not-a-key', undefined]) {
        const r = rawRequest(h.url, path, { ...headers, ...(auth ? { Authorization: auth } : {}) }, 100_000, '{"inputs": {"a": "');
        open.push(r.socket);
        await waitUntil(() => r.received().includes('\r\n\r\n{') && r.received().endsWith('}'), { what: `the ${name} answer` });
        expect([statusOf(r.received()), bodyOf(r.received()).error]).toEqual([401, 'invalid_key']);
        r.socket.destroy();
      }
    });
  }
});

describe('stalled bodies are closed after the body-idle window', () => {
  for (const [name, path, headers] of [
    ['gateway (valid key)', '/v1/run/anything', { 'Content-Type': 'application/json', Authorization: '' }],
    ['MCP (valid key)', '/mcp', { ...MCP_HEADERS, Authorization: '' }],
    ['a session route', '/api/automations', { 'Content-Type': 'application/json', Cookie: '' }],
    ['signup', '/api/auth/signup', { 'Content-Type': 'application/json' }],
  ] as const) {
    it(`${name}: 408 request_timeout, then the connection is closed`, async () => {
      const filled: Record<string, string> = { ...headers };
      if ('Authorization' in filled) filled.Authorization = `Bearer ${key}`;
      if ('Cookie' in filled) filled.Cookie = `svc_session=${owner.cookie}`;
      const r = rawRequest(h.url, path, filled, 1000, '{"name": "');
      open.push(r.socket);
      await waitUntil(() => r.closed(), { what: `the ${name} connection to close` });
      expect([statusOf(r.received()), bodyOf(r.received()).error]).toEqual([408, 'request_timeout']);
    });
  }

  it('a complete body is answered as usual under the same window', async () => {
    const res = await fetch(`${h.url}/v1/run/anything`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([404, 'not_found']);
  });
});
