import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { serveNodeHttp, type NodeHttpServer } from '../../../adapters/node-http/index.js';
import { webSocketAcceptor } from '../../../src/http/websocket.js';
import { refused } from '../../helpers/live-socket.js';

/**
 * The node-http adapter's side of the WebSocket contract (adapters/node-http/websocket.ts): a route
 * that accepts is upgraded with its message limit; a refusal is the route's own response, body and
 * all; an admitted upgrade that does not happen is aborted; close() ends upgraded sockets.
 */
describe('serveNodeHttp({webSocket: true})', () => {
  let server: NodeHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const events: string[] = [];
  async function start(webSocket = true) {
    events.length = 0;
    server = await serveNodeHttp(
      {
        fetch(request, env) {
          const path = new URL(request.url).pathname;
          if (path !== '/ws') return Response.json({ error: 'not_found', message: 'no such route' }, { status: 404 });
          const acceptor = webSocketAcceptor(request, env);
          if (!acceptor) return Response.json({ error: 'upgrade_required', message: 'a WebSocket' }, { status: 426 });
          return acceptor.accept({
            maxPayload: 8,
            open: (ws: WebSocket) => {
              events.push('open');
              // A message over the limit is an 'error' on the socket before its 1009 close.
              ws.on('error', () => {});
              ws.on('message', (data) => ws.send(`echo ${data}`));
            },
            abort: () => events.push('abort'),
          });
        },
      },
      { webSocket },
    );
    return server.url.replace(/^http/, 'ws');
  }

  it('upgrades what the route accepts, with its message limit', async () => {
    const base = await start();
    const ws = new WebSocket(`${base}/ws`);
    await new Promise((r) => ws.once('open', r));
    const echo = new Promise((r) => ws.once('message', (d) => r(d.toString())));
    ws.send('hi');
    expect(await echo).toBe('echo hi');
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    ws.send('more than eight bytes');
    expect(await closed).toBe(1009);
    expect(events).toEqual(['open']);
  });

  it("answers a refusal with the route's status, headers and body", async () => {
    const base = await start();
    const answer = await refused(`${base}/elsewhere`, {});
    expect(answer).toEqual({ status: 404, body: { error: 'not_found', message: 'no such route' } });
  });

  it('aborts an accepted upgrade whose handshake is malformed (answered 400, never opened)', async () => {
    const base = await start();
    const u = new URL(base);
    const raw = connect(Number(u.port), u.hostname);
    raw.write(`GET /ws HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`);
    let text = '';
    raw.on('data', (c) => (text += c));
    await new Promise((r) => raw.once('close', r));
    expect(text).toMatch(/^HTTP\/1\.1 400/);
    expect(events).toEqual(['abort']);
  });

  it('close() ends upgraded sockets', async () => {
    const base = await start();
    const ws = new WebSocket(`${base}/ws`);
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise((r) => ws.once('close', r));
    await server!.close();
    server = undefined;
    await closed;
  });

  it('without webSocket, an upgrade request is a plain request (no acceptor)', async () => {
    const base = await start(false);
    const answer = await refused(`${base}/ws`, {});
    expect(answer).toEqual({ status: 426, body: { error: 'upgrade_required', message: 'a WebSocket' } });
  });
});
