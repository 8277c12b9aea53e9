import { z } from 'zod';

/**
 * The studio's WebSocket protocol (`GET /api/authoring/{id}/live`, docs/hosted-api.md "Studio (live
 * capture)"): every JSON text message in each direction, as discriminated unions on `type`. The
 * service sends only `StudioServerMessage`s and the web app only `StudioClientMessage`s; both import
 * this file (the web app bundles it), so neither side can drift from the other.
 *
 * The schemas give the shapes. The limits the service enforces with their own error messages (sizes,
 * identifiers, URL schemes, file names) stay with its checks in live.ts: a message of the right shape
 * may still be answered `{type:"error", error:"invalid_message"}`.
 */

/** An op of the engine's capture format (docs/recordings.md), as stored in `captured_ops`. */
export const CapturedOp = z.record(z.string(), z.unknown());
const Viewport = z.object({ width: z.number(), height: z.number() });
const Slots = z.array(z.string());

// Viewer -> server.

export const StudioClientMessage = z.discriminatedUnion('type', [
  /** Mouse input at page coordinates (CDP `Input.dispatchMouseEvent`); `button` defaults to left. */
  z.object({
    type: z.literal('mouse'),
    action: z.enum(['down', 'up', 'move', 'wheel']),
    x: z.number(),
    y: z.number(),
    button: z.enum(['left', 'middle', 'right', 'none']).optional(),
    clickCount: z.number().optional(),
    deltaX: z.number().optional(),
    deltaY: z.number().optional(),
    modifiers: z.number().optional(),
  }),
  /** A key by its `KeyboardEvent.key` name (`Enter`, `a`). */
  z.object({ type: z.literal('key'), action: z.enum(['down', 'up']), key: z.string() }),
  /** Typed characters or a paste (CDP `Input.insertText`). */
  z.object({ type: z.literal('text'), text: z.string() }),
  /** The address bar: go to an absolute http(s) URL (captured as a `navigate` op). */
  z.object({ type: z.literal('navigate'), url: z.string() }),
  /** The end of recording: the typing not committed yet is stored, then `stopped` answers. */
  z.object({ type: z.literal('stop') }),
  /** Arm extract mode for output field `field` (`all`: a list); `field: null` disarms. */
  z.object({ type: z.literal('extract'), field: z.string().nullable(), all: z.boolean().optional() }),
  /** A new viewport for the page; answered `viewport`. */
  z.object({ type: z.literal('resize'), width: z.number(), height: z.number() }),
  /** The files for the open chooser, announced before their bytes. */
  z.object({ type: z.literal('files'), files: z.array(z.object({ name: z.string(), size: z.number() })) }),
  /** The next bytes (base64) of the announced files, in order. */
  z.object({ type: z.literal('file_data'), data: z.string() }),
  /** Forget the open chooser and any transfer: nothing is captured. */
  z.object({ type: z.literal('file_cancel') }),
  /** Answered `pong` (and keeps the session from idling). */
  z.object({ type: z.literal('ping') }),
]);
export type StudioClientMessage = z.infer<typeof StudioClientMessage>;

// Server -> viewer.

export const StudioServerMessage = z.discriminatedUnion('type', [
  /** The page is open (re-record: replayed): input may be sent from now on. */
  z.object({
    type: z.literal('ready'),
    automation_id: z.string(),
    site: z.string(),
    viewport: Viewport,
    captured_ops: z.array(CapturedOp),
    secret_slots: Slots,
    input_slots: Slots,
    rerecord: z.object({ step: z.string(), index: z.number() }).optional(),
  }),
  /** A screencast frame: `data` is a base64 JPEG of a page `width` x `height`. */
  z.object({ type: z.literal('frame'), data: z.string(), width: z.number(), height: z.number() }),
  /** The page took the viewport a `resize` asked for. */
  z.object({ type: z.literal('viewport'), width: z.number(), height: z.number() }),
  /**
   * An op was captured and stored at `index` of `captured_ops`; `replaced` when it took the place of
   * the op there (re-record), then with the slot lists left after it.
   */
  z.object({
    type: z.literal('op'),
    op: CapturedOp,
    index: z.number(),
    replaced: z.literal(true).optional(),
    input_slots: Slots.optional(),
    secret_slots: Slots.optional(),
  }),
  /** Re-record: step `step` of `of` (FlowSpec step id `id`) is being replayed. */
  z.object({ type: z.literal('replaying'), step: z.number(), of: z.number(), id: z.string() }),
  /** Re-record: all `of` steps before the drifted one were replayed. */
  z.object({ type: z.literal('replayed'), of: z.number() }),
  /** Re-record: the replay stopped at that step with the tool's error code; a `closed` follows. */
  z.object({
    type: z.literal('replay_failed'),
    step: z.number(),
    of: z.number(),
    id: z.string().nullable(),
    code: z.string(),
    message: z.string(),
  }),
  /** The page navigated. */
  z.object({ type: z.literal('url'), url: z.string() }),
  /** The page's document loaded: `complete: false` at DOMContentLoaded, `true` at the load event. */
  z.object({ type: z.literal('loaded'), url: z.string(), complete: z.boolean() }),
  /** Extract mode is on for `field` (`all`: a list). */
  z.object({ type: z.literal('extract_armed'), field: z.string(), all: z.boolean() }),
  /** Extract mode ended without a pick (Escape in the page, or a pick with no locator). */
  z.object({ type: z.literal('extract_cancelled') }),
  /** The answer to `stop`: the capture as it is now, the last typing stored. */
  z.object({ type: z.literal('stopped'), captured_ops: z.array(CapturedOp), input_slots: Slots, secret_slots: Slots }),
  /** The page opened a file chooser: answer with `files` and `file_data`, or `file_cancel`. */
  z.object({ type: z.literal('file_chooser'), multiple: z.boolean(), accept: z.string(), max_bytes: z.number(), max_files: z.number() }),
  /** The chosen files reached the page and the session; the `upload` op follows. */
  z.object({
    type: z.literal('files_received'),
    files: z.array(z.object({ name: z.string(), digest: z.string(), size: z.number() })),
  }),
  /** Something not captured, in words. */
  z.object({ type: z.literal('notice'), message: z.string() }),
  /** A typed address the egress rule refuses: not opened, not captured. */
  z.object({ type: z.literal('refused'), url: z.string(), message: z.string() }),
  /** A bad viewer message (the session goes on), or `egress_denied` before any page (a `closed` follows). */
  z.object({ type: z.literal('error'), error: z.string(), message: z.string() }),
  /** The session ends (`idle`, `not_editable`, `unauthenticated`, `browser_gone`, `replay_failed`, ...). */
  z.object({ type: z.literal('closed'), reason: z.string(), message: z.string() }),
  /** The answer to `ping`. */
  z.object({ type: z.literal('pong') }),
]);
export type StudioServerMessage = z.infer<typeof StudioServerMessage>;

/** One server message of a given type (`StudioServerMessageOf<'op'>`). */
export type StudioServerMessageOf<T extends StudioServerMessage['type']> = Extract<StudioServerMessage, { type: T }>;
/** One viewer message of a given type (`StudioClientMessageOf<'mouse'>`). */
export type StudioClientMessageOf<T extends StudioClientMessage['type']> = Extract<StudioClientMessage, { type: T }>;
