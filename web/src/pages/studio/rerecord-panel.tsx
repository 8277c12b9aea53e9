import { Badge, Card, ErrorBox } from '../../ui';
import type { ApiError } from '../../api';
import { describeTarget, type Op } from './ops';
import type { Insert, Replay, Status } from './state';

/**
 * The re-record panel: which step drifted and what happens, the replay's progress, where the recorded
 * steps go, and a replay that stopped (with a way to re-record from the step it stopped at).
 */
export function RerecordPanel({
  step,
  index,
  op,
  status,
  replay,
  insert,
  busy,
  error,
  editing,
  onStart,
}: {
  step: string;
  index: number;
  op: Op | undefined;
  status: Status;
  replay: Replay | null;
  insert: Insert | null;
  busy: boolean;
  error: ApiError | undefined;
  editing: boolean;
  onStart(step: string): void;
}) {
  const n = index + 1;
  const what = op ? (op.kind === 'navigate' ? op.url : describeTarget(op.target)) : null;
  const failed = replay?.phase === 'failed' ? replay : null;
  let body;
  if (failed) {
    body = (
      <>
        <div className="error-box" role="alert">
          <div className="error-head">
            <strong>
              The replay stopped at step {failed.step} of {failed.of}
              {failed.id ? ` (${failed.id})` : ''}
            </strong>
            <code className="error-code">{failed.code}</code>
          </div>
          <p>{failed.message.replace(/^replay stopped at step [^:]+: /, '')}</p>
          {failed.code === 'locator_drift' ? <p>That step changed on the site too: re-record from it instead (the capture is unchanged).</p> : null}
        </div>
        <div className="rerecord-actions">
          {failed.id && failed.id !== step ? (
            <button type="button" className="btn btn-primary" disabled={busy} onClick={() => onStart(failed.id!)}>
              Re-record from step {failed.step} ({failed.id})
            </button>
          ) : null}
          <button type="button" className="btn" disabled={busy} onClick={() => onStart(step)}>
            Try the replay again
          </button>
        </div>
      </>
    );
  } else if (insert && (status === 'live' || insert.replaced)) {
    body = insert.replaced ? (
      <p>
        Step {n} is re-recorded ({insert.added} step{insert.added === 1 ? '' : 's'} recorded, marked new below). Record more if the flow needs them, delete
        later steps it no longer needs, then publish.
      </p>
    ) : (
      <p>
        The page is as it was before step {n}. <strong>Show the changed step now</strong>: the first action you record replaces step {n}; more actions follow
        it, and the steps after it stay.
      </p>
    );
  } else if (status === 'connecting') {
    body = (
      <p>{replay?.phase === 'replaying' ? `Replaying step ${replay.step} of ${replay.of} (${replay.id}) in a fresh browser…` : 'Starting a fresh browser…'}</p>
    );
  } else {
    body = (
      <>
        <p>
          A run could not find the element of step {n}
          {what ? (
            <>
              {' '}
              (a {op!.kind} {op!.kind === 'navigate' ? 'to' : 'on'} <code>{what}</code>)
            </>
          ) : null}
          . Re-recording replays steps 1 to {Math.max(0, n - 1)} in a fresh browser, so the page is where step {n} starts; then you show the step on the changed
          page. What you record replaces step {n}; the steps after it stay.
          {editing ? '' : ' The capture is published: it is reopened for editing first (the live version stays live until you publish).'}
        </p>
        {error ? <ErrorBox error={error} /> : null}
        <div className="rerecord-actions">
          <button type="button" className="btn btn-primary" disabled={busy || status === 'live'} onClick={() => onStart(step)}>
            {busy ? 'Opening…' : status === 'closed' ? `Re-record step ${n} again` : `Re-record step ${n}`}
          </button>
        </div>
      </>
    );
  }
  return (
    <Card
      className="rerecord-card"
      title={
        <span className="title-with-badge">
          Re-record step {n} <Badge tone="red">{step}</Badge>
        </span>
      }
    >
      <div data-testid="rerecord-panel">{body}</div>
    </Card>
  );
}
