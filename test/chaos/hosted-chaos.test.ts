import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir, cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { snapshotDist } from '../crash/dist-snapshot.js';
import { checkStoredJournals, setupChaosOrg } from '../helpers/chaos-org.js';
import { describeChaos, killProc, type Proc, readyz, spawnProc, stopProcs } from '../helpers/chaos-procs.js';
import { clusterQuery, type PrivateCluster, startPrivateCluster } from '../helpers/private-postgres.js';
import { prng, testSeed } from '../helpers/seeded.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Chaos test of the split hosted service (docs/deploy.md, "Database outage"): two API processes
 * (`SVC_ROLE=api`, one with queue dispatch, one sync) and two workers (`SVC_ROLE=worker`) of
 * examples/hosted-service/main.mjs on a private PostgreSQL cluster of this test (never the machine's
 * main one). A bounded load goes through the gateway of both APIs (a pure flow, a flow whose HTTP
 * step waits on a loopback endpoint this test holds, a few browser runs against a page this test
 * serves, and a schedule firing every second); while it runs: worker A is SIGKILLed holding runs,
 * Postgres is stopped (runs in flight on the sync API and on worker B) and started again, and the
 * sync API is SIGKILLed holding a run. Every fault waits for the state it needs (a held run, a
 * lease, a log line, readiness), never for time.
 *
 * Afterwards: no answer was a 500 (an outage is 503 `unavailable` with Retry-After); /readyz said
 * 503 during the outage and 200 after, without a restart; no acknowledged run is lost (every 200,
 * sync or `queued`, has its executions row and a terminal engine run that agree); nothing is stuck
 * (no row `queued`/`running`, no run `pending`/`running`); every journal's hash chain verifies and
 * ends with its run_finished; no run was executed twice (one run_started per journal); the schedule
 * fired again after the outage. The figures are printed as JSON (bench/RESULTS.md, section `chaos`).
 */

const ROOT = resolve(import.meta.dirname, '../..');
const SESSION_SECRET = 'c'.repeat(48);
const SECRETS_KEY = Buffer.alloc(32, 9).toString('base64');
const QUEUE_TIMEOUT_S = 40;
const LANE_CAP = 400;
const SEED = testSeed(19);

const PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chaos</title></head><body><h1 id="t">chaos page</h1></body></html>';

type Api = 'q' | 's';

interface Attempt {
  api: Api;
  flow: string;
  /** HTTP status, or 0 for no answer (connection refused or reset: a killed process). */
  status: number;
  error?: string;
  retryAfter?: string | null;
  runId?: string;
  answered?: string;
  at: number;
}

