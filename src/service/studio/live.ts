import type { WebSocket } from 'ws';
import { isFlowError } from '../../errors.js';
import type { StudioBrowser, StudioPage, StudioViewport } from '../../ports/studio.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { checkSocketOrigin, createLiveSocketRoute, FRAME_BACKLOG_BYTES, pathId, socketSession, type LiveSocketRoute } from '../live/upgrade.js';
import { createCaptureAppender } from './capture-append.js';
import { rerecordCursor, type RerecordPlan } from './rerecord.js';
import { replayBefore, startRerecord } from './rerecord-session.js';
import { egressRefusalMessage, openStudioSession, withEgressHint, type StudioSession } from './session.js';
import { createUploads } from './uploads.js';
import { capturedOps, listenToViewer, viewportOf } from './viewer-messages.js';

/**
 * The studio's live capture (docs/hosted-api.md, "Studio (live capture)"): `GET
 * /api/authoring/{id}/live` upgraded to a WebSocket. Before the upgrade: the Origin must be on
 * SVC_ORIGINS, the session cookie valid, the caller an owner, the automation in the caller's org with
 * its authoring session editable; otherwise an HTTP answer and no upgrade. Then a fresh browser
 * context at the automation's site streams frames to the viewer and takes its input; what the user
 * does is appended to the session's captured_ops as ops of the engine's format (the PATCH route's
 * storage), so publish compiles it unchanged.
 *
 * This file is the sessions' lifecycle (admission and limits, the page's start, shutdown). One
 * session's parts: session.ts (its socket, idle close and teardown), viewer-messages.ts (what the
 * viewer sends, parsed with protocol.ts), capture-append.ts (what the page does, stored as ops),
 * uploads.ts (file choosers) and rerecord-session.ts (the replay before a re-record).
 */

export interface StudioOptions {
  /** The browser (createStudioBrowser from flowctl/adapters/executor-playwright). */
  browser: StudioBrowser;
  /** Live sessions at once in this process. Default 4. */
  maxSessions?: number;
  /** Live sessions at once per org. Default 2. */
  maxSessionsPerOrg?: number;
  /** A session with no viewer message for this long is closed. Default 600000 (10 min). */
  idleTimeoutMs?: number;
}

export interface LiveCapture {
  /** The route `GET /api/authoring/{id}/live`: refusals are HTTP answers, an admitted session is upgraded. */
  route: LiveSocketRoute;
  /** Live sessions now. */
  active(): number;
  dispose(): Promise<void>;
}

export const LIVE_PATH = /^\/api\/authoring\/([^/]+)\/live\/?$/;
const MAX_MESSAGE_BYTES = 64 * 1024;

interface Admitted {
  orgId: string;
  automationId: string;
  site: string;
  userId: string;
  cookie: string | undefined;
}

