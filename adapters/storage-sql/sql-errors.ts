import { FlowError, isFlowError, prefixed } from '../../src/errors.js';
import { isConnectionError } from '../../src/util/connection-errors.js';

/** The one classifier of "no usable connection" (src/util/connection-errors.ts). */
export { isConnectionError };

/** Where the storage points, for error messages. Never holds a password. */
export type SqlTarget = { driver: 'postgres'; host: string; port: number; database: string; user?: string } | { driver: 'pglite'; dataDir?: string };

export function describeTarget(target: SqlTarget): string {
  if (target.driver === 'pglite') return target.dataDir ? `PGlite in ${target.dataDir}` : 'PGlite in memory';
  const user = target.user ? ` as user "${target.user}"` : '';
  return `Postgres at ${target.host}:${target.port}, database "${target.database}"${user}`;
}

/** The SQLSTATE of a pg or PGlite error, or Node's error code (ECONNREFUSED...) for socket errors. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function constraintOf(err: unknown): string | undefined {
  const c = (err as { constraint?: unknown } | null)?.constraint;
  return typeof c === 'string' ? c : undefined;
}

/** Human reason for a connection failure; AggregateError (happy eyeballs) has an empty message. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = errorCode(err);
  if (message) return message;
  return code ?? 'unknown error';
}

/** Remove every occurrence of `secret` (and its URL-encoded form) from a message. */
export function scrub(text: string, secret: string | undefined): string {
  if (!secret) return text;
  let out = text.split(secret).join('***');
  const encoded = encodeURIComponent(secret);
  if (encoded !== secret) out = out.split(encoded).join('***');
  return out;
}

export function unreachable(target: SqlTarget, err: unknown, secret: string | undefined): FlowError {
  const reason = scrub(reasonOf(err), secret);
  const data = { ...target, reason, sqlstate: errorCode(err) };
  return new FlowError('db_unreachable', prefixed('storage-sql', `cannot use ${describeTarget(target)}: ${reason}`), { data });
}

/** Why a check constraint refused a row, by the constraint names Postgres gives migrations.ts's checks. */
const CHECK_MEANING: Record<string, string> = {
  runs_id_check: 'a run id must be a lowercase uuid',
  runs_flow_digest_check: 'flow_digest must be sha256:<64 hex>',
  runs_status_check: 'status must be one of pending, running, succeeded, failed, canceled',
  specs_digest_check: 'a spec digest must be sha256:<64 hex>',
  deploys_digest_check: 'a deploy digest must be sha256:<64 hex>',
  artifacts_digest_check: 'an artifact digest must be sha256:<64 hex>',
  journal_seq_check: 'seq must be a non-negative integer',
  journal_entry_seq: "an entry's seq must equal its position",
};

/**
 * Turn any error of a storage operation into a FlowError with a code. FlowErrors pass through;
 * callers handle the errors that have a port-level meaning (unique keys) before this.
 */
export function toFlowError(err: unknown, op: string, target: SqlTarget, secret: string | undefined): FlowError {
  if (isFlowError(err)) return err;
  if (isConnectionError(err)) return unreachable(target, err, secret);
  const code = errorCode(err);
  const message = scrub(err instanceof Error ? err.message : String(err), secret);
  const constraint = constraintOf(err);
  if (code === '23514' || code === '23502' || code === '22P02' || code === '22003') {
    const why = constraint ? CHECK_MEANING[constraint] : undefined;
    return new FlowError('invalid_record', prefixed('storage-sql', `${op}: ${why ?? message}`), {
      data: { sqlstate: code, constraint, detail: message },
      cause: err,
    });
  }
  if (code === '22P05' || code === '54000') {
    // jsonb cannot hold \u0000 in strings; Postgres limits a jsonb value to 255 MiB.
    return new FlowError('unsupported_value', prefixed('storage-sql', `${op}: ${message}`), { data: { sqlstate: code }, cause: err });
  }
  return new FlowError('db_error', prefixed('storage-sql', `${op} failed on ${describeTarget(target)}: ${message}`), {
    data: { sqlstate: code },
    cause: err,
  });
}
