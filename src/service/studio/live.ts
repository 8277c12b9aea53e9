import type { RawData, WebSocket } from 'ws';
import { digestBytes } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import type { StudioAction, StudioBrowser, StudioFileChooser, StudioInput, StudioPage, StudioViewport } from '../../ports/studio.js';
import { checkOps, IDENTIFIER } from '../../record/ops.js';
import { sessionFromCookie } from '../auth/guards.js';
import { checkSocketOrigin, createLiveSocketRoute, FRAME_BACKLOG_BYTES, keepAlive, pathId, socketSession, type LiveSocketRoute } from '../live/upgrade.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { orgSecretValues } from '../domain/publish.js';
import { orgFileSource } from '../domain/dispatch.js';
import { findOrgSecrets } from '../domain/secret-leak.js';
import { withCaptureLock } from './capture-lock.js';
import { appendCursor, maskSecrets, planRerecord, rerecordCursor, usedSlots, type CaptureCursor, type RerecordPlan } from './rerecord.js';

/**
 * The studio's live capture (docs/hosted-api.md, "Studio (live capture)"): `GET
 * /api/authoring/{id}/live` upgraded to a WebSocket. Before the upgrade: the Origin must be on
 * SVC_ORIGINS, the session cookie valid, the caller an owner, the automation in the caller's org with
 * its authoring session editable; otherwise an HTTP answer and no upgrade. Then a fresh browser
 * context at the automation's site streams frames to the viewer and takes its input; what the user
 * does is appended to the session's captured_ops as ops of the engine's format (the PATCH route's
 * storage), so publish compiles it unchanged.
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
/** Viewer messages taken per second; more are dropped (one `rate_limited` error per second says so). */
export const MAX_MESSAGES_PER_SECOND = 400;
const MAX_OP_BYTES = 16 * 1024;
/** What one file chooser may be given: at most this many bytes in all, in at most this many files. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_UPLOAD_FILES = 10;
/** One `file_data` message carries at most this many bytes (base64 of them fits a 64 KiB message). */
export const MAX_FILE_CHUNK_BYTES = 45 * 1024;

/** An upload file name: what the chooser reports (`File.name`), no folders, no control characters. */
export function validFileName(name: unknown): name is string {
  return typeof name === 'string' && name.length >= 1 && name.length <= 200 && name !== '.' && name !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(name);
}
const DEFAULT_VIEWPORT: StudioViewport = { width: 1280, height: 720 };

/** The service setting that lets runs and the studio reach a private destination. */
export const EGRESS_SETTING = 'SVC_EGRESS_ALLOW';
/** A site the egress rule refuses, in words: where, why, and the setting that allows it. */
export const egressRefusalMessage = (r: { target: string; message: string }): string =>
  `the studio may not reach ${r.target}: ${r.message}, so runs may not reach it either. To record this site, add ${r.target} to ${EGRESS_SETTING} (comma-separated entries) and restart the service`;
/** The studio browser's own notice for a refused page (a link or redirect to it): the setting is named too. */
const withEgressHint = (message: string): string =>
  /^the studio may not reach /.test(message) && !message.includes(EGRESS_SETTING)
    ? `${message}. The service allows a destination with ${EGRESS_SETTING}`
    : message;

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(n)));

function viewportOf(width: unknown, height: unknown): StudioViewport {
  const w = Number(width);
  const h = Number(height);
  return {
    width: Number.isFinite(w) && w > 0 ? clamp(w, 320, 1920) : DEFAULT_VIEWPORT.width,
    height: Number.isFinite(h) && h > 0 ? clamp(h, 240, 1200) : DEFAULT_VIEWPORT.height,
  };
}

/** A slot name (identifier) from a field's name, id or label. */
export function slotName(field: unknown, fallback: string): string {
  const raw = typeof field === 'string' ? field : '';
  let s = raw
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
    .slice(0, 48);
  if (s === '') s = fallback;
  if (!/^[A-Za-z_]/.test(s)) s = `_${s}`;
  return IDENTIFIER.test(s) ? s : fallback;
}

