import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { get, type Execution, type JournalEntry, type Run } from '../api';
import { absTime, duration } from '../format';
import { JsonView } from '../json-view';
import { Link } from '../router';
import { useIsOwner } from '../session';
import { Async, Badge, Card, Digest, PageHeader, StatusBadge, Time, useResource } from '../ui';
import { RunLiveView } from './live';
import { KINDS, model } from './run/model';
import { plain, StepRow } from './run/step-row';

/**
 * The run page: GET /api/executions/{id} (execution header, engine Run, journal), then, while the run
 * is in flight, GET /api/runs/{id}/stream (SSE: one event per journal entry, named by its kind) and,
 * unless it was queue-dispatched, its live frames (GET /api/automations/{id}/live?run_id=, a WebSocket).
 */

export function RunPage({ id }: { id: string }) {
  const r = useResource(() => get<{ execution: Execution; run: Run; journal: JournalEntry[] }>(`/api/executions/${encodeURIComponent(id)}`), [id]);
  return (
    <div className="page">
      <Async r={r} label="Loading the run">
        {(data) => <RunView key={data.execution.id} execution={data.execution} run={data.run} initial={data.journal} reload={r.reload} />}
      </Async>
    </div>
  );
}

function RunView({ execution, run, initial, reload }: { execution: Execution; run: Run; initial: JournalEntry[]; reload(): Promise<void> }) {
  const [journal, setJournal] = useState(initial);
  const [live, setLive] = useState<'off' | 'connecting' | 'live' | 'ended'>('off');
  const lastSeq = useRef(initial.length > 0 ? initial[initial.length - 1]!.seq : -1);
  const finishedAtLoad = initial.some((e) => e.event === 'run_finished');
  // The Live panel: for a run in flight when the page opened (not queue-dispatched: a worker runs
  // those, with no frames); it stays, with the last frame, once the run ends.
  const [watch] = useState(!finishedAtLoad && execution.dispatch !== 'queue');

  useEffect(() => {
    if (finishedAtLoad) return;
    setLive('connecting');
    const source = new EventSource(`/api/runs/${encodeURIComponent(execution.id)}/stream`);
    const onEntry = (ev: MessageEvent) => {
      const entry = JSON.parse(ev.data) as JournalEntry;
      setLive('live');
      if (entry.seq <= lastSeq.current) return;
      lastSeq.current = entry.seq;
      setJournal((j) => [...j, entry]);
      if (entry.event === 'run_finished') {
        source.close();
        setLive('ended');
        // The execution row and the run's output are recorded as the run ends.
        void reload();
      }
    };
    for (const k of KINDS) source.addEventListener(k, onEntry as EventListener);
    source.onopen = () => setLive('live');
    // EventSource reconnects by itself (with Last-Event-ID) while the run goes on.
    source.onerror = () => setLive((s) => (s === 'ended' ? s : 'connecting'));
    return () => source.close();
  }, [execution.id, finishedAtLoad, reload]);

  const { steps, started, finished } = useMemo(() => model(journal), [journal]);
  const status = finished?.status ?? (journal.length > 0 ? 'running' : run.status);
  const runStart = Date.parse(started?.at ?? run.started_at);
  const runEnd = finished ? Date.parse(finished.at) : Math.max(runStart, ...steps.map((s) => s.endMs ?? s.startMs ?? runStart));
  const total = Math.max(1, runEnd - runStart);
  const output = finished?.output ?? run.output;
  const failure = finished?.error;
  const allWarnings = steps.reduce((n, s) => n + s.warnings.length, 0);
  const owner = useIsOwner();
  const studio = (step: string) => `/automations/${execution.automation_id}/studio?step=${encodeURIComponent(step)}`;

  return (
    <>
      <PageHeader
        crumbs={
          <>
            <Link to="/runs">Runs</Link> / <Link to={`/runs?flow=${encodeURIComponent(execution.flow)}`}>{execution.flow}</Link>
          </>
        }
        title={
          <span className="title-with-badge">
            Run of {execution.flow} <StatusBadge status={status} />
            {live === 'live' || live === 'connecting' ? (
              <span data-testid="live-badge" data-state={live}>
                <Badge tone="blue" title="Updates arrive from GET /api/runs/{id}/stream">
                  <span className="pulse" aria-hidden="true" /> {live === 'live' ? 'live' : 'connecting'}
                </Badge>
              </span>
            ) : null}
          </span>
        }
        actions={
          <Link to={`/automations/${execution.automation_id}`} className="btn">
            Open automation
          </Link>
        }
      />
      <div className="facts card">
        <Fact label="Started">
          <span title={absTime(started?.at ?? run.started_at)}>
            <Time at={started?.at ?? run.started_at} />
          </span>
        </Fact>
        <Fact label="Duration">{finished ? duration(runEnd - runStart) : <span className="muted">running…</span>}</Fact>
        <Fact label="Via">{execution.dispatch}</Fact>
        <Fact label="Version">
          <Digest value={execution.flow_digest} />
        </Fact>
        <Fact label="Steps">
          {steps.length}
          {allWarnings > 0 ? (
            <>
              {' '}
              <Badge tone="amber">
                {allWarnings} warning{allWarnings === 1 ? '' : 's'}
              </Badge>
            </>
          ) : null}
        </Fact>
        <Fact label="Run id">
          <code className="small" title={execution.run_id}>
            {execution.run_id}
          </code>
        </Fact>
      </div>

      {failure ? (
        <div className="error-box run-failure" role="alert">
          <div className="error-head">
            <strong>Failed{failure.step ? ` at step ${failure.step}` : ''}</strong>
            <code className="error-code">{failure.code}</code>
          </div>
          <p>{plain(failure.message)}</p>
          {failure.code === 'locator_drift' && failure.step ? (
            <p>
              The page changed under the recorded locator.{' '}
              {owner ? (
                <>
                  <Link to={studio(failure.step)} className="btn btn-small btn-primary">
                    Re-record step {failure.step}
                  </Link>{' '}
                  in the studio (the steps before it are replayed, you show the changed one), or{' '}
                </>
              ) : null}
              <Link to={`/automations/${execution.automation_id}/capture?step=${encodeURIComponent(failure.step)}`}>fix the step in the capture</Link>, then
              publish.
            </p>
          ) : null}
        </div>
      ) : null}

      {watch ? (
        <Card title="Live" subtitle="The run's browser page as it runs, until the run ends." className="card-live">
          <RunLiveView automationId={execution.automation_id} runId={execution.run_id} />
        </Card>
      ) : null}

      <div className="run-grid">
        <Card title="Timeline" subtitle="The run's journal, step by step." className="card-timeline">
          {steps.length === 0 ? (
            <p className="muted">{finished ? 'No step ran.' : 'Waiting for the first step…'}</p>
          ) : (
            <ol className="timeline" data-testid="timeline">
              {steps.map((s, i) => (
                <StepRow
                  key={s.id}
                  step={s}
                  runStart={runStart}
                  total={total}
                  failedHere={failure?.step === s.id}
                  execution={execution.id}
                  before={
                    s.status === 'failed'
                      ? steps
                          .slice(0, i)
                          .flatMap((p) => p.artifacts.map((d) => ({ digest: d, step: p.id })))
                          .pop()
                      : undefined
                  }
                  rerecord={owner && s.status === 'failed' ? studio(s.id) : undefined}
                />
              ))}
              {finished ? (
                <li className={`tl-item tl-${finished.status}`}>
                  <span className="tl-dot" aria-hidden="true" />
                  <div className="tl-main">
                    <div className="tl-head">
                      <span className="tl-name">run finished</span>
                      <StatusBadge status={finished.status!} />
                      <span className="tl-time">
                        <Time at={finished.at} />
                      </span>
                    </div>
                  </div>
                </li>
              ) : null}
            </ol>
          )}
        </Card>
        <div className="stack">
          <Card title="Output">
            {output === undefined || output === null ? (
              <p className="muted">{finished ? 'No output (only a succeeded run has one).' : 'Not yet.'}</p>
            ) : (
              <JsonView value={output} />
            )}
          </Card>
          <Card title="Inputs" subtitle="Secret inputs appear as their references, never values.">
            {started?.inputs && Object.keys(started.inputs).length > 0 ? <JsonView value={started.inputs} /> : <p className="muted">No inputs.</p>}
          </Card>
        </div>
      </div>

      <details className="raw">
        <summary>Raw journal ({journal.length} entries, hash-chained)</summary>
        <JsonView value={journal} collapseAt={1} />
      </details>
    </>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="fact">
      <div className="fact-label">{label}</div>
      <div className="fact-value">{children}</div>
    </div>
  );
}
