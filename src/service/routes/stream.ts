import { z } from '@hono/zod-openapi';
import type { JournalEntry } from '../../run/types.js';
import type { ServiceDeps } from '../context.js';
import { invalidRequest, serviceError } from '../errors.js';
import { defineRoute, type ServiceRoute } from '../route-table.js';
import { findExecution } from './executions.js';

/**
 * The run stream (spec "Run stream"; docs/hosted-api.md): the run's journal as server-sent events,
 * `event:` the entry's kind, `data:` the JSON entry, `id:` its seq. Entries already written come
 * first, then each as it is appended; the stream ends after `run_finished`. `Last-Event-ID: <seq>`
 * resumes after that entry. Read from the one journal, as every surface is.
 */

const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** One SSE frame; the JSON has no newlines, so one `data:` line carries it. */
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
        const encoder = new TextEncoder();
        const heartbeatMs = deps.settings.streamHeartbeatSeconds * 1000;
        let heartbeat: NodeJS.Timeout | undefined;
        const body = new ReadableStream<Uint8Array>({
          async start(controller) {
            // A comment line every SVC_STREAM_HEARTBEAT seconds (default 15) keeps proxies from closing
            // a quiet stream (a queued run waiting for a worker, a long step).
            heartbeat = setInterval(() => {
              try {
                controller.enqueue(encoder.encode(': heartbeat\n\n'));
              } catch {
                clearInterval(heartbeat);
              }
            }, heartbeatMs);
            heartbeat.unref?.();
            try {
              for await (const entry of engine.watch(execution.run_id, { fromSeq, signal: abort.signal })) {
                controller.enqueue(encoder.encode(sseFrame(entry)));
                if (entry.event === 'run_finished') break;
              }
            } catch (err) {
              if (!abort.signal.aborted) deps.logger.warn(`[flowctl] [service] run stream ${execution.run_id}: ${(err as Error).message}`);
            } finally {
              clearInterval(heartbeat);
              try {
                controller.close();
              } catch {
                /* the client went away */
              }
            }
          },
          cancel() {
            clearInterval(heartbeat);
            abort.abort();
          },
        });
        return new Response(body, {
          status: 200,
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
        });
      },
    ),
  ];
}
