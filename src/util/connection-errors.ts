/**
 * Whether an error means "no usable database connection right now", for any storage that speaks
 * the Postgres protocol (pg, PGlite) and for the errors they wrap. One classifier, used by the SQL
 * storage adapter (which turns these into FlowError `db_unreachable`) and by the hosted service
 * (which answers them 503 `unavailable`, docs/deploy.md, "Database outage").
 */

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);

const CONNECTION_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection is closed|Client has encountered a connection error|Client was closed and is not queryable/i;

/** Node's error code (ECONNREFUSED...) or the SQLSTATE of a pg or PGlite error. */
function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Sockets (refused, reset, unreachable), pg's connect timeout and "Connection terminated", SQLSTATE
 * class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up, shutting down), 3D000 (no such database), class 28
 * (authentication). AggregateError (happy eyeballs over several addresses) counts when every one of
 * its errors does.
 */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof AggregateError && err.errors.length > 0 && err.errors.every(isConnectionError)) return true;
  const code = codeOf(err);
  if (code !== undefined) {
    if (SOCKET_CODES.has(code) || code.startsWith('08') || code.startsWith('28') || code === '3D000') return true;
    if (code === '57P01' || code === '57P02' || code === '57P03') return true;
  }
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}
