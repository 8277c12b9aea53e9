import { duration } from '../../format';
import { JsonView } from '../../json-view';
import { Link } from '../../router';
import { Badge, StatusBadge } from '../../ui';
import type { StepView } from './model';
import { Screenshots } from './screenshots';

/** Engine messages start with their source tags (`[flowctl] [executor-playwright]`): the page shows the words. */
export const plain = (message: string) => message.replace(/^(\[[^\]]+\]\s*)+/, '');

export function StepRow({
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
