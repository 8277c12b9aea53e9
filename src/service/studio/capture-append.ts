import { checkOps, IDENTIFIER } from '../../record/ops.js';
import type { StudioAction } from '../../ports/studio.js';
import { sessionFromCookie } from '../auth/guards.js';
import { orgSecretValues } from '../domain/publish.js';
import { findOrgSecrets } from '../domain/secret-leak.js';
import { withCaptureLock } from './capture-lock.js';
import { appendCursor, usedSlots, type CaptureCursor } from './rerecord.js';
import type { StudioSession } from './session.js';

/**
 * Capture to recording: what the page reports (a click, a fill, a pick) becomes an op of the engine's
 * format (docs/recordings.md), appended to the session's captured_ops (the PATCH route's storage) one
 * at a time, in the order reported, each checked first (its shape and size, the opener's session
 * still an owner's, the authoring session still editable, no org secret typed in the clear).
 */

const MAX_OP_BYTES = 16 * 1024;

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

/** An upload's file, attached to the session with its op. */
export interface CapturedFile {
  name: string;
  digest: string;
  bytes: Uint8Array;
}

export interface CaptureAppender {
  /** Append `op` (a fill of a password field names its `secretSlot`; an upload brings its `files`). */
  append(op: Record<string, unknown>, secretSlot?: string, files?: CapturedFile[]): void;
  /** Where ops go: the end, or (re-record) the drifted step. */
  cursor: CaptureCursor;
  /** The page's action, as an op appended (or a notice, or the viewer told extract mode ended). */
  onAction(action: StudioAction): void;
}

export function createCaptureAppender(session: StudioSession): CaptureAppender {
  const { deps, orgId, automationId } = session;
  const { storage, logger } = deps;
  // Ops are appended one at a time, in the order the page reported them (re-record: at the drifted step).
  const appender: CaptureAppender = {
    cursor: appendCursor,
    append,
    onAction,
  };

  function append(op: Record<string, unknown>, secretSlot?: string, files?: CapturedFile[]): void {
    session.appends = session.appends.then(() =>
      withCaptureLock(automationId, async () => {
        if (session.sealed) return;
        const { issues } = checkOps([op]);
        if (issues.length > 0 || JSON.stringify(op).length > MAX_OP_BYTES) {
          session.notice(`an action could not be captured (${issues[0]?.message ?? 'too large'})`);
          return;
        }
        // The caller still holds the upgrade's session, as an owner of this org (a logout, a revoked
        // session or a demotion ends the capture).
        const auth = await sessionFromCookie(session.cookie, deps);
        if (typeof auth === 'string' || auth.role !== 'owner' || auth.org.id !== orgId) {
          session.send({
            type: 'closed',
            reason: 'unauthenticated',
            message: 'the session that opened the studio ended (logged out, revoked, or no longer an owner)',
          });
          session.close(4001, 'unauthenticated');
          return;
        }
        const authoring = await storage.authoring.get(orgId, automationId);
        if (authoring?.state !== 'editing') {
          session.send({ type: 'closed', reason: 'not_editable', message: 'the session is no longer editable (published or deleted)' });
          session.close(4009, 'not_editable');
          return;
        }
        const leaks = findOrgSecrets([op], 'ops', await orgSecretValues(deps, storage, orgId));
        if (leaks.length > 0) {
          session.notice(`not captured: the value typed into a field is ${leaks[0]!.what}; type secrets into a password field (a secret slot)`);
          return;
        }
        const replacing = appender.cursor.replacing(authoring.captured_ops);
        if (
          op.kind === 'extract' &&
          authoring.captured_ops.some(
            (o) => o !== replacing && (o as { kind?: string; name?: string }).kind === 'extract' && (o as { name?: string }).name === op.name,
          )
        ) {
          session.notice(`an output field "${String(op.name)}" is already extracted: pick another name`);
          return;
        }
        if (op.kind === 'navigate') {
          const last = appender.cursor.previous(authoring.captured_ops) as { kind?: string; url?: string } | undefined;
          if (last?.kind === 'navigate' && last.url === op.url) return;
        }
        let secretSlots = authoring.secret_slots;
        if (secretSlots !== undefined && secretSlot !== undefined && !secretSlots.includes(secretSlot)) {
          if (authoring.input_slots.includes(secretSlot)) {
            session.notice(`the password field's slot "${secretSlot}" is already an input slot: not captured`);
            return;
          }
          secretSlots = [...secretSlots, secretSlot];
        }
        // An upload's files are attached to the session first, as PUT /api/authoring/{id}/files/{name} does.
        let attached = authoring.files;
        for (const f of files ?? []) {
          await storage.authoring.putFile(orgId, automationId, f);
          attached = [...attached.filter((x) => x.name !== f.name), { name: f.name, digest: f.digest, size: f.bytes.byteLength }].sort((a, b) =>
            a.name.localeCompare(b.name),
          );
        }
        const placed = appender.cursor.place(authoring.captured_ops, op);
        // A replaced op's slot that no op uses any more leaves the slot lists (publish refuses unused slots).
        const slots = placed.replaced
          ? { secret_slots: usedSlots(placed.ops, secretSlots), input_slots: usedSlots(placed.ops, authoring.input_slots) }
          : { secret_slots: secretSlots };
        await storage.authoring.update(orgId, automationId, {
          captured_ops: placed.ops,
          ...slots,
          ...(files ? { files: attached } : {}),
          updated_at: deps.clock.now(),
        });
        placed.commit();
        if (files) session.send({ type: 'files_received', files: files.map((f) => ({ name: f.name, digest: f.digest, size: f.bytes.byteLength })) });
        session.send({
          type: 'op',
          op,
          index: placed.index,
          ...(placed.replaced ? { replaced: true, input_slots: slots.input_slots } : {}),
          secret_slots: slots.secret_slots,
        });
      }),
    );
    session.appends = session.appends.catch((err) => {
      logger.error(`[flowctl] [studio] append: ${(err as Error)?.stack ?? String(err)}`);
      session.notice('an action could not be stored');
    });
  }

  function onAction(action: StudioAction): void {
    if (action.kind === 'refused') return session.notice(String(action.message).slice(0, 300));
    if (action.kind === 'click') return append({ kind: 'click', target: action.target });
    if (action.kind === 'press') return append({ kind: 'press', key: action.key, ...(action.target !== undefined ? { target: action.target } : {}) });
    if (action.kind === 'select') return append({ kind: 'select', target: action.target, value: action.value });
    // The viewer un-arms its button (Escape in the page, or a pick that could not be named).
    if (action.kind === 'extract_cancelled') return session.send({ type: 'extract_cancelled' });
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
  }

  return appender;
}
