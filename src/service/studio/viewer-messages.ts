import type { RawData } from 'ws';
import type { StudioBrowser, StudioInput, StudioPage, StudioViewport } from '../../ports/studio.js';
import { IDENTIFIER } from '../../record/ops.js';
import type { CaptureAppender } from './capture-append.js';
import { StudioClientMessage, type StudioClientMessageOf } from './protocol.js';
import { egressRefusalMessage, type StudioSession } from './session.js';
import type { StudioUploads } from './uploads.js';

/**
 * The viewer's side of a live studio socket: every message is rate-limited, parsed with the
 * protocol (protocol.ts) and dispatched to the page, the capture or the uploads. A bad message is
 * answered `{type: "error", error: "invalid_message", message}` and the session goes on.
 */

/** Viewer messages taken per second; more are dropped (one `rate_limited` error per second says so). */
export const MAX_MESSAGES_PER_SECOND = 400;
const DEFAULT_VIEWPORT: StudioViewport = { width: 1280, height: 720 };
const MESSAGE_TYPES: ReadonlySet<unknown> = new Set(StudioClientMessage.options.map((o) => o.shape.type.value));

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(n)));

/** The viewport asked for, within bounds; the default for what is no positive number. */
export function viewportOf(width: unknown, height: unknown): StudioViewport {
  const w = Number(width);
  const h = Number(height);
  return {
    width: Number.isFinite(w) && w > 0 ? clamp(w, 320, 1920) : DEFAULT_VIEWPORT.width,
    height: Number.isFinite(h) && h > 0 ? clamp(h, 240, 1200) : DEFAULT_VIEWPORT.height,
  };
}

/** The page's input for a mouse, key or text message (counts clamped), or what is wrong with it. */
function inputOf(m: StudioClientMessageOf<'mouse' | 'key' | 'text'>): StudioInput | string {
  if (m.type === 'mouse') {
    return {
      type: 'mouse',
      action: m.action,
      x: m.x,
      y: m.y,
      button: m.button ?? 'left',
      ...(m.clickCount !== undefined ? { clickCount: clamp(m.clickCount, 1, 3) } : {}),
      ...(m.deltaX !== undefined ? { deltaX: m.deltaX } : {}),
      ...(m.deltaY !== undefined ? { deltaY: m.deltaY } : {}),
      ...(m.modifiers !== undefined ? { modifiers: clamp(m.modifiers, 0, 15) } : {}),
    };
  }
  if (m.type === 'key') {
    if (m.key.length === 0 || m.key.length > 32) return 'key.key must be a key name (KeyboardEvent.key)';
    return { type: 'key', action: m.action, key: m.key };
  }
  if (m.text.length > 10_000) return 'text.text must be a string of at most 10000 characters';
  return { type: 'text', text: m.text };
}

const EXTRACT_FIELD = 'extract.field must be an identifier (letters, digits, _; not starting with a digit)';

/** What is wrong with a message of a known type that the protocol refuses: the field at fault, in words. */
function malformed(type: unknown, field: PropertyKey | undefined): string {
  switch (type) {
    case 'mouse':
      if (field === 'action') return 'mouse.action must be down, up, move or wheel';
      if (field === 'x' || field === 'y') return 'mouse.x and mouse.y must be numbers';
      if (field === 'button') return 'mouse.button must be left, middle, right or none';
      return `mouse.${String(field)} must be a number`;
    case 'key':
      return field === 'action' ? 'key.action must be down or up' : 'key.key must be a key name (KeyboardEvent.key)';
    case 'text':
      return 'text.text must be a string of at most 10000 characters';
    case 'navigate':
      return 'navigate.url must be an absolute http(s) URL';
    case 'extract':
      return field === 'all' ? 'extract.all must be true or false' : EXTRACT_FIELD;
    case 'resize':
      return 'resize.width and resize.height must be numbers';
    default:
      return `a ${String(type)} message is malformed`;
  }
}

