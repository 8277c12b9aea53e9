import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { keepAlive } from '../../../src/service/live/upgrade.js';
import { Viewer } from '../../helpers/live-socket.js';

/**
 * keepAlive on a real socket pair on 127.0.0.1: a viewer that answers pings stays open however many
 * intervals pass; one that stops answering is terminated at the tick after two unanswered pings.
 * Waits are on socket events (pings seen, close), never on time.
 */
describe('keepAlive (live sockets)', () => {
  let server: Server | undefined;
  let wss: WebSocketServer | undefined;
  afterEach(async () => {
    wss?.close();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
    wss = undefined;
  });

  async function pair(clientOptions: WebSocket.ClientOptions) {
    server = createServer();
    wss = new WebSocketServer({ server });
    const accepted = new Promise<WebSocket>((r) => wss!.once('connection', r));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, clientOptions);
    const serverSide = await accepted;
    await new Promise((r) => client.once('open', r));
    return { client, serverSide };
  }

  const pings = (ws: WebSocket, n: number) => new Viewer(ws).pings(n);

  it('pings an answering viewer and keeps it open; stop() ends the pings', async () => {
    const { client, serverSide } = await pair({});
    // A second apart: a loaded machine's event loop answers well within that (in production 15 s).
    const stop = keepAlive(serverSide, 1000);
    await pings(client, 3);
    expect(serverSide.readyState).toBe(WebSocket.OPEN);
    expect(client.readyState).toBe(WebSocket.OPEN);
    stop();
    const closed = new Promise<number>((r) => client.once('close', (code) => r(code)));
    client.close(1000);
    expect(await closed).toBe(1000);
  });

  it('terminates a viewer that answers neither of two pings (its close handlers run)', async () => {
    const { client, serverSide } = await pair({ autoPong: false });
    const serverClosed = new Promise<number>((r) => serverSide.once('close', (code) => r(code)));
    const clientClosed = new Promise<number>((r) => client.once('close', (code) => r(code)));
    keepAlive(serverSide, 50);
    await pings(client, 2);
    // Terminated, not closed with a handshake: both sides see an abnormal closure.
    expect(await serverClosed).toBe(1006);
    expect(await clientClosed).toBe(1006);
  });
});
