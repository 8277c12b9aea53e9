import type { Kysely } from 'kysely';
import { FlowError, isFlowError, prefixed } from '../../../src/errors.js';
import { constraintOf, errorCode, isConnectionError } from '../sql-errors.js';
import type { ServiceDatabase } from './service-schema.js';

/** The service tables' kysely: the storage's, or one transaction of it (`isTransaction` tells). */
export type ServiceDb = Kysely<ServiceDatabase>;

/** What every store of the SQL service storage shares (the service's sql-context.ts). */
export interface ServiceContext {
  /** The storage's kysely (schema-qualified when a schema is configured), or a transaction's. */
  readonly db: ServiceDb;
  /** The configured Postgres schema, for raw SQL (sql-values.ts `table`). */
  readonly schema: string | undefined;
  /**
   * Runs `fn` (after init, outside a transaction), turning any failure into a FlowError with a code:
   * `db_unreachable`, `db_error`, or the FlowError `fn` threw.
   */
  guard<T>(op: string, fn: () => Promise<T>): Promise<T>;
}

export const COMPONENT = 'storage-sql';

export function conflict(err: unknown, field: string): never {
  throw new FlowError('conflict', prefixed(COMPONENT, `${field} already exists`), { data: { field }, cause: err });
}

const isUniqueViolation = (err: unknown) => errorCode(err) === '23505';

/**
 * Run an insert; a unique violation becomes FlowError `conflict` with the field `fieldOf` names for
 * the violated constraint (the port's codes: `data.field` says which value is taken).
 */
export async function insertUnique(insert: () => Promise<unknown>, fieldOf: (constraint: string) => string): Promise<void> {
  try {
    await insert();
  } catch (err) {
    if (isUniqueViolation(err)) conflict(err, fieldOf(constraintOf(err) ?? ''));
    throw err;
  }
}

/** The `message` of an error (or of any object carrying one). */
function messageOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string' ? err.message : undefined;
}

/** A failure of `op` as a FlowError: its own if it is one, `db_unreachable` or `db_error` otherwise. */
export function wrap(op: string, err: unknown): never {
  if (isFlowError(err)) throw err;
  // No usable connection (the database restarting, unreachable): the engine storage's code for it.
  if (isConnectionError(err)) {
    throw new FlowError('db_unreachable', prefixed(COMPONENT, `${op}: cannot reach the database: ${messageOf(err) || errorCode(err) || String(err)}`), {
      data: { sqlstate: errorCode(err) },
      cause: err,
    });
  }
  throw new FlowError('db_error', prefixed(COMPONENT, `${op} failed: ${messageOf(err) ?? String(err)}`), { cause: err });
}

/** Run `fn` in the context's transaction, or (outside one) in a transaction opened for this call. */
export function inTx<T>(ctx: ServiceContext, fn: (tx: ServiceDb) => Promise<T>): Promise<T> {
  return ctx.db.isTransaction ? fn(ctx.db) : ctx.db.transaction().execute(fn);
}

/**
 * Lock an org's row until the transaction ends: writes that must see every earlier write of the org
 * (the last-owner check, an audit append) queue behind each other, on Postgres across processes;
 * PGlite has one connection. `for no key update`, not `for update`: a row inserted with a foreign key
 * to the org (a secret, a key, a member) holds `for key share` on the org's row until its transaction
 * ends, which `for update` waits for; two transactions that each insert such a row and then lock the
 * org would wait for each other (a deadlock, seen on Postgres with concurrent audited writes).
 */
export async function lockOrg(tx: ServiceDb, orgId: string): Promise<void> {
  await tx.selectFrom('svc_orgs').select('id').where('id', '=', orgId).forNoKeyUpdate().execute();
}
