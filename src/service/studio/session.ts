import type { WebSocket } from 'ws';
import type { StudioPage } from '../../ports/studio.js';
import type { ServiceDeps } from '../context.js';
import { keepAlive } from '../live/upgrade.js';
import type { StudioServerMessage } from './protocol.js';

/**
 * One open studio socket: what it sends (only `StudioServerMessage`s), its idle close, its teardown
 * (the last typing stored, the page closed) and the state the capture, uploads and message handlers
 * share. createLiveCapture (live.ts) opens one per admitted socket.
 */

/** The service setting that lets runs and the studio reach a private destination. */
export const EGRESS_SETTING = 'SVC_EGRESS_ALLOW';
/** A site the egress rule refuses, in words: where, why, and the setting that allows it. */
export const egressRefusalMessage = (r: { target: string; message: string }): string =>
  `the studio may not reach ${r.target}: ${r.message}, so runs may not reach it either. To record this site, add ${r.target} to ${EGRESS_SETTING} (comma-separated entries) and restart the service`;
/** The studio browser's own notice for a refused page (a link or redirect to it): the setting is named too. */
export const withEgressHint = (message: string): string =>
  /^the studio may not reach /.test(message) && !message.includes(EGRESS_SETTING)
    ? `${message}. The service allows a destination with ${EGRESS_SETTING}`
    : message;

/** A core error's message without its `[flowctl] [component]` prefixes, for the viewer. */
export const plainMessage = (message: string): string => message.replace(/^(\[[^\]]+\]\s*)+/, '');

export interface StudioSession {
  readonly ws: WebSocket;
  readonly deps: ServiceDeps;
  readonly orgId: string;
  readonly automationId: string;
  /** The automation's site (an http(s) URL). */
  readonly site: string;
  /** The upgrade's Cookie header: each append checks its session again. */
  readonly cookie: string | undefined;
  /** The browser page, once open. */
  page?: StudioPage;
  /** The appends in flight, in order (capture-append.ts): teardown and `stop` wait for them. */
  appends: Promise<void>;
  /** The socket closed (teardown ran or runs). */
  readonly closed: boolean;
  /** No more ops are stored: set once the closed session's last typing is, or at shutdown. */
  readonly sealed: boolean;
  send(message: StudioServerMessage, cb?: (err?: Error) => void): void;
  /** Something not captured, in words. */
  notice(message: string): void;
  /** Close the socket (its close handlers tear the session down). */
  close(code: number, reason: string): void;
  seal(): void;
  /** Viewer activity: restart the idle clock. */
  touch(): void;
  /** Free the session's place, store the last typing, close the page (once; resolves when done). */
  teardown(): Promise<void>;
}

export function openStudioSession(
  ws: WebSocket,
  who: { deps: ServiceDeps; orgId: string; automationId: string; site: string; cookie: string | undefined },
  options: { idleTimeoutMs: number; onEnd: () => void },
): StudioSession {
  let idle: NodeJS.Timeout | undefined;
  let closed = false;
  let sealed = false;
  const session: StudioSession = {
    ws,
    deps: who.deps,
    orgId: who.orgId,
    automationId: who.automationId,
    site: who.site,
    cookie: who.cookie,
    appends: Promise.resolve(),
    get closed() {
      return closed;
    },
    get sealed() {
      return sealed;
    },
    send(message, cb) {
      if (ws.readyState !== ws.OPEN) return cb?.(new Error('closed'));
      ws.send(JSON.stringify(message), cb);
    },
    notice: (message) => session.send({ type: 'notice', message }),
    close(code, reason) {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    },
    seal() {
      sealed = true;
    },
    touch() {
      clearTimeout(idle);
      idle = setTimeout(() => {
        session.send({ type: 'closed', reason: 'idle', message: `no input for ${Math.round(options.idleTimeoutMs / 1000)} s: the session was closed` });
        session.close(4000, 'idle');
      }, options.idleTimeoutMs);
      idle.unref?.();
    },
    async teardown() {
      if (closed) return;
      closed = true;
      clearTimeout(idle);
      // The place is free at once; the page goes after (its last typing stored first, bounded).
      options.onEnd();
      // The end of recording by closing: the typing the page did not commit yet is the last step
      // (appends go on until it is stored).
      const page = session.page;
      if (page && !sealed) await page.commitTyping().catch(() => {});
      await page?.close().catch(() => {});
      await session.appends;
      sealed = true;
    },
  };
  ws.on('close', () => void session.teardown());
  ws.on('error', () => void session.teardown());
  keepAlive(ws, who.deps.settings.streamHeartbeatSeconds * 1000);
  session.touch();
  return session;
}