function parseInput(m: Record<string, unknown>): StudioInput | string {
  const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  if (m.type === 'mouse') {
    if (!['down', 'up', 'move', 'wheel'].includes(m.action as string)) return 'mouse.action must be down, up, move or wheel';
    if (!num(m.x) || !num(m.y)) return 'mouse.x and mouse.y must be numbers';
    const button = m.button ?? 'left';
    if (!['left', 'middle', 'right', 'none'].includes(button as string)) return 'mouse.button must be left, middle, right or none';
    return {
      type: 'mouse',
      action: m.action as 'down',
      x: m.x as number,
      y: m.y as number,
      button: button as 'left',
      ...(num(m.clickCount) ? { clickCount: clamp(m.clickCount as number, 1, 3) } : {}),
      ...(num(m.deltaX) ? { deltaX: m.deltaX as number } : {}),
      ...(num(m.deltaY) ? { deltaY: m.deltaY as number } : {}),
      ...(num(m.modifiers) ? { modifiers: clamp(m.modifiers as number, 0, 15) } : {}),
    };
  }
  if (m.type === 'key') {
    if (m.action !== 'down' && m.action !== 'up') return 'key.action must be down or up';
    if (typeof m.key !== 'string' || m.key.length === 0 || m.key.length > 32) return 'key.key must be a key name (KeyboardEvent.key)';
    return { type: 'key', action: m.action, key: m.key };
  }
  if (typeof m.text !== 'string' || m.text.length > 10_000) return 'text.text must be a string of at most 10000 characters';
  return { type: 'text', text: m.text };
}

interface Admitted {
  orgId: string;
  automationId: string;
  site: string;
  userId: string;
  cookie: string | undefined;
}

interface Live {
  ws: WebSocket;
  orgId: string;
  automationId: string;
  page?: StudioPage;
  close(code: number, reason: string): void;
  /** Nothing more is stored (the service is shutting down). */
  seal(): void;
}

