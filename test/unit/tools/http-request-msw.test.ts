import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FlowError } from '../../../src/errors.js';
import { httpRequest } from '../../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';

// The error paths of http/request with msw handlers: timeouts, connection resets, 5xx.
const API = 'http://api.flowctl.test';
/** Called when a /slow request reaches its handler: tests act on that event instead of after a delay. */
let onSlow: (() => void) | undefined;
const server = setupServer(
  http.get(`${API}/slow`, async () => {
    onSlow?.();
    await delay('infinite');
    return HttpResponse.json({ never: true });
  }),
  http.get(`${API}/reset`, () => HttpResponse.error()),
  http.get(`${API}/unavailable`, () => HttpResponse.json({ error: 'down' }, { status: 503 })),
  http.post(`${API}/conflict`, () => HttpResponse.text('conflict', { status: 409 })),
  http.get(`${API}/ok`, ({ request }) => HttpResponse.json({ auth: request.headers.get('authorization') })),
);

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

describe('http/request error paths (msw)', () => {
  it('answers from a handler (sanity: msw is intercepting)', async () => {
    const ctx = createTestToolContext();
    expect(await httpRequest.run({ url: `${API}/ok`, headers: { authorization: 'Bearer x' } }, ctx)).toMatchObject({ status: 200, body: { auth: 'Bearer x' } });
    expect(ctx.effects).toEqual([{ kind: 'net', target: 'api.flowctl.test' }]);
  });

  it('times out with http_timeout (retryable)', async () => {
    const err = await httpRequest.run({ url: `${API}/slow`, timeout_ms: 150 }, createTestToolContext()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlowError);
    expect(err).toMatchObject({ code: 'http_timeout', data: { retryable: true, timeout_ms: 150 } });
  });

  it('maps a connection reset to http_network (retryable)', async () => {
    await expect(httpRequest.run({ url: `${API}/reset` }, createTestToolContext())).rejects.toMatchObject({
      code: 'http_network',
      data: { retryable: true },
    });
  });

  it('maps 5xx to a retryable http_status and 4xx to a final one', async () => {
    await expect(httpRequest.run({ url: `${API}/unavailable` }, createTestToolContext())).rejects.toMatchObject({
      code: 'http_status',
      data: { status: 503, retryable: true, body: { error: 'down' } },
    });
    await expect(httpRequest.run({ method: 'POST', url: `${API}/conflict` }, createTestToolContext())).rejects.toMatchObject({
      code: 'http_status',
      data: { status: 409, retryable: false, body: 'conflict' },
    });
  });

  it('passes the step abort reason through when ctx.signal aborts first', async () => {
    const controller = new AbortController();
    const reason = new FlowError('step_timeout', 'the step timed out');
    const held = new Promise<void>((resolve) => (onSlow = resolve));
    const call = httpRequest.run({ url: `${API}/slow`, timeout_ms: 60_000 }, createTestToolContext({ signal: controller.signal }));
    // Abort while the request is in flight (its handler holds it forever), long before timeout_ms.
    await held;
    onSlow = undefined;
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });

  it('turns a handler swapped in at runtime into the same errors (reset on POST)', async () => {
    server.use(http.post(`${API}/conflict`, () => HttpResponse.error()));
    await expect(httpRequest.run({ method: 'POST', url: `${API}/conflict`, json: { a: 1 } }, createTestToolContext())).rejects.toMatchObject({
      code: 'http_network',
    });
  });
});
