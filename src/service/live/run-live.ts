import type { WebSocket } from 'ws';
import type { RunScreencast, RunScreencastFrame } from '../../ports/studio.js';
import { sessionFromCookie } from '../auth/guards.js';
import type { ServiceDeps } from '../context.js';
import { queueDispatch } from '../domain/dispatch.js';
import { serviceError } from '../errors.js';
import { checkSocketOrigin, createLiveSocketRoute, FRAME_BACKLOG_BYTES, keepAlive, pathId, socketSession, type LiveSocketRoute } from './upgrade.js';
import type { FinishedStatus, InFlightRun, RunRegistry } from './run-registry.js';

/**
 * The run live view (docs/hosted-api.md, "Run live view"): `GET /api/automations/{id}/live` upgraded
 * to a WebSocket that relays, read-only, the screencast of a run of the automation executing in this
 * process (gateway or MCP in sync dispatch, a studio test run, a schedule fire in sync dispatch), as
 * JSON frames, and closes when that run ends. Before the upgrade: an allowlisted Origin, a valid session cookie (any member), and the
 * automation (and the `run_id` asked for) in the caller's org; otherwise an HTTP answer and no upgrade.
 * Nothing the viewer sends reaches the run's page.
 */

export interface RunLiveOptions {
  /** The frames of runs by run id: `createPlaywrightExecutor().screencast` (flowctl/adapters/executor-playwright). */
  screencast: RunScreencast;
  /** Viewers at once in this process. Default 32. */
  maxViewers?: number;
  /** Viewers at once per org. Default 8. */
  maxViewersPerOrg?: number;
  /** A viewer waiting this long with no run to show is closed. Default 600000 (10 min). */
  idleTimeoutMs?: number;
}

export interface RunLive {
  /** The route `GET /api/automations/{id}/live`: refusals are HTTP answers, an admitted viewer is upgraded. */
  route: LiveSocketRoute;
  /** Viewers connected now. */
  active(): number;
  dispose(): Promise<void>;
}

export const RUN_LIVE_PATH = /^\/api\/automations\/([^/]+)\/live\/?$/;
/** A viewer message larger than this closes the socket (1009); smaller ones are read and ignored. */
const MAX_VIEWER_MESSAGE_BYTES = 4 * 1024;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Close codes (docs/hosted-api.md, "Run live view"). */
export const RUN_LIVE_CLOSE = {
  /** The run ended (`run_finished` was sent). */
  finished: 1000,
  /** The service is shutting down. */
  shutdown: 1001,
  /** No run started while the viewer waited for `idleTimeoutMs`. */
  idle: 4000,
  /** The session that opened the view ended (logged out, revoked, no longer a member). */
  unauthenticated: 4001,
  /** The run relays no frames here: queue-dispatched, or executing in another process. */
  noFrames: 4004,
} as const;

interface Admitted {
  orgId: string;
  automationId: string;
  runId: string | undefined;
  cookie: string | undefined;
}

