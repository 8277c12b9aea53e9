import { z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import type { JournalEntry } from '../../run/types.js';
import type { ServiceDeps } from '../context.js';
import { invalidRequest, serviceError } from '../errors.js';
import { defineRoute, type ServiceRoute } from '../route-table.js';
import { findExecution } from './executions.js';
import { IdParam } from '../schemas.js';

/**
 * The run stream (spec "Run stream"; docs/hosted-api.md): the run's journal as server-sent events,
 * `event:` the entry's kind, `data:` the JSON entry, `id:` its seq. Entries already written come
 * first, then each as it is appended; the stream ends after `run_finished`. `Last-Event-ID: <seq>`
 * resumes after that entry. Read from the one journal, as every surface is.
 */

/**
 * One SSE frame; the JSON has no newlines, so one `data:` line carries it. Written by hand rather than
 * with writeSSE, which orders the fields event, data, id: clients read `id:` first (see
 * docs/architecture.md, "Hand-written pieces").
 */
export function sseFrame(entry: JournalEntry): string {
  return `id: ${entry.seq}\nevent: ${entry.event}\ndata: ${JSON.stringify(entry)}\n\n`;
}

export function streamRoutes(deps: ServiceDeps): ServiceRoute[] {
  return [
    defineRoute(
      {
        method: 'get',
        path: '/api/runs/{id}/stream',
        auth: 'session',
        summary: "The run's journal as server-sent events (id: run_ref id or engine run id); Last-Event-ID resumes",
        tags: ['executions'],
        request: { params: IdParam },
        responses: {
          200: { description: 'text/event-stream: one event per journal entry, named by its kind', content: { 'text/event-stream': { schema: z.string() } } },
        },
      },
      async (c) => {
        const { id } = c.req.valid('param');
        const execution = await findExecution(deps, c.get('auth').org.id, id);
        if (!execution || !deps.engine) throw serviceError('not_found', 'no such run in this org');
        const last = c.req.header('last-event-id');
        if (last !== undefined && !/^\d{1,9}$/.test(last.trim())) {
          throw invalidRequest([{ path: ['Last-Event-ID'], message: 'must be the seq of an event of this stream', code: 'invalid_header' }]);
        }
        const fromSeq = last === undefined ? 0 : Number(last.trim()) + 1;
        const engine = deps.engine;
        const abort = new AbortController();
        c.req.raw.signal.addEventListener('abort', () => abort.abort(), { once: true });
        const heartbeatMs = deps.settings.streamHeartbeatSeconds * 1000;
        const res = streamSSE(c, async (stream) => {
          // A client that goes away cancels the body: the watch ends (the run goes on).
          stream.onAbort(() => abort.abort());
          // A comment line every SVC_STREAM_HEARTBEAT seconds (default 15) keeps proxies from closing a
          // quiet stream (a queued run waiting for a worker, a long step); none while a frame waits
          // for a slow reader (each write waits for the reader: backpressure).
          let writing = false;
          const heartbeat = setInterval(() => {
            if (!writing && !stream.closed) void stream.write(': heartbeat\n\n');
          }, heartbeatMs);
          heartbeat.unref?.();
          try {
            for await (const entry of engine.watch(execution.run_id, { fromSeq, signal: abort.signal })) {
              writing = true;
              await stream.write(sseFrame(entry));
              writing = false;
              if (entry.event === 'run_finished' || stream.aborted) break;
            }
          } catch (err) {
            if (!abort.signal.aborted) deps.logger.warn(`[flowctl] [service] run stream ${execution.run_id}: ${(err as Error).message}`);
          } finally {
            clearInterval(heartbeat);
          }
        });
        // The headers this route has always answered with (streamSSE's own: no-cache, keep-alive, an
        // explicit chunked Transfer-Encoding the node server adds by itself anyway).
        res.headers.set('content-type', 'text/event-stream; charset=utf-8');
        res.headers.set('cache-control', 'no-store');
        res.headers.set('x-accel-buffering', 'no');
        res.headers.delete('connection');
        res.headers.delete('transfer-encoding');
        return res;
      },
    ),
  ];
}
