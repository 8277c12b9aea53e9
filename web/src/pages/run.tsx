import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { artifactUrl, get, type Execution, type JournalEntry, type Run, type StepWarning } from '../api';
import { absTime, duration } from '../format';
import { JsonView } from '../json-view';
import { Link } from '../router';
import { useIsOwner } from '../session';
import { Async, Badge, Card, Digest, PageHeader, StatusBadge, Time, useResource } from '../ui';
import { RunLiveView } from './live';

/**
 * The run page: GET /api/executions/{id} (execution header, engine Run, journal), then, while the run
 * is in flight, GET /api/runs/{id}/stream (SSE: one event per journal entry, named by its kind) and,
 * unless it was queue-dispatched, its live frames (GET /api/automations/{id}/live?run_id=, a WebSocket).
 */

const KINDS: JournalEntry['event'][] = ['run_started', 'step_started', 'step_succeeded', 'step_failed', 'step_skipped', 'effect_recorded', 'run_finished'];

interface Attempt {
  attempt: number;
  started?: JournalEntry;
  ended?: JournalEntry;
}
interface StepView {
  id: string;
  tool?: string;
  attempts: Attempt[];
  skipped?: JournalEntry;
  effects: JournalEntry[];
  status: 'running' | 'succeeded' | 'failed' | 'skipped' | 'retrying';
  startMs?: number;
  endMs?: number;
  durationMs?: number;
  warnings: StepWarning[];
  artifacts: string[];
}

function model(journal: JournalEntry[]) {
  const steps = new Map<string, StepView>();
  let started: JournalEntry | undefined;
  let finished: JournalEntry | undefined;
  for (const e of journal) {
    if (e.event === 'run_started') started = e;
    else if (e.event === 'run_finished') finished = e;
    else if (e.step !== undefined) {
      let s = steps.get(e.step);
      if (!s) steps.set(e.step, (s = { id: e.step, attempts: [], effects: [], status: 'running', warnings: [], artifacts: [] }));
      const attempt = e.attempt ?? 1;
      let a = s.attempts.find((x) => x.attempt === attempt);
      if (!a && e.event !== 'step_skipped' && e.event !== 'effect_recorded') s.attempts.push((a = { attempt }));
      if (e.event === 'step_started' && a) {
        a.started = e;
        s.tool = e.tool ? `${e.tool.ref}@${e.tool.version}` : s.tool;
        s.startMs ??= Date.parse(e.at);
        s.status = 'running';
      } else if ((e.event === 'step_succeeded' || e.event === 'step_failed') && a) {
        a.ended = e;
        s.endMs = Date.parse(e.at);
        s.status = e.event === 'step_succeeded' ? 'succeeded' : e.will_retry ? 'retrying' : 'failed';
        s.warnings.push(...(e.warnings ?? []));
        s.artifacts.push(...(e.artifacts ?? []));
      } else if (e.event === 'step_skipped') {
        s.skipped = e;
        s.status = 'skipped';
      } else if (e.event === 'effect_recorded') s.effects.push(e);
    }
  }
  for (const s of steps.values()) {
    const timed = s.attempts.map((a) => a.ended?.duration_ms).filter((d): d is number => typeof d === 'number');
    s.durationMs = timed.length > 0 ? timed.reduce((x, y) => x + y, 0) : s.startMs !== undefined && s.endMs !== undefined ? s.endMs - s.startMs : undefined;
  }
  return { steps: [...steps.values()], started, finished };
}

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

/** Engine messages start with their source tags (`[flowctl] [executor-playwright]`): the page shows the words. */
const plain = (message: string) => message.replace(/^(\[[^\]]+\]\s*)+/, '');

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="fact">
      <div className="fact-label">{label}</div>
      <div className="fact-value">{children}</div>
    </div>
  );
}