interface Viewer {
  orgId: string;
  close(code: number, reason: string): void;
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

export function createRunLive(deps: ServiceDeps, registry: RunRegistry, options: RunLiveOptions | undefined): RunLive {
  const { storage, logger } = deps;
  const maxViewers = options?.maxViewers ?? 32;
  const maxPerOrg = options?.maxViewersPerOrg ?? 8;
  const idleTimeoutMs = options?.idleTimeoutMs ?? 600_000;
  const viewers = new Set<Viewer>();
  // Viewers admitted but not yet open count against the limits too.
  const route = createLiveSocketRoute<Admitted>({ maxPayload: MAX_VIEWER_MESSAGE_BYTES, admit, open: (ws, who) => serve(ws, who) });
  const countOrg = (orgId: string) => [...viewers].filter((v) => v.orgId === orgId).length + route.pending(orgId);

  async function admit(request: Request): Promise<Admitted> {
    const url = new URL(request.url);
    const match = RUN_LIVE_PATH.exec(url.pathname);
    if (!match) throw serviceError('not_found', 'no WebSocket here (the run live view is at /api/automations/{id}/live)');
    checkSocketOrigin(request, deps);
    const auth = await socketSession(request, deps);
    // Watching is reading: any member of the org may.
    const id = pathId(match[1]!);
    const automation = id === undefined ? undefined : await storage.automations.get(auth.org.id, id);
    if (!automation) throw serviceError('not_found', 'no such automation in this org');
    const runId = url.searchParams.get('run_id') ?? undefined;
    if (runId !== undefined) {
      if (!RUN_ID.test(runId)) throw serviceError('invalid_request', "run_id must be a run id (as in the run result or the execution's run_id)");
      const execution = await storage.executions.getByRunId(auth.org.id, runId);
      if (!execution || execution.automation_id !== automation.id) throw serviceError('not_found', 'no such run of this automation');
    }
    if (!options) throw serviceError('not_ready', 'this service has no run screencast (createHostedService({runLive}))');
    if (viewers.size + route.pending() >= maxViewers)
      throw serviceError('rate_limited', `the run live view has ${maxViewers} viewers connected: try again when one closes`);
    if (countOrg(auth.org.id) >= maxPerOrg) throw serviceError('rate_limited', `this org has ${maxPerOrg} run live viewers connected: close one first`);
    return { orgId: auth.org.id, automationId: automation.id, runId, cookie: request.headers.get('cookie') ?? undefined };
  }

  function serve(ws: WebSocket, who: Admitted): void {
    const { orgId, automationId } = who;
    const send = (message: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    const cleanups: (() => void)[] = [];
    let idle: NodeJS.Timeout | undefined;
    let ended = false;
    const viewer: Viewer = {
      orgId,
      close(code, reason) {
        if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
      },
    };
    viewers.add(viewer);
    const teardown = () => {
      if (ended) return;
      ended = true;
      clearTimeout(idle);
      viewers.delete(viewer);
      for (const fn of cleanups.splice(0)) fn();
    };
    ws.on('close', teardown);
    ws.on('error', teardown);
    keepAlive(ws, deps.settings.streamHeartbeatSeconds * 1000);
    // Read-only: whatever the viewer sends is read and dropped, never relayed to the run's page.
    ws.on('message', () => {});

    const finish = (runId: string, status: string) => {
      send({ type: 'run_finished', run_id: runId, status });
      viewer.close(RUN_LIVE_CLOSE.finished, 'run finished');
      teardown();
    };
    const noFrames = (message: string, runId?: string) => {
      send({ type: 'notice', ...(runId ? { run_id: runId } : {}), reason: 'no_frames', message });
      viewer.close(RUN_LIVE_CLOSE.noFrames, 'no frames here');
      teardown();
    };

    /** Relay run `run`'s frames until it finishes. The run is in flight (the registry has it). */
    const attach = (run: InFlightRun) => {
      if (ended) return;
      clearTimeout(idle);
      send({ type: 'run_started', run_id: run.run_id, execution_id: run.execution_id, dispatch: run.dispatch, started_at: run.started_at });
      const unsubscribe = options!.screencast.subscribe(run.run_id, (frame: RunScreencastFrame) => {
        if (ended || ws.readyState !== ws.OPEN) return;
        // No backlog: while the socket has not drained, frames are dropped.
        if (ws.bufferedAmount > FRAME_BACKLOG_BYTES) return;
        const m = frame.metadata ?? {};
        const width = typeof m.deviceWidth === 'number' ? Math.round(m.deviceWidth) : 0;
        const height = typeof m.deviceHeight === 'number' ? Math.round(m.deviceHeight) : 0;
        send({ type: 'frame', run_id: run.run_id, data: frame.data, width, height });
      });
      const offFinish = registry.onFinish(run.run_id, (status) => {
        unsubscribe();
        finish(run.run_id, status);
      });
      cleanups.push(unsubscribe, offFinish);
    };

    /** Wait for the next sync run of the automation in this process. */
    const wait = () => {
      send({
        type: 'waiting',
        automation_id: automationId,
        message:
          'no run of this automation is executing here: the next one (a gateway or MCP call in sync dispatch, a studio test run, a schedule fire) is shown when it starts',
      });
      idle = setTimeout(() => {
        send({ type: 'closed', reason: 'idle', message: `no run started for ${Math.round(idleTimeoutMs / 1000)} s: the view was closed` });
        viewer.close(RUN_LIVE_CLOSE.idle, 'idle');
        teardown();
      }, idleTimeoutMs);
      idle.unref?.();
      let taken = false;
      const offStart = registry.onStart(orgId, automationId, (run) => {
        if (taken || ended) return;
        taken = true;
        offStart();
        // The run may end while the session is checked again: its end is kept.
        let endedAs: FinishedStatus | undefined;
        const offEarly = registry.onFinish(run.run_id, (status) => (endedAs = status));
        cleanups.push(offEarly);
        // A view left open is still its opener's: logged out, revoked or removed from the org, it shows no more runs.
        void sessionFromCookie(who.cookie, deps).then(
          (auth) => {
            offEarly();
            if (ended) return;
            if (typeof auth === 'string' || auth.org.id !== orgId) {
              send({
                type: 'closed',
                reason: 'unauthenticated',
                message: 'the session that opened the view ended (logged out, revoked, or no longer a member of the org)',
              });
              viewer.close(RUN_LIVE_CLOSE.unauthenticated, 'unauthenticated');
              teardown();
              return;
            }
            if (endedAs !== undefined) {
              send({ type: 'run_started', run_id: run.run_id, execution_id: run.execution_id, dispatch: run.dispatch, started_at: run.started_at });
              return finish(run.run_id, endedAs);
            }
            attach(run);
          },
          (err) => {
            logger.error(`[flowctl] [run-live] session check: ${(err as Error)?.stack ?? String(err)}`);
            viewer.close(1011, 'internal error');
            teardown();
          },
        );
      });
      cleanups.push(offStart);
    };

    if (who.runId !== undefined) {
      const run = registry.get(who.runId);
      if (run) return attach(run);
      // Not in flight here: ended already, or executing elsewhere (a queue worker, another process).
      void storage.executions.getByRunId(orgId, who.runId).then(
        (execution) => {
          if (ended) return;
          if (execution && TERMINAL.has(execution.status)) return finish(who.runId!, execution.status);
          const queued = execution?.dispatch === 'queue' || execution?.status === 'queued' || queueDispatch(deps);
          noFrames(
            queued
              ? 'this run was queue-dispatched: it executes on a worker and relays no frames. Follow it on the run stream (GET /api/runs/{id}/stream)'
              : 'this run is not executing in this process (another process of the service runs it, or it was queued to a worker): no frames here. Follow it on the run stream (GET /api/runs/{id}/stream)',
            who.runId,
          );
        },
        (err) => {
          logger.error(`[flowctl] [run-live] run lookup: ${(err as Error)?.stack ?? String(err)}`);
          viewer.close(1011, 'internal error');
          teardown();
        },
      );
      return;
    }
    const newest = registry.inFlight(orgId, automationId)[0];
    if (newest) return attach(newest);
    if (queueDispatch(deps)) {
      return noFrames(
        'runs of this service are queue-dispatched (SVC_RUN_DISPATCH=queue): they execute on a worker and relay no frames. Follow a run on the run stream (GET /api/runs/{id}/stream)',
      );
    }
    wait();
  }

  return {
    route,
    active: () => viewers.size,
    async dispose() {
      for (const v of [...viewers]) v.close(RUN_LIVE_CLOSE.shutdown, 'shutting down');
      viewers.clear();
    },
  };
}