describeChaos('chaos: kill a worker, kill an API process and restart Postgres under load (split hosted service)', (pgBins) => {
  let cluster: PrivateCluster;
  let snapshot: Awaited<ReturnType<typeof snapshotDist>>;
  let mainPath: string;
  let workDir: string;
  let site: Server;
  let siteUrl: string;
  const procs: Proc[] = [];
  const start = async (name: string, role: 'api' | 'worker', extra: Record<string, string>) => {
    const env = {
      DATABASE_URL: cluster.url,
      SVC_SESSION_SECRETS: SESSION_SECRET,
      SVC_SECRETS_KEY: SECRETS_KEY,
      SVC_EGRESS_ALLOW: new URL(siteUrl).host,
      SVC_IP_LIMIT: '1000000',
      SVC_ORG_LIMIT: '1000000',
      SVC_AUTH_IP_LIMIT: '10000',
      SVC_MIN_CRON_INTERVAL: '1',
      SVC_WORKER_CONCURRENCY: '3',
      SVC_QUEUE_TIMEOUT: String(QUEUE_TIMEOUT_S),
      SVC_RECONCILE_INTERVAL: '2',
      ...extra,
    };
    const proc = await spawnProc(name, role, { workDir, mainPath, env });
    procs.push(proc);
    return proc;
  };
  let holdMode = false;
  let quota: Record<Api, number> = { q: 0, s: 0 };
  const held: { api: Api; res: ServerResponse }[] = [];
  let schedulerId = '';
  let key = '';
  let orgId = '';

  const heldOf = (api: Api) => held.filter((h) => h.api === api).length;
  const releaseHeld = () => {
    holdMode = false;
    for (const h of held.splice(0)) h.res.end('ok');
  };

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'flowctl-chaos-'));
    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
        return;
      }
      if (url.pathname === '/hold') {
        const api = url.searchParams.get('api') === 's' ? 's' : 'q';
        if (holdMode && heldOf(api) < quota[api]) held.push({ api, res });
        else res.end('ok');
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    cluster = await startPrivateCluster(pgBins);
    // The built package, copied (a rebuild of the shared dist/ cannot pull it from under the
    // processes), with the example next to it: `import 'flowctl'` resolves to the copy.
    snapshot = await snapshotDist();
    const pkg = resolve(snapshot.dist, '..');
    await mkdir(join(pkg, 'examples/hosted-service'), { recursive: true });
    await cp(join(ROOT, 'examples/hosted-service/main.mjs'), join(pkg, 'examples/hosted-service/main.mjs'));
    mainPath = join(pkg, 'examples/hosted-service/main.mjs');

    // The first process migrates the database; the others then start together.
    await start('api-q', 'api', { SVC_RUN_DISPATCH: 'queue' });
    await Promise.all([
      start('api-s', 'api', { SVC_RUN_DISPATCH: 'sync' }),
      start('worker-a', 'worker', { SVC_RUN_DISPATCH: 'queue' }),
      start('worker-b', 'worker', { SVC_RUN_DISPATCH: 'queue' }),
    ]);

    // An org with a live key, its flows (hello, hold, the browser flow page) and a schedule of hello.
    ({ orgId, key, scheduleId: schedulerId } = await setupChaosOrg(procs.find((p) => p.name === 'api-s')!.url, cluster.url, siteUrl));
  }, 420_000);

  afterAll(async () => {
    releaseHeld();
    await stopProcs(procs);
    await cluster?.destroy();
    site?.closeAllConnections();
    await new Promise((r) => site?.close(r));
    await snapshot?.cleanup();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  }, 180_000);

  it('no acknowledged run is lost, none is stuck, every journal verifies, no 500 answers; the figures', async () => {
    const started = Date.now();
    const proc = (name: string) => procs.find((p) => p.name === name)!;
    const apiQ = proc('api-q');
    const apiS = proc('api-s');
    const workerA = proc('worker-a');
    const workerB = proc('worker-b');
    const q = (text: string, values: unknown[] = []) => clusterQuery(cluster.url, text, values);

    // The load: two lanes per API process, each a seeded sequence of gateway calls (mostly the pure
    // flow, some held flows), honouring Retry-After on a 503 as a client should; bounded.
    const attempts: Attempt[] = [];
    let stopLanes = false;
    let holdSeq = 0;
    const call = async (api: Api, flow: string, inputs: Record<string, unknown>): Promise<Attempt> => {
      const target = api === 'q' ? apiQ : apiS;
      const a: Attempt = { api, flow, status: 0, at: Date.now() };
      try {
        const res = await fetch(`${target.url}/v1/run/${flow}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ inputs }),
        });
        a.status = res.status;
        a.retryAfter = res.headers.get('retry-after');
        const body = (await res.json()) as { run_id?: string; status?: string; error?: string };
        if (res.status === 200) {
          a.runId = body.run_id;
          a.answered = body.status;
        } else a.error = body.error;
      } catch (err) {
        a.error = `no answer: ${(err as Error).cause ? String(((err as Error).cause as Error).message) : (err as Error).message}`;
      }
      attempts.push(a);
      return a;
    };
    const lane = async (api: Api, seed: number) => {
      const next = prng(seed);
      const target = api === 'q' ? apiQ : apiS;
      for (let i = 0; i < LANE_CAP && !stopLanes && !target.dead; i++) {
        const hold = next() < 0.15;
        const n = ++holdSeq;
        const a = hold ? await call(api, 'hold', { url: `${siteUrl}/hold?api=${api}&n=${n}`, n }) : await call(api, 'hello', { who: `w${n}` });
        if (a.status === 503) await new Promise((r) => setTimeout(r, Math.min(Number(a.retryAfter ?? 1), 2) * 1000));
        else if (a.status === 0) await new Promise((r) => setTimeout(r, 200));
        else await new Promise((r) => setTimeout(r, 15));
      }
    };
    const lanes = [lane('q', SEED), lane('q', SEED + 1), lane('s', SEED + 2), lane('s', SEED + 3)];
    const acked = (api: Api, since = 0) => attempts.filter((a) => a.api === api && a.status === 200 && a.at >= since).length;
    const browser = async () => {
      for (let i = 0; i < 2; i++) {
        const a = await call('q', 'page', {});
        expect(a.status, JSON.stringify(a)).toBe(200);
      }
    };

    try {
      // Warm-up: both APIs answer, two browser runs are queued.
      await waitUntil(() => acked('q') >= 20 && acked('s') >= 20, { what: '20 acknowledged runs on each API', capMs: 180_000 });
      await browser();

      // Fault 1: SIGKILL worker A while it executes a held run.
      quota = { q: 6, s: 0 };
      holdMode = true;
      const leasedBy = async (pid: number) => (await q(`select id from runs where status = 'running' and lease->>'pid' = $1`, [String(pid)])).length;
      await waitUntil(async () => (await leasedBy(workerA.child.pid!)) > 0 && heldOf('q') > 0, { what: 'worker A to execute a held run', capMs: 180_000 });
      const heldByA = await leasedBy(workerA.child.pid!);
      await killProc(workerA);
      releaseHeld();
      const afterKill1 = Date.now();
      await waitUntil(() => acked('q', afterKill1) >= 10, { what: 'queue dispatch to go on after the worker kill', capMs: 180_000 });

      // Fault 2: stop Postgres with a sync run held on api-s and a queued run held on worker B.
      quota = { q: 2, s: 1 };
      holdMode = true;
      await waitUntil(() => heldOf('s') >= 1 && heldOf('q') >= 1, { what: 'a held sync run and a held queued run', capMs: 180_000 });
      const releasedInOutage = held.length;
      const count = (p: Proc, re: RegExp) => (p.log().match(re) ?? []).length;
      const leftBefore = (p: Proc) => count(p, /the run is left to recovery/g);
      const leftAtStart = leftBefore(apiS) + leftBefore(workerB);
      const schedulerMisses = count(apiQ, /\[service\] scheduler: /g);
      const queueMisses = count(workerB, /\[queue-pgboss\] database unreachable/g);
      const outageStart = Date.now();
      await cluster.stop();
      const alive = [apiQ, apiS, workerB];
      await waitUntil(async () => (await Promise.all(alive.map(readyz))).every((s) => s === 503), {
        what: '/readyz 503 on every live process during the outage',
      });
      await waitUntil(
        () => (['q', 's'] as Api[]).every((api) => attempts.some((a) => a.api === api && a.at >= outageStart && a.status === 503 && a.error === 'unavailable')),
        { what: 'a 503 unavailable answer from each API during the outage' },
      );
      // The scheduler met the outage (its fire times pass unclaimed), and so did worker B's queue polls.
      await waitUntil(() => count(apiQ, /\[service\] scheduler: /g) > schedulerMisses, { what: 'the scheduler of api-q to meet the outage' });
      await waitUntil(() => count(workerB, /\[queue-pgboss\] database unreachable/g) > queueMisses, {
        what: 'the queue workers of worker B to meet the outage',
      });
      // The held runs go on while the database is away: their next journal append fails and the
      // engine leaves them to recovery (one log line each).
      releaseHeld();
      await waitUntil(() => leftBefore(apiS) + leftBefore(workerB) - leftAtStart >= releasedInOutage, {
        what: 'the runs released during the outage to meet the missing database',
      });
      await cluster.start();
      const outageEnd = Date.now();
      await waitUntil(async () => (await Promise.all(alive.map(readyz))).every((s) => s === 200), {
        what: '/readyz 200 on every live process after the restart',
      });
      const readyAgainMs = Date.now() - outageEnd;
      await waitUntil(() => acked('q', outageEnd) >= 10 && acked('s', outageEnd) >= 10, {
        what: 'both APIs to acknowledge runs again after the restart',
        capMs: 180_000,
      });
      const firstAckAfterMs = Math.min(...attempts.filter((a) => a.status === 200 && a.at >= outageEnd).map((a) => a.at)) - outageEnd;

      // Fault 3: SIGKILL the sync API while it executes a held run.
      quota = { q: 0, s: 1 };
      holdMode = true;
      await waitUntil(() => heldOf('s') >= 1, { what: 'a held sync run on api-s', capMs: 180_000 });
      await killProc(apiS);
      releaseHeld();
      const afterKill2 = Date.now();
      await waitUntil(() => acked('q', afterKill2) >= 10, { what: 'the queue API to go on after the API kill', capMs: 180_000 });
      await browser();
      stopLanes = true;
      await Promise.all(lanes);
      const loadEnd = Date.now();

      // Recovery: every row and every run terminal (start_timeout after SVC_QUEUE_TIMEOUT, worker_lost
      // after a lease, the reconcile sweep every 2 s). The schedule goes on firing every second, so
      // the checks below read the rows and runs of the moment everything was terminal: a fire after it
      // (its row running, its run already finished) is not a disagreement.
      type Row = { id: string; run_id: string; status: string; error_code: string | null; dispatch: string };
      type RunRow = { id: string; status: string; flow_name: string; code: string | null };
      let rows: Row[] = [];
      let runs: RunRow[] = [];
      await waitUntil(
        async () => {
          rows = (await q(`select id, run_id, status, error_code, dispatch from svc_executions where org_id = $1`, [orgId])) as Row[];
          runs = (await q(`select id, status, flow_name, error->>'code' as code from runs`)) as RunRow[];
          return rows.every((r) => r.status !== 'queued' && r.status !== 'running') && runs.every((r) => r.status !== 'pending' && r.status !== 'running');
        },
        { what: 'every execution and every engine run terminal', capMs: 300_000 },
      );
      const settledMs = Date.now() - loadEnd;

      // --- Answers: never a 500; every refusal a 503 with Retry-After, or no answer from a killed process.
      const refusals = attempts.filter((a) => a.status !== 200);
      const byAnswer: Record<string, number> = {};
      for (const a of attempts) {
        const k = a.status === 200 ? `200 ${a.answered}` : a.status === 0 ? 'no answer' : `${a.status} ${a.error}`;
        byAnswer[k] = (byAnswer[k] ?? 0) + 1;
      }
      expect(
        attempts.filter((a) => a.status >= 500 && a.status !== 503),
        JSON.stringify(byAnswer),
      ).toEqual([]);
      for (const a of refusals.filter((r) => r.status === 503)) {
        expect([a.error, a.retryAfter]).toEqual([expect.stringMatching(/^(unavailable|queue_unavailable)$/), '2']);
      }
      expect(
        refusals.filter((a) => a.status !== 503 && a.status !== 0),
        JSON.stringify(byAnswer),
      ).toEqual([]);
      // No answer only from a process that was killed (its held request, then refused connections).
      for (const a of refusals.filter((r) => r.status === 0)) expect(a.api, JSON.stringify(a)).toBe('s');

      // --- Acknowledged runs: each has its row and its terminal run, and they agree.
      // Rows and runs as read when everything was terminal (above).
      const rowByRun = new Map(rows.map((r) => [r.run_id, r]));
      const runById = new Map(runs.map((r) => [r.id, r]));
      const ackedAll = attempts.filter((a) => a.status === 200);
      const lost = ackedAll.filter((a) => !a.runId || !rowByRun.has(a.runId) || !runById.has(a.runId));
      expect(lost, 'acknowledged runs without their executions row or engine run').toEqual([]);
      const terminal = new Set(['succeeded', 'failed', 'canceled']);
      for (const a of ackedAll) {
        const run = runById.get(a.runId!)!;
        expect([a.runId, terminal.has(run.status)]).toEqual([a.runId, true]);
        expect([a.runId, rowByRun.get(a.runId!)!.status]).toEqual([a.runId, run.status]);
        // A sync answer is the run's end: the stored run ended the same way.
        if (a.answered !== 'queued') expect([a.runId, a.answered]).toEqual([a.runId, run.status]);
      }
      // Every row agrees with its run, including the runs nobody was told about (503s, killed callers).
      const disagree = rows.filter((r) => runById.get(r.run_id)?.status !== r.status);
      expect(disagree, "executions whose status is not their run's").toEqual([]);
      const codeDisagree = rows.filter((r) => r.status === 'failed' && r.error_code !== runById.get(r.run_id)?.code);

      // --- Journals: the chain verifies, each ends with its run_finished, one run_started each.
      const { verified, duplicates, broken } = await checkStoredJournals(
        cluster.url,
        runs.map((r) => r.id),
      );
      expect(broken).toEqual([]);
      expect(duplicates, 'runs executed twice').toBe(0);

      // --- The schedule fired again after the outage (and the times it was away were skipped).
      const fires = (await q(`select fire_at, execution_id, error from svc_schedule_fires where schedule_id = $1 order by fire_at`, [schedulerId])) as {
        fire_at: Date;
        execution_id: string | null;
        error: string | null;
      }[];
      const firesAfter = fires.filter((f) => f.fire_at.getTime() > outageEnd && f.execution_id !== null);
      expect(firesAfter.length, 'schedule fires after the restart').toBeGreaterThan(0);
      // Fire times of the outage window (stop issued .. start returned): some were claimed before
      // the server stopped accepting, the others were skipped.
      const windowSeconds = Math.floor(outageEnd / 1000) - Math.ceil(outageStart / 1000) + 1;
      const firesDuring = fires.filter((f) => f.fire_at.getTime() >= outageStart && f.fire_at.getTime() <= outageEnd).length;

      // --- Queue redeliveries (at least once): counted, never an execution.
      const redelivered = (await q(`select count(*)::int as n from pgboss.job where name = 'flowctl-runs' and retry_count > 0`))[0]!.n as number;

      const failedByCode: Record<string, number> = {};
      for (const r of runs.filter((x) => x.status !== 'succeeded'))
        failedByCode[`${r.status} ${r.code ?? ''}`.trim()] = (failedByCode[`${r.status} ${r.code ?? ''}`.trim()] ?? 0) + 1;
      const ackedFailed: Record<string, number> = {};
      for (const a of ackedAll) {
        const r = runById.get(a.runId!)!;
        if (r.status !== 'succeeded') ackedFailed[`${r.status} ${r.code ?? ''}`.trim()] = (ackedFailed[`${r.status} ${r.code ?? ''}`.trim()] ?? 0) + 1;
      }
      // An acknowledged run fails only by a fault: its worker killed or the database gone under it.
      const explained = new Set(['failed worker_lost', 'failed db_unreachable', 'failed start_timeout', 'failed queue_message_lost']);
      expect(
        Object.keys(ackedFailed).filter((k) => !explained.has(k)),
        JSON.stringify(ackedFailed),
      ).toEqual([]);
      const summary = {
        machine: { cpus: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30), postgres: pgBins.version, node: process.version },
        seed: SEED,
        processes: '2 api (queue, sync) + 2 workers (concurrency 3), private cluster',
        faults: { worker_killed_holding_runs: heldByA, outage_ms: outageEnd - outageStart, released_into_outage: releasedInOutage, api_killed: 'api-s (sync)' },
        attempted: attempts.length,
        acked: {
          total: ackedAll.length,
          sync: ackedAll.filter((a) => a.answered !== 'queued').length,
          queued: ackedAll.filter((a) => a.answered === 'queued').length,
        },
        answers: byAnswer,
        runs: { total: runs.length, succeeded: runs.filter((r) => r.status === 'succeeded').length, failed_by_code: failedByCode },
        acked_not_succeeded: ackedFailed,
        recovered: runs.filter((r) => r.code === 'worker_lost' || r.code === 'start_timeout' || r.code === 'queue_message_lost').length,
        lost: lost.length,
        stuck: 0,
        journals_verified: verified,
        executed_twice: duplicates,
        queue_redeliveries: redelivered,
        executions_error_code_differs: codeDisagree.length,
        schedule: {
          fires: fires.length,
          fires_after_restart: firesAfter.length,
          outage_window_fire_times: windowSeconds,
          claimed_in_window: firesDuring,
          skipped: windowSeconds - firesDuring,
        },
        ms: { ready_after_restart: readyAgainMs, first_ack_after_restart: firstAckAfterMs, all_terminal_after_load: settledMs, total: Date.now() - started },
      };
      console.log(`[chaos] ${JSON.stringify(summary)}`);
      expect(codeDisagree, "failed executions whose error_code is not their run's").toEqual([]);
    } catch (err) {
      // What each process was doing: its exit and its last log lines.
      const states = await Promise.all(
        procs.map(
          async (p) =>
            `--- ${p.name} (pid ${p.child.pid}, exit ${p.child.exitCode ?? p.child.signalCode ?? 'alive'}, readyz ${p.dead ? '-' : await readyz(p)}):\n${p.log().slice(-3000)}`,
        ),
      );
      process.stderr.write(`[chaos] failed; processes:\n${states.join('\n')}\n`);
      throw err;
    } finally {
      stopLanes = true;
      releaseHeld();
      await Promise.allSettled(lanes);
    }
  }, 1_200_000);
});
