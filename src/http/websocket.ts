/**
 * The WebSocket contract between a route and its runtime, the way Hono splits it (its
 * `upgradeWebSocket` helper in the core, each runtime's upgrade in its adapter): a route checks the
 * upgrade request like any request and answers refusals as ordinary HTTP responses; to accept, it
 * answers with the response of `webSocketAcceptor(request, env).accept()`. The runtime (adapters/node-http `injectWebSocket`)
 * puts a `webSocket` acceptor in the request's env, performs the upgrade when the route accepted,
 * and otherwise sends the route's response as the upgrade's answer.
 */

/**
 * What a route asks for when it accepts an upgrade. `Socket` is the open socket the runtime hands
 * over (a `WebSocket` of the `ws` package with adapters/node-http); the runtime's side takes any
 * route's spec (`WebSocketAccept<never>`), so the published declarations need no @types/ws.
 */
export interface WebSocketAccept<Socket = unknown> {
  /** The largest message the socket takes, in bytes; a larger one closes it (1009). */
  maxPayload: number;
  /** The socket is open: it is the route's from now on. */
  open(ws: Socket): void;
  /**
   * The upgrade did not happen after all: the client went away before it, the handshake was malformed
   * (answered 400 by the runtime), or a later layer replaced the route's response. Called at most once,
   * and never after `open`.
   */
  abort(): void;
}

/** The runtime's side, in the request's env (`env.webSocket`) when the host upgrades WebSockets. */
export interface WebSocketAcceptor {
  /** Take over this request's connection once the route's answer is back: the route returns the response given. */
  accept(spec: WebSocketAccept<never>): Response;
}

/** A request's env as a WebSocket-capable runtime gives it. */
export interface WebSocketBindings {
  webSocket?: WebSocketAcceptor;
}

/** Whether the request asks to be upgraded to a WebSocket. */
export function isWebSocketUpgrade(request: Request): boolean {
  return request.headers.get('upgrade')?.toLowerCase() === 'websocket';
}

/**
 * The runtime's acceptor for `request`, or undefined when the request is no WebSocket upgrade or the
 * runtime cannot upgrade (a host without `injectWebSocket`, a test's `fetch`): the route answers that
 * case itself, before any other check.
 */
export function webSocketAcceptor(request: Request, env: WebSocketBindings | undefined): WebSocketAcceptor | undefined {
  return isWebSocketUpgrade(request) ? env?.webSocket : undefined;
}