export function createLiveCapture(deps: ServiceDeps, options: StudioOptions | undefined): LiveCapture {
  const { storage, logger } = deps;
  const maxSessions = options?.maxSessions ?? 4;
  const maxPerOrg = options?.maxSessionsPerOrg ?? 2;
  const idleTimeoutMs = options?.idleTimeoutMs ?? 600_000;
  const lives = new Set<Live>();
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

  async function run(
    ws: WebSocket,
    who: { orgId: string; automationId: string; site: string; cookie: string | undefined },
    viewport: StudioViewport,
    fromStep?: string,
  ): Promise<void> {
    const { orgId, automationId, site } = who;
    const sendJson = (message: unknown, cb?: (err?: Error) => void) => {
      if (ws.readyState !== ws.OPEN) return cb?.(new Error('closed'));
      ws.send(JSON.stringify(message), cb);
    };
    const notice = (message: string) => sendJson({ type: 'notice', message });
    let idle: NodeJS.Timeout | undefined;
    /** No more ops are stored: set once the closed session's last typing is (teardown). */
    let sealed = false;
    const live: Live = {
      ws,
      orgId,
      automationId,
      close(code, reason) {
        if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
      },
      seal() {
        sealed = true;
      },
    };
    lives.add(live);
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        sendJson({ type: 'closed', reason: 'idle', message: `no input for ${Math.round(idleTimeoutMs / 1000)} s: the session was closed` });
        live.close(4000, 'idle');
      }, idleTimeoutMs);
      idle.unref?.();
    };
    let closed = false;
    const teardown = async () => {
      if (closed) return;
      closed = true;
      clearTimeout(idle);
      // The place is free at once; the page goes after (its last typing stored first, bounded).
      lives.delete(live);
      // The end of recording by closing: the typing the page did not commit yet is the last step
      // (appends go on until it is stored).
      const page = live.page;
      if (page && !sealed) await page.commitTyping().catch(() => {});
      await page?.close().catch(() => {});
      await chain;
      sealed = true;
    };
    ws.on('close', () => void teardown());
    ws.on('error', () => void teardown());
    keepAlive(ws, deps.settings.streamHeartbeatSeconds * 1000);
    touch();

    // Ops are appended one at a time, in the order the page reported them (re-record: at the drifted step).
    let cursor: CaptureCursor = appendCursor;
    let chain: Promise<void> = Promise.resolve();
    const append = (op: Record<string, unknown>, secretSlot?: string, files?: { name: string; digest: string; bytes: Uint8Array }[]) => {
      chain = chain.then(() =>
        withCaptureLock(automationId, async () => {
          if (sealed) return;
          const { issues } = checkOps([op]);
          if (issues.length > 0 || JSON.stringify(op).length > MAX_OP_BYTES) {
            notice(`an action could not be captured (${issues[0]?.message ?? 'too large'})`);
            return;
          }
          // The caller still holds the upgrade's session, as an owner of this org (a logout, a revoked
          // session or a demotion ends the capture).
          const auth = await sessionFromCookie(who.cookie, deps);
          if (typeof auth === 'string' || auth.role !== 'owner' || auth.org.id !== orgId) {
            sendJson({
              type: 'closed',
              reason: 'unauthenticated',
              message: 'the session that opened the studio ended (logged out, revoked, or no longer an owner)',
            });
            live.close(4001, 'unauthenticated');
            return;
          }
          const session = await storage.authoring.get(orgId, automationId);
          if (session?.state !== 'editing') {
            sendJson({ type: 'closed', reason: 'not_editable', message: 'the session is no longer editable (published or deleted)' });
            live.close(4009, 'not_editable');
            return;
          }
          const leaks = findOrgSecrets([op], 'ops', await orgSecretValues(deps, storage, orgId));
          if (leaks.length > 0) {
            notice(`not captured: the value typed into a field is ${leaks[0]!.what}; type secrets into a password field (a secret slot)`);
            return;
          }
          const replacing = cursor.replacing(session.captured_ops);
          if (
            op.kind === 'extract' &&
            session.captured_ops.some(
              (o) => o !== replacing && (o as { kind?: string; name?: string }).kind === 'extract' && (o as { name?: string }).name === op.name,
            )
          ) {
            notice(`an output field "${String(op.name)}" is already extracted: pick another name`);
            return;
          }
          if (op.kind === 'navigate') {
            const last = cursor.previous(session.captured_ops) as { kind?: string; url?: string } | undefined;
            if (last?.kind === 'navigate' && last.url === op.url) return;
          }
          let secretSlots = session.secret_slots;
          if (secretSlots !== undefined && secretSlot !== undefined && !secretSlots.includes(secretSlot)) {
            if (session.input_slots.includes(secretSlot)) {
              notice(`the password field's slot "${secretSlot}" is already an input slot: not captured`);
              return;
            }
            secretSlots = [...secretSlots, secretSlot];
          }
          // An upload's files are attached to the session first, as PUT /api/authoring/{id}/files/{name} does.
          let attached = session.files;
          for (const f of files ?? []) {
            await storage.authoring.putFile(orgId, automationId, f);
            attached = [...attached.filter((x) => x.name !== f.name), { name: f.name, digest: f.digest, size: f.bytes.byteLength }].sort((a, b) =>
              a.name.localeCompare(b.name),
            );
          }
          const placed = cursor.place(session.captured_ops, op);
          // A replaced op's slot that no op uses any more leaves the slot lists (publish refuses unused slots).
          const slots = placed.replaced
            ? { secret_slots: usedSlots(placed.ops, secretSlots), input_slots: usedSlots(placed.ops, session.input_slots) }
            : { secret_slots: secretSlots };
          await storage.authoring.update(orgId, automationId, {
            captured_ops: placed.ops,
            ...slots,
            ...(files ? { files: attached } : {}),
            updated_at: deps.clock.now(),
          });
          placed.commit();
          if (files) sendJson({ type: 'files_received', files: files.map((f) => ({ name: f.name, digest: f.digest, size: f.bytes.byteLength })) });
          sendJson({
            type: 'op',
            op,
            index: placed.index,
            ...(placed.replaced ? { replaced: true, input_slots: slots.input_slots } : {}),
            secret_slots: slots.secret_slots,
          });
        }),
      );
      chain = chain.catch((err) => {
        logger.error(`[flowctl] [studio] append: ${(err as Error)?.stack ?? String(err)}`);
        notice('an action could not be stored');
      });
    };

    /** The re-record plan, or undefined after telling the viewer why there is none (the session then closes). */
    async function startRerecord(step: string): Promise<RerecordPlan | undefined> {
      try {
        const automation = await storage.automations.get(orgId, automationId);
        const session = await storage.authoring.get(orgId, automationId);
        if (!automation || !session) throw new Error('gone');
        return await planRerecord(deps, automation, session, step);
      } catch (err) {
        const code = isFlowError(err) ? err.code : 'internal_error';
        if (!isFlowError(err)) logger.error(`[flowctl] [studio] re-record: ${(err as Error)?.stack ?? String(err)}`);
        const message = isFlowError(err) ? err.message.replace(/^(\[[^\]]+\]\s*)+/, '') : 'the re-record could not be prepared';
        sendJson({ type: 'error', error: code, message });
        sendJson({ type: 'closed', reason: code, message });
        live.close(4022, code);
        await teardown();
        return undefined;
      }
    }

    /** Replay the ops before the drifted step, telling the viewer each step; false (session closed) when one fails. */
    async function replay(page: StudioPage, p: RerecordPlan): Promise<boolean> {
      const of = p.steps.length;
      try {
        await page.replay(p.steps, {
          // A replayed upload reads the file the capture pins from the org's files, as a run does.
          files: orgFileSource(deps, orgId),
          onStep: (i, step) => {
            touch();
            sendJson({ type: 'replaying', step: i + 1, of, id: step.id });
          },
        });
        if (of > 0) sendJson({ type: 'replayed', of });
        return !closed;
      } catch (err) {
        const data = (isFlowError(err) ? err.data : undefined) as { step?: string; index?: number; code?: string } | undefined;
        const message = maskSecrets(isFlowError(err) ? err.message.replace(/^(\[[^\]]+\]\s*)+/, '') : 'the replay failed', p.secrets);
        if (!isFlowError(err)) logger.error(`[flowctl] [studio] replay: ${(err as Error)?.stack ?? String(err)}`);
        sendJson({ type: 'replay_failed', step: (data?.index ?? 0) + 1, of, id: data?.step ?? null, code: data?.code ?? 'replay_failed', message });
        sendJson({ type: 'closed', reason: 'replay_failed', message });
        live.close(4024, 'replay_failed');
        await teardown();
        return false;
      }
    }

    const onAction = (action: StudioAction) => {
      if (action.kind === 'refused') return notice(String(action.message).slice(0, 300));
      if (action.kind === 'click') return append({ kind: 'click', target: action.target });
      if (action.kind === 'press') return append({ kind: 'press', key: action.key, ...(action.target !== undefined ? { target: action.target } : {}) });
      if (action.kind === 'select') return append({ kind: 'select', target: action.target, value: action.value });
      // The viewer un-arms its button (Escape in the page, or a pick that could not be named).
      if (action.kind === 'extract_cancelled') return sendJson({ type: 'extract_cancelled' });
      if (action.kind === 'extract') {
        // A list: every item, and the element that holds them (checkOps validates both).
        if (action.all === true) return append({ kind: 'extract', target: action.target, name: action.name, all: true, container: action.container });
        return append({ kind: 'extract', target: action.target, name: action.name });
      }
      if (action.kind === 'drag') return append({ kind: 'drag', source: action.source, target: action.target });
      if (action.kind === 'fill') {
        if (action.secret === true) {
          const slot = slotName(action.field, 'password');
          return append({ kind: 'fill', target: action.target, slot }, slot);
        }
        return append({ kind: 'fill', target: action.target, value: action.value });
      }
    };

    // Uploads: the page's file chooser (intercepted), then the viewer's files, in chunks, for it.
    let chooser: { target: Record<string, unknown> } | null = null;
    let transfer: { files: { name: string; size: number }[]; total: number; chunks: Buffer[]; received: number } | null = null;
    const onFileChooser = (fc: StudioFileChooser) => {
      transfer = null;
      chooser = null;
      const target = fc.target;
      if (target === null || typeof target !== 'object' || checkOps([{ kind: 'upload', target, files: 'f' }]).issues.length > 0) {
        live.page?.cancelFileChooser();
        return notice('the page opened a file chooser that cannot be captured (a file input inside a frame, or one with no locator): nothing was uploaded');
      }
      chooser = { target: target as Record<string, unknown> };
      sendJson({ type: 'file_chooser', multiple: fc.multiple, accept: fc.accept, max_bytes: MAX_UPLOAD_BYTES, max_files: fc.multiple ? MAX_UPLOAD_FILES : 1 });
    };
    /** The transfer is complete: give the chooser its files, then capture the upload (its files attached). */
    const finishUpload = async () => {
      const t = transfer!;
      const c = chooser!;
      transfer = null;
      chooser = null;
      const all = Buffer.concat(t.chunks);
      let at = 0;
      const files = t.files.map((f) => {
        const bytes = new Uint8Array(all.subarray(at, (at += f.size)));
        return { name: f.name, bytes, digest: digestBytes(bytes) };
      });
      try {
        await live.page!.setFiles(files.map((f) => ({ name: f.name, bytes: f.bytes })));
      } catch (err) {
        return notice(
          `the files could not be given to the page (${isFlowError(err) ? err.message.replace(/^(\[[^\]]+\]\s*)+/, '') : 'its file input is gone'}): nothing was captured`,
        );
      }
      const names = files.map((f) => f.name);
      append({ kind: 'upload', target: c.target, files: names.length === 1 ? names[0] : names }, undefined, files);
    };

    // A site the egress rule refuses is not opened: no page, no navigate step, never "recording".
    const refused = await options!.browser.refusal?.(site).catch(() => undefined);
    if (refused) {
      const message = egressRefusalMessage(refused);
      sendJson({ type: 'error', error: 'egress_denied', message });
      sendJson({ type: 'closed', reason: 'egress_denied', message });
      live.close(4003, 'egress_denied');
      await teardown();
      return;
    }

    // Re-record (`?from_step=<step id>`): the plan first; the start URL is then the replay's to open.
    let plan: RerecordPlan | undefined;
    if (fromStep !== undefined) {
      plan = await startRerecord(fromStep);
      if (!plan) return;
      cursor = rerecordCursor(plan);
    } else {
      append({ kind: 'navigate', url: site });
    }
    let page: StudioPage;
    try {
      page = await options!.browser.open({
        url: plan && (plan.steps[0]?.tool ?? '').startsWith('browser/navigate@') ? 'about:blank' : site,
        viewport,
        onFrame: (frame, ack) => {
          if (closed || ws.readyState !== ws.OPEN) return ack();
          // No backlog: while the socket has not drained, frames are dropped (and acked a little later,
          // which paces the screencast to what the viewer's connection takes).
          if (ws.bufferedAmount > FRAME_BACKLOG_BYTES) {
            setTimeout(ack, 100).unref?.();
            return;
          }
          sendJson({ type: 'frame', data: frame.data, width: frame.width, height: frame.height }, () => ack());
        },
        onAction,
        onNotice: (message) => notice(withEgressHint(message)),
        onNavigated: (url) => sendJson({ type: 'url', url }),
        onLoaded: (url, complete) => sendJson({ type: 'loaded', url, complete }),
        onFileChooser,
        onGone: (reason) => {
          sendJson({ type: 'closed', reason: 'browser_gone', message: reason });
          live.close(1011, 'browser_gone');
        },
      });
    } catch (err) {
      logger.error(`[flowctl] [studio] open: ${(err as Error)?.stack ?? String(err)}`);
      sendJson({ type: 'error', error: isFlowError(err) ? err.code : 'browser_unavailable', message: 'the studio browser could not be started' });
      live.close(1011, 'browser_unavailable');
      await teardown();
      return;
    }
    live.page = page;
    if (closed) {
      await page.close();
      return;
    }
    if (plan && !(await replay(page, plan))) return;
    await chain;
    const current = await storage.authoring.get(orgId, automationId);
    sendJson({
      type: 'ready',
      automation_id: automationId,
      site,
      viewport: page.viewport,
      captured_ops: current?.captured_ops ?? [],
      secret_slots: current?.secret_slots ?? [],
      input_slots: current?.input_slots ?? [],
      ...(plan ? { rerecord: { step: plan.step, index: plan.index } } : {}),
    });

    let windowStart = Date.now();
    let inWindow = 0;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      touch();
      const now = Date.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        inWindow = 0;
      }
      const limited = () => {
        if (++inWindow <= MAX_MESSAGES_PER_SECOND) return false;
        if (inWindow === MAX_MESSAGES_PER_SECOND + 1)
          sendJson({
            type: 'error',
            error: 'rate_limited',
            message: `more than ${MAX_MESSAGES_PER_SECOND} messages in a second: the rest of this second is dropped`,
          });
        return true;
      };
      if (isBinary) return limited() ? undefined : sendJson({ type: 'error', error: 'invalid_message', message: 'messages are JSON text' });
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(data.toString()) as Record<string, unknown>;
        if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new Error('not an object');
      } catch {
        return limited() ? undefined : sendJson({ type: 'error', error: 'invalid_message', message: 'a message is a JSON object with a type' });
      }
      // The chunks of a file transfer in progress are bounded by its announced size, not by the message rate.
      if (!(m.type === 'file_data' && transfer !== null) && limited()) return;
      switch (m.type) {
        case 'mouse':
        case 'key':
        case 'text': {
          const input = parseInput(m);
          if (typeof input === 'string') return sendJson({ type: 'error', error: 'invalid_message', message: input });
          return page.input(input);
        }
        case 'navigate': {
          let url: URL;
          try {
            url = new URL(String(m.url));
            if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
          } catch {
            return sendJson({ type: 'error', error: 'invalid_message', message: 'navigate.url must be an absolute http(s) URL' });
          }
          const target = url.href;
          return void (async () => {
            // A typed address the egress rule refuses: said, not captured, not opened.
            const no = await options!.browser.refusal?.(target).catch(() => undefined);
            if (no) return sendJson({ type: 'refused', url: target, message: egressRefusalMessage(no) });
            // What was typed before the address is a step before it.
            await page.commitTyping().catch(() => {});
            append({ kind: 'navigate', url: target });
            await page.navigate(target).catch((err: Error) => notice(`could not open ${target}: ${err.message.split('\n')[0]}`));
          })();
        }
        case 'extract': {
          const field = m.field;
          if (field === null) return void page.extract(null).catch(() => {});
          if (typeof field !== 'string' || !IDENTIFIER.test(field) || field.length > 64) {
            return sendJson({
              type: 'error',
              error: 'invalid_message',
              message: 'extract.field must be an identifier (letters, digits, _; not starting with a digit)',
            });
          }
          if (m.all !== undefined && typeof m.all !== 'boolean')
            return sendJson({ type: 'error', error: 'invalid_message', message: 'extract.all must be true or false' });
          const all = m.all === true;
          return void page.extract(field, { all }).then(
            () => sendJson({ type: 'extract_armed', field, all }),
            () => notice('extract mode could not be armed: wait for the page to load'),
          );
        }
        case 'resize': {
          const next = viewportOf(m.width, m.height);
          return void page.resize(next).then(
            () => sendJson({ type: 'viewport', ...next }),
            () => {},
          );
        }
        case 'files': {
          if (!chooser) return sendJson({ type: 'error', error: 'invalid_message', message: "no file chooser is open: click the page's file input first" });
          const list = m.files;
          if (!Array.isArray(list) || list.length === 0 || list.length > MAX_UPLOAD_FILES) {
            return sendJson({ type: 'error', error: 'invalid_message', message: `files must list 1 to ${MAX_UPLOAD_FILES} files {name, size}` });
          }
          const files: { name: string; size: number }[] = [];
          for (const f of list as { name?: unknown; size?: unknown }[]) {
            if (f === null || typeof f !== 'object' || !validFileName(f.name))
              return sendJson({ type: 'error', error: 'invalid_message', message: 'a file name is 1 to 200 characters, with no / \\ or control characters' });
            if (typeof f.size !== 'number' || !Number.isSafeInteger(f.size) || f.size < 0)
              return sendJson({ type: 'error', error: 'invalid_message', message: 'a file size is a whole number of bytes' });
            if (files.some((x) => x.name === f.name))
              return sendJson({ type: 'error', error: 'invalid_message', message: `two files are named ${JSON.stringify(f.name)}` });
            files.push({ name: f.name, size: f.size });
          }
          const total = files.reduce((n, f) => n + f.size, 0);
          if (total > MAX_UPLOAD_BYTES) {
            transfer = null;
            return sendJson({
              type: 'error',
              error: 'file_too_large',
              message: `the files are ${total} bytes: at most ${MAX_UPLOAD_BYTES} bytes (10 MiB) in all`,
            });
          }
          transfer = { files, total, chunks: [], received: 0 };
          if (total === 0) void finishUpload();
          return;
        }
        case 'file_data': {
          const t = transfer;
          if (!t) return sendJson({ type: 'error', error: 'invalid_message', message: 'file_data comes after a files message, for an open file chooser' });
          const text = m.data;
          if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
            transfer = null;
            return sendJson({
              type: 'error',
              error: 'invalid_message',
              message: 'file_data.data must be base64; the transfer was dropped: send the files again',
            });
          }
          const bytes = Buffer.from(text, 'base64');
          if (bytes.byteLength > MAX_FILE_CHUNK_BYTES || t.received + bytes.byteLength > t.total) {
            transfer = null;
            return sendJson({
              type: 'error',
              error: 'invalid_message',
              message: `more bytes than announced, or a chunk over ${MAX_FILE_CHUNK_BYTES} bytes: the transfer was dropped`,
            });
          }
          t.chunks.push(bytes);
          t.received += bytes.byteLength;
          if (t.received === t.total) void finishUpload();
          return;
        }
        case 'file_cancel':
          transfer = null;
          chooser = null;
          page.cancelFileChooser();
          return;
        case 'stop':
          // The end of recording (the session stays open): the typing not committed yet is stored,
          // then the viewer is told what the capture is now.
          return void (async () => {
            await page.commitTyping().catch(() => {});
            await chain;
            const now = await storage.authoring.get(orgId, automationId);
            sendJson({ type: 'stopped', captured_ops: now?.captured_ops ?? [], input_slots: now?.input_slots ?? [], secret_slots: now?.secret_slots ?? [] });
          })().catch((err) => {
            logger.error(`[flowctl] [studio] stop: ${(err as Error)?.stack ?? String(err)}`);
            sendJson({ type: 'error', error: 'internal_error', message: 'the capture could not be read' });
          });
        case 'ping':
          return sendJson({ type: 'pong' });
        default:
          return sendJson({ type: 'error', error: 'invalid_message', message: `unknown message type ${JSON.stringify(String(m.type).slice(0, 40))}` });
      }
    });
  }

  return {
    route,
    active: () => lives.size,
    async dispose() {
      for (const live of [...lives]) {
        live.seal();
        live.close(1001, 'shutting down');
        await live.page?.close().catch(() => {});
      }
      lives.clear();
    },
  };
}
