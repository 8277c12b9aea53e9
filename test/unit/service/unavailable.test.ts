import { describe, expect, it } from 'vitest';
import { FlowError } from '../../../src/errors.js';
import { isUnavailable, serviceErrorBody, serviceErrorResponse, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../../src/service/errors.js';
import { isConnectionError } from '../../../src/util/connection-errors.js';

/** The one mapping of a database outage to 503 `unavailable` (docs/deploy.md, "Database outage"). */

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('storage connection errors are 503 unavailable with Retry-After', () => {
  const outages: [string, unknown][] = [
    ['ECONNREFUSED', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['57P01 admin_shutdown', pgError('57P01', 'terminating connection due to administrator command')],
    ['57P03 cannot_connect_now', pgError('57P03', 'the database system is starting up')],
    ['08006 connection_failure', pgError('08006', 'connection failure')],
    ['Connection terminated', new Error('Connection terminated unexpectedly')],
    ['pg connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg-boss worker error (a plain object)', { message: 'connect ECONNREFUSED 127.0.0.1:5432 (Queue: q)', code: 'ECONNREFUSED' }],
    [
      'AggregateError of refusals',
      Object.assign(
        new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' }), Object.assign(new Error('b'), { code: 'ECONNREFUSED' })], ''),
        {},
      ),
    ],
    [
      'FlowError db_unreachable',
      new FlowError('db_unreachable', '[flowctl] [storage-sql] cannot use Postgres at 10.0.0.5:5432, database "app": connect ECONNREFUSED'),
    ],
    [
      'db_error wrapping 57P01',
      new FlowError('db_error', '[flowctl] [storage-sql] users.get failed: terminating connection', {
        cause: pgError('57P01', 'terminating connection due to administrator command'),
      }),
    ],
    ['internal_error wrapping db_unreachable', new FlowError('internal_error', 'x', { cause: new FlowError('db_unreachable', 'y') })],
  ];
  for (const [name, err] of outages) {
    it(name, async () => {
      expect(isUnavailable(err)).toBe(true);
      const { status, body } = serviceErrorBody(err);
      expect(status).toBe(503);
      expect(body.error).toBe('unavailable');
      // The answer names no host, port or database.
      expect(String(body.message)).not.toMatch(/5432|10\.0\.0\.5|app|ECONN/);
      const res = serviceErrorResponse(err);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      expect(await res.json()).toEqual(body);
    });
  }

  it('other errors keep their answers: a bug is 500, a known code its status, constraint violations are not outages', () => {
    expect(serviceErrorBody(new Error('boom'))).toEqual({ status: 500, body: { error: 'internal_error', message: 'internal error' } });
    expect(serviceErrorBody(new FlowError('not_found', 'nope')).status).toBe(404);
    expect(isUnavailable(pgError('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isUnavailable(pgError('57014', 'canceling statement due to statement timeout'))).toBe(false);
    expect(isUnavailable(new FlowError('db_error', 'x', { cause: pgError('42P01', 'relation does not exist') }))).toBe(false);
    expect(serviceErrorResponse(new Error('boom')).headers.get('retry-after')).toBeNull();
    // queue_unavailable (the run was not queued) is retryable too.
    expect(serviceErrorResponse(new FlowError('queue_unavailable', 'x')).headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    expect(isConnectionError(null)).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
  });

  it('a cause chain that loops ends', () => {
    const a: { message: string; cause?: unknown } = { message: 'a' };
    a.cause = a;
    expect(isUnavailable(a)).toBe(false);
  });
});