/** Take the viewer's messages for the session's open page. */
export function listenToViewer(
  session: StudioSession,
  page: StudioPage,
  parts: { browser: StudioBrowser; capture: CaptureAppender; uploads: StudioUploads },
): void {
  const { deps, orgId, automationId, ws } = session;
  const { storage, logger } = deps;
  const { browser, capture, uploads } = parts;
  const invalid = (message: string) => session.send({ type: 'error', error: 'invalid_message', message });

  let windowStart = Date.now();
  let inWindow = 0;
  const limited = () => {
    if (++inWindow <= MAX_MESSAGES_PER_SECOND) return false;
    if (inWindow === MAX_MESSAGES_PER_SECOND + 1)
      session.send({
        type: 'error',
        error: 'rate_limited',
        message: `more than ${MAX_MESSAGES_PER_SECOND} messages in a second: the rest of this second is dropped`,
      });
    return true;
  };

  ws.on('message', (data: RawData, isBinary: boolean) => {
    session.touch();
    const now = Date.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      inWindow = 0;
    }
    if (isBinary) return limited() ? undefined : invalid('messages are JSON text');
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(data.toString()) as Record<string, unknown>;
      if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new Error('not an object');
    } catch {
      return limited() ? undefined : invalid('a message is a JSON object with a type');
    }
    // The chunks of a file transfer in progress are bounded by its announced size, not by the message rate.
    if (!(m.type === 'file_data' && uploads.transferring()) && limited()) return;
    if (!MESSAGE_TYPES.has(m.type)) return invalid(`unknown message type ${JSON.stringify(String(m.type).slice(0, 40))}`);
    const parsed = StudioClientMessage.safeParse(m);
    if (parsed.success) return dispatch(parsed.data);
    // The uploads check their messages in full themselves: whether a chooser or transfer is open comes first.
    if (m.type === 'files') return uploads.files(m.files);
    if (m.type === 'file_data') return uploads.fileData(m.data);
    return invalid(malformed(m.type, parsed.error.issues[0]?.path[0]));
  });

  function dispatch(m: StudioClientMessage): void {
    switch (m.type) {
      case 'mouse':
      case 'key':
      case 'text': {
        const input = inputOf(m);
        if (typeof input === 'string') return invalid(input);
        return page.input(input);
      }
      case 'navigate': {
        let url: URL;
        try {
          url = new URL(m.url);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
        } catch {
          return invalid(malformed('navigate', 'url'));
        }
        const target = url.href;
        return void (async () => {
          // A typed address the egress rule refuses: said, not captured, not opened.
          const no = await browser.refusal?.(target).catch(() => undefined);
          if (no) return session.send({ type: 'refused', url: target, message: egressRefusalMessage(no) });
          // What was typed before the address is a step before it.
          await page.commitTyping().catch(() => {});
          capture.append({ kind: 'navigate', url: target });
          await page.navigate(target).catch((err: Error) => session.notice(`could not open ${target}: ${err.message.split('\n')[0]}`));
        })();
      }
      case 'extract': {
        const field = m.field;
        if (field === null) return void page.extract(null).catch(() => {});
        if (!IDENTIFIER.test(field) || field.length > 64) return invalid(EXTRACT_FIELD);
        const all = m.all === true;
        return void page.extract(field, { all }).then(
          () => session.send({ type: 'extract_armed', field, all }),
          () => session.notice('extract mode could not be armed: wait for the page to load'),
        );
      }
      case 'resize': {
        const next = viewportOf(m.width, m.height);
        return void page.resize(next).then(
          () => session.send({ type: 'viewport', ...next }),
          () => {},
        );
      }
      case 'files':
        return uploads.files(m.files);
      case 'file_data':
        return uploads.fileData(m.data);
      case 'file_cancel':
        return uploads.cancel();
      case 'stop':
        // The end of recording (the session stays open): the typing not committed yet is stored,
        // then the viewer is told what the capture is now.
        return void (async () => {
          await page.commitTyping().catch(() => {});
          await session.appends;
          const now = await storage.authoring.get(orgId, automationId);
          session.send({
            type: 'stopped',
            captured_ops: capturedOps(now?.captured_ops),
            input_slots: now?.input_slots ?? [],
            secret_slots: now?.secret_slots ?? [],
          });
        })().catch((err) => {
          logger.error(`[flowctl] [studio] stop: ${(err as Error)?.stack ?? String(err)}`);
          session.send({ type: 'error', error: 'internal_error', message: 'the capture could not be read' });
        });
      case 'ping':
        return session.send({ type: 'pong' });
    }
  }
}

/** The stored capture's ops as the protocol sends them (each an op object: storage keeps what checkOps took). */
export function capturedOps(ops: unknown[] | undefined): Record<string, unknown>[] {
  return (ops ?? []) as Record<string, unknown>[];
}
