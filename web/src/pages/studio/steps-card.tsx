import { useState, type Dispatch } from 'react';
import { patch, post, type AuthoringSession, type Automation, type RunResult } from '../../api';
import { Link } from '../../router';
import { Card, Digest, Empty, ErrorBox, useAction } from '../../ui';
import { OpRow } from './op-row';
import { IDENT, modeOf, slotsOf, slugOf, type Mode, type Op } from './ops';
import type { Insert, StudioEvent } from './state';

/**
 * The captured steps: the op list, edited with PATCH (delete, reorder, optional, input or secret slot
 * for a fill), a test run and publish. Both first commit the typing the page has not committed yet.
 */
export function StepsCard({
  automation,
  session,
  onSession,
  onPublished,
  commitTyping,
  stop,
  dispatch,
  fromStep,
  driftedIndex,
  insert,
}: {
  automation: Automation;
  session: AuthoringSession;
  onSession(s: AuthoringSession): void;
  onPublished(): void;
  commitTyping(): Promise<void>;
  stop(commit?: boolean): Promise<void>;
  dispatch: Dispatch<StudioEvent>;
  fromStep: string | null;
  /** The drifted step's index (re-record), else -1. */
  driftedIndex: number;
  insert: Insert | null;
}) {
  const editing = session.state === 'editing';
  const ops = session.captured_ops as Op[];
  const [published, setPublished] = useState<string | undefined>();
  // Editing the captured ops: PATCH the whole capture.
  const save = useAction(async (nextOps: Op[], modes: Mode[]) => {
    // A literal op keeps its recorded value and names no slot: the service refuses a slot that is in
    // neither list (captured_ops.N.slot), so a stale one is dropped here.
    const sent = nextOps.map((op, i) => {
      if (modes[i] !== 'literal' || op.slot === undefined) return op;
      const { slot: _slot, ...rest } = op;
      return rest as Op;
    });
    const b = await patch<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`, { captured_ops: sent, ...slotsOf(sent, modes) });
    onSession(b.session);
  });
  const modes = ops.map((op) => modeOf(op, session));
  const remove = (i: number) =>
    void save.run(
      ops.filter((_, j) => j !== i),
      modes.filter((_, j) => j !== i),
    );
  // Optional: the step is skipped when its element does not turn up (a banner shown on some visits).
  const toggleOptional = (i: number) => {
    const { optional, ...rest } = ops[i]!;
    void save.run(
      ops.map((o, j) => (j === i ? (optional ? rest : { ...rest, optional: true }) : o)),
      modes,
    );
  };
  const swap = (i: number, j: number) => {
    const o = [...ops];
    const m = [...modes];
    [o[i], o[j]] = [o[j]!, o[i]!];
    [m[i], m[j]] = [m[j]!, m[i]!];
    void save.run(o, m);
  };
  const setMode = (i: number, mode: Mode) => {
    const op: Op = { ...ops[i] };
    if (mode === 'literal') delete op.slot;
    else op.slot = op.slot ?? slugOf(op);
    // A secret slot never keeps the typed value.
    if (mode === 'secret') delete op.value;
    const o = ops.map((x, j) => (j === i ? op : x));
    void save.run(
      o,
      modes.map((x, j) => (j === i ? mode : x)),
    );
  };
  const rename = (i: number, slot: string) => {
    if (!IDENT.test(slot)) return dispatch({ type: 'say', message: 'A slot name is letters, digits and _, not starting with a digit.' });
    const o = ops.map((x, j) => (j === i ? { ...x, slot } : x));
    void save.run(o, modes);
  };
  // Test the capture before publishing: compiled as publish compiles it, run once in a fresh browser
  // context with the recorded samples (POST /api/authoring/{id}/test); nothing is published.
  const [tested, setTested] = useState<RunResult | undefined>();
  const testRun = useAction(async () => {
    setTested(undefined);
    await commitTyping();
    setTested(await post<RunResult>(`/api/authoring/${automation.id}/test`));
  });
  const publish = useAction(async () => {
    await commitTyping();
    const b = await post<{ automation: Automation; flow_digest: string }>(`/api/authoring/${automation.id}/publish`);
    setPublished(b.flow_digest);
    void stop(false);
    onPublished();
  });
  return (
    <Card
      title={`Captured steps (${ops.length})`}
      subtitle="Saved as you go. Mark a typed value as an input (a parameter of the automation) or a secret (read from the org secret of that name at run time)."
      actions={
        <>
          <button
            type="button"
            className="btn"
            disabled={!editing || testRun.busy || publish.busy || ops.length === 0}
            onClick={() => void testRun.run()}
            title="Run the captured steps once in a fresh browser, with the recorded samples, without publishing"
          >
            {testRun.busy ? 'Testing…' : 'Test run'}
          </button>
          <button type="button" className="btn btn-primary" disabled={!editing || publish.busy || ops.length === 0} onClick={() => void publish.run()}>
            {publish.busy ? 'Publishing…' : 'Publish'}
          </button>
        </>
      }
    >
      {tested ? (
        <div className={`notice ${tested.status === 'succeeded' ? 'notice-ok' : 'notice-bad'}`} role="status" data-testid="test-result">
          Test run {tested.status}
          {tested.error ? (
            <>
              {' '}
              at <code>{tested.error.step ?? 'start'}</code>: <code>{tested.error.code}</code> {tested.error.message}
            </>
          ) : tested.output !== undefined ? (
            <>
              {' '}
              with output <code>{JSON.stringify(tested.output).slice(0, 200)}</code>
            </>
          ) : null}{' '}
          · <Link to={`/runs/${tested.run_id}`}>open the run</Link>
        </div>
      ) : null}
      {testRun.error ? <ErrorBox error={testRun.error} title="Test run failed to start" /> : null}
      {published ? (
        <div className="notice notice-ok" role="status">
          Published: version <Digest value={published} /> is live at <code>/v1/run/{automation.name}</code>.
        </div>
      ) : null}
      {save.error ? <ErrorBox error={save.error} /> : null}
      {publish.error ? <ErrorBox error={publish.error} title="Publish failed" /> : null}
      {ops.length === 0 ? (
        <Empty title="Nothing captured yet">Start recording, then click and type in the page: each action appears here.</Empty>
      ) : (
        <ol className="op-list" data-testid="op-list">
          {ops.map((op, i) => {
            const isDrifted = fromStep !== null && i === driftedIndex && !insert?.replaced && `${op.kind}_${i + 1}` === fromStep;
            const isNew = insert !== null && insert.added > 0 && i >= insert.index - insert.added && i < insert.index;
            return (
              <OpRow
                key={i}
                op={op}
                i={i}
                count={ops.length}
                mode={modes[i]!}
                isDrifted={isDrifted}
                isNew={isNew}
                editing={editing}
                busy={save.busy}
                edits={{ setMode, rename, toggleOptional, swap, remove }}
              />
            );
          })}
        </ol>
      )}
    </Card>
  );
}