export function createLiveCapture(deps: ServiceDeps, options: StudioOptions | undefined): LiveCapture {
  const { storage, logger } = deps;
  const maxSessions = options?.maxSessions ?? 4;
  const maxPerOrg = options?.maxSessionsPerOrg ?? 2;
  const idleTimeoutMs = options?.idleTimeoutMs ?? 600_000;
  const lives = new Set<StudioSession>();
  // Sessions admitted but not yet open count against the limits too.
  const route = createLiveSocketRoute<Admitted>({
    maxPayload: MAX_MESSAGE_BYTES,
    admit,
    open: (ws, who, request) => {
      const query = new URL(request.url).searchParams;
      void run(ws, who, viewportOf(query.get('width'), query.get('height')), query.get('from_step') ?? undefined);
    },
  });
  const countOrg = (orgId: string) => [...lives].filter((l) => l.orgId === orgId).length + route.pending(orgId);

  async function admit(request: Request): Promise<Admitted> {
    const match = LIVE_PATH.exec(new URL(request.url).pathname);
    if (!match) throw serviceError('not_found', 'no WebSocket here (the studio is at /api/authoring/{id}/live)');
    checkSocketOrigin(request, deps);
    const auth = await socketSession(request, deps);
    if (auth.role !== 'owner') throw serviceError('forbidden', 'only an owner of the org may capture');
    const id = pathId(match[1]!);
    if (id === undefined) throw serviceError('not_found', 'no such automation in this org');
    const automation = await storage.automations.get(auth.org.id, id);
    const session = automation ? await storage.authoring.get(auth.org.id, id) : undefined;
    if (!automation || !session) throw serviceError('not_found', 'no such automation in this org');
    if (session.state === 'published') throw serviceError('not_editable', 'the session is published: reopen it with POST /api/authoring/{id}/edit first');
    let site: URL;
    try {
      site = new URL(automation.site);
      if (site.protocol !== 'http:' && site.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw serviceError('invalid_request', "the automation's site is not an http(s) URL: set it first");
    }
    if (!options) throw serviceError('not_ready', 'this service has no studio browser (createHostedService({studio}))');
    if (lives.size + route.pending() >= maxSessions)
      throw serviceError('rate_limited', `the studio has ${maxSessions} live sessions open: try again when one closes`);
    if (countOrg(auth.org.id) >= maxPerOrg) throw serviceError('rate_limited', `this org has ${maxPerOrg} live studio sessions open: close one first`);
    return { orgId: auth.org.id, automationId: id, site: site.href, userId: auth.user.id, cookie: request.headers.get('cookie') ?? undefined };
  }

  async function run(ws: WebSocket, who: Admitted, viewport: StudioViewport, fromStep?: string): Promise<void> {
    const browser = options!.browser;
    const session = openStudioSession(ws, { deps, ...who }, { idleTimeoutMs, onEnd: () => lives.delete(session) });
    lives.add(session);
    const { orgId, automationId, site } = session;
    const capture = createCaptureAppender(session);
    const uploads = createUploads(session, capture);

    // A site the egress rule refuses is not opened: no page, no navigate step, never "recording".
    const refused = await browser.refusal?.(site).catch(() => undefined);
    if (refused) {
      const message = egressRefusalMessage(refused);
      session.send({ type: 'error', error: 'egress_denied', message });
      session.send({ type: 'closed', reason: 'egress_denied', message });
      session.close(4003, 'egress_denied');
      await session.teardown();
      return;
    }

    // Re-record (`?from_step=<step id>`): the plan first; the start URL is then the replay's to open.
    let plan: RerecordPlan | undefined;
    if (fromStep !== undefined) {
      plan = await startRerecord(session, fromStep);
      if (!plan) return;
      capture.cursor = rerecordCursor(plan);
    } else {
      capture.append({ kind: 'navigate', url: site });
    }
    let page: StudioPage;
    try {
      page = await browser.open({
        url: plan && (plan.steps[0]?.tool ?? '').startsWith('browser/navigate@') ? 'about:blank' : site,
        viewport,
        onFrame: (frame, ack) => {
          if (session.closed || ws.readyState !== ws.OPEN) return ack();
          // No backlog: while the socket has not drained, frames are dropped (and acked a little later,
          // which paces the screencast to what the viewer's connection takes).
          if (ws.bufferedAmount > FRAME_BACKLOG_BYTES) {
            setTimeout(ack, 100).unref?.();
            return;
          }
          session.send({ type: 'frame', data: frame.data, width: frame.width, height: frame.height }, () => ack());
        },
        onAction: capture.onAction,
        onNotice: (message) => session.notice(withEgressHint(message)),
        onNavigated: (url) => session.send({ type: 'url', url }),
        onLoaded: (url, complete) => session.send({ type: 'loaded', url, complete }),
        onFileChooser: uploads.onFileChooser,
        onGone: (reason) => {
          session.send({ type: 'closed', reason: 'browser_gone', message: reason });
          session.close(1011, 'browser_gone');
        },
      });
    } catch (err) {
      logger.error(`[flowctl] [studio] open: ${(err as Error)?.stack ?? String(err)}`);
      session.send({ type: 'error', error: isFlowError(err) ? err.code : 'browser_unavailable', message: 'the studio browser could not be started' });
      session.close(1011, 'browser_unavailable');
      await session.teardown();
      return;
    }
    session.page = page;
    if (session.closed) {
      await page.close();
      return;
    }
    if (plan && !(await replayBefore(session, page, plan))) return;
    await session.appends;
    const current = await storage.authoring.get(orgId, automationId);
    session.send({
      type: 'ready',
      automation_id: automationId,
      site,
      viewport: page.viewport,
      captured_ops: capturedOps(current?.captured_ops),
      secret_slots: current?.secret_slots ?? [],
      input_slots: current?.input_slots ?? [],
      ...(plan ? { rerecord: { step: plan.step, index: plan.index } } : {}),
    });
    listenToViewer(session, page, { browser, capture, uploads });
  }

  return {
    route,
    active: () => lives.size,
    async dispose() {
      for (const session of [...lives]) {
        session.seal();
        session.close(1001, 'shutting down');
        await session.page?.close().catch(() => {});
      }
      lives.clear();
    },
  };
}