function StepRow({
  step,
  runStart,
  total,
  failedHere,
  execution,
  before,
  rerecord,
}: {
  step: StepView;
  runStart: number;
  total: number;
  failedHere: boolean;
  execution: string;
  /** The last screenshot of an earlier step: the page this (failed) step looked at. */
  before?: { digest: string; step: string };
  /** The studio link to re-record this step (a locator_drift failure, for an owner). */
  rerecord?: string;
}) {
  const last = step.attempts[step.attempts.length - 1];
  const error = step.attempts
    .map((a) => a.ended)
    .filter((e) => e?.event === 'step_failed')
    .pop()?.error;
  const left = step.startMs !== undefined ? ((step.startMs - runStart) / total) * 100 : 0;
  const width = step.startMs !== undefined ? (((step.endMs ?? runStart + total) - step.startMs) / total) * 100 : 0;
  return (
    <li className={`tl-item tl-${step.status}${failedHere ? ' tl-failed-here' : ''}`} data-step={step.id}>
      <span className="tl-dot" aria-hidden="true" />
      <div className="tl-main">
        <div className="tl-head">
          <span className="tl-name">{step.id}</span>
          {step.tool ? <code className="tl-tool">{step.tool}</code> : null}
          <StatusBadge status={step.status === 'retrying' ? 'running' : step.status} />
          {step.attempts.length > 1 ? <Badge tone="amber">{step.attempts.length} attempts</Badge> : null}
          <span className="tl-time">{step.status === 'running' ? 'running…' : duration(step.durationMs)}</span>
        </div>
        {step.startMs !== undefined ? (
          <div className="tl-bar" aria-hidden="true">
            <span style={{ left: `${Math.max(0, Math.min(100, left))}%`, width: `${Math.max(0.8, Math.min(100 - left, width))}%` }} />
          </div>
        ) : null}
        {step.skipped ? <div className="muted small">Skipped: {step.skipped.reason}</div> : null}
        {step.warnings.map((w, i) => (
          <div key={i} className="warning-box">
            <strong>{w.code === 'drift' ? 'Locator drift' : w.code}</strong>: {w.message}
            {w.code === 'drift' && Array.isArray((w.data as { tried?: unknown[] })?.tried) ? (
              <ul className="tried">
                {((w.data as { tried: { locator: string; count: number }[] }).tried ?? []).map((t, n) => (
                  <li key={n}>
                    <code>{t.locator}</code>: {t.count} match{t.count === 1 ? '' : 'es'}
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ))}
        {error ? (
          <div className="error-box compact">
            <code className="error-code">{error.code}</code> {plain(error.message)}
            {rerecord && error.code === 'locator_drift' ? (
              <div className="error-actions">
                <Link to={rerecord} className="btn btn-small btn-primary">
                  Re-record this step
                </Link>
              </div>
            ) : null}
          </div>
        ) : null}
        {step.artifacts.length > 0 ? (
          <Screenshots execution={execution} shots={step.artifacts.map((d) => ({ digest: d, label: `Screenshot after step ${step.id}` }))} />
        ) : before ? (
          <Screenshots
            execution={execution}
            shots={[{ digest: before.digest, label: `The page before step ${step.id} (after ${before.step})` }]}
            caption={`The page this step looked at (after ${before.step})`}
          />
        ) : null}
        <details className="tl-details">
          <summary>Input and output</summary>
          <div className="io">
            <div>
              <div className="io-label">Input</div>
              <JsonView value={last?.started?.input ?? null} collapseAt={2} />
            </div>
            <div>
              <div className="io-label">Output</div>
              <JsonView value={last?.ended?.event === 'step_succeeded' ? last.ended.output : null} collapseAt={2} />
            </div>
          </div>
          {step.effects.length > 0 ? (
            <div className="small">
              <div className="io-label">Effects</div>
              <ul className="effects">
                {step.effects.map((e) => (
                  <li key={e.seq}>
                    <Badge tone="gray">{e.effect?.kind}</Badge> <code>{e.effect?.target}</code>
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </details>
      </div>
    </li>
  );
}

/**
 * A step's screenshots as thumbnails (GET /api/executions/{id}/artifacts/{digest}); a click shows one
 * full size. Each thumbnail has its loading and error state; a failed one can be loaded again.
 */
function Screenshots({ execution, shots, caption }: { execution: string; shots: { digest: string; label: string }[]; caption?: string }) {
  const [open, setOpen] = useState<{ digest: string; label: string } | null>(null);
  return (
    <div className="shots" data-testid="step-shots">
      {caption ? <div className="io-label">{caption}</div> : null}
      <div className="shot-row">
        {shots.map((s) => (
          <Thumbnail key={s.digest} src={artifactUrl(execution, s.digest)} label={s.label} onOpen={() => setOpen(s)} />
        ))}
      </div>
      {open ? <Lightbox src={artifactUrl(execution, open.digest)} label={open.label} onClose={() => setOpen(null)} /> : null}
    </div>
  );
}

function Thumbnail({ src, label, onOpen }: { src: string; label: string; onOpen(): void }) {
  const [state, setState] = useState<'loading' | 'ok' | 'error'>('loading');
  const [attempt, setAttempt] = useState(0);
  return (
    <span className={`shot shot-${state}`}>
      <button type="button" className="shot-button" onClick={onOpen} disabled={state !== 'ok'} aria-label={`${label}: show full size`} title={label}>
        <img key={attempt} src={src} alt={label} loading="lazy" onLoad={() => setState('ok')} onError={() => setState('error')} />
      </button>
      {state === 'loading' ? (
        <span className="shot-state" aria-live="polite">
          <span className="spinner" aria-hidden="true" /> Loading screenshot…
        </span>
      ) : null}
      {state === 'error' ? (
        <span className="shot-state shot-error" role="alert">
          The screenshot could not be loaded.{' '}
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              setState('loading');
              setAttempt((n) => n + 1);
            }}
          >
            Retry
          </button>
        </span>
      ) : null}
    </span>
  );
}

function Lightbox({ src, label, onClose }: { src: string; label: string; onClose(): void }) {
  const close = useRef<HTMLButtonElement | null>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    close.current?.focus();
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: Escape closes it (the window listener above) and its Close button has the focus; the backdrop click is a pointer shortcut
    <div className="lightbox" role="dialog" aria-modal="true" aria-label={label} onClick={onClose}>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: only stops a click on the picture from reaching the backdrop */}
      <figure className="lightbox-body" onClick={(e) => e.stopPropagation()}>
        <figcaption>
          <span>{label}</span>
          <button ref={close} type="button" className="btn btn-small" onClick={onClose}>
            Close
          </button>
        </figcaption>
        <img src={src} alt={label} />
      </figure>
    </div>
  );
}
