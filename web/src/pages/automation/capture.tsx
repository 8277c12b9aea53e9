import { useEffect, useState } from 'react';
import { ApiError, get, patch, post, type AuthoringSession, type Automation } from '../../api';
import { pretty } from '../../format';
import { useLocation } from '../../router';
import { useIsOwner } from '../../session';
import { Async, Badge, Card, Digest, ErrorBox, Field, OwnerOnly, Time, useAction, useResource } from '../../ui';
import { StudioRecorder } from '../studio';

// Capture: the authoring session over its API (GET/PATCH /api/authoring/{id}, publish, reopen).

const splitList = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

export function Capture({ automation, onPublished, rerecordTab }: { automation: Automation; onPublished(): void; rerecordTab: boolean }) {
  const owner = useIsOwner();
  const { search } = useLocation();
  const driftStep = search.get('step');
  // The studio route (rerecord_href) re-records the named step in the browser; the capture tab names it for a JSON fix.
  const rerecord = owner && rerecordTab && driftStep ? driftStep : null;
  const s = useResource(() => get<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`).then((b) => b.session), [automation.id]);
  const [ops, setOps] = useState('');
  const [inputSlots, setInputSlots] = useState('');
  const [secretSlots, setSecretSlots] = useState('');
  const [parseError, setParseError] = useState<string | undefined>();
  const [published, setPublished] = useState<string | undefined>();
  const [mode, setMode] = useState<'record' | 'json'>(owner && (!driftStep || rerecord) ? 'record' : 'json');
  useEffect(() => {
    if (!s.data) return;
    setOps(pretty(s.data.captured_ops));
    setInputSlots(s.data.input_slots.join(', '));
    setSecretSlots(s.data.secret_slots.join(', '));
    // Reset only when another session version arrives.
  }, [s.data?.updated_at, s.data?.state]);
  const save = useAction(async () => {
    let captured: unknown;
    try {
      captured = JSON.parse(ops);
    } catch (err) {
      setParseError(`The ops are not valid JSON: ${(err as Error).message}`);
      return false;
    }
    setParseError(undefined);
    const b = await patch<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`, {
      captured_ops: captured,
      input_slots: splitList(inputSlots),
      secret_slots: splitList(secretSlots),
    });
    s.set(b.session);
    return true;
  });
  const publish = useAction(async () => {
    const b = await post<{ automation: Automation; flow_digest: string }>(`/api/authoring/${automation.id}/publish`);
    setPublished(b.flow_digest);
    await s.reload();
    onPublished();
  });
  const reopen = useAction(async () => {
    const b = await post<{ session: AuthoringSession }>(`/api/authoring/${automation.id}/edit`);
    s.set(b.session);
  });
  return (
    <Async r={s} label="Loading the capture">
      {(session) => {
        const editing = session.state === 'editing';
        const dirty = ops !== pretty(session.captured_ops) || inputSlots !== session.input_slots.join(', ') || secretSlots !== session.secret_slots.join(', ');
        const modes = (
          <div className="segmented" role="tablist" aria-label="How to capture">
            <button
              type="button"
              role="tab"
              aria-selected={mode === 'record'}
              className={`seg ${mode === 'record' ? 'active' : ''}`}
              disabled={!owner}
              title={owner ? undefined : 'Only owners record'}
              onClick={() => setMode('record')}
            >
              Record in the browser
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={mode === 'json'}
              className={`seg ${mode === 'json' ? 'active' : ''}`}
              onClick={() => setMode('json')}
            >
              Edit as JSON
            </button>
          </div>
        );
        if (mode === 'record' && owner) {
          return (
            <div className="stack">
              {modes}
              {!editing && !rerecord ? (
                <div className="notice">
                  The capture is published. Reopen it to record more steps; the live version stays live until the next publish.{' '}
                  <button type="button" className="btn btn-small" disabled={reopen.busy} onClick={() => void reopen.run()}>
                    {reopen.busy ? 'Reopening…' : 'Reopen for editing'}
                  </button>
                  {reopen.error ? <ErrorBox error={reopen.error} /> : null}
                </div>
              ) : null}
              <StudioRecorder
                automation={automation}
                session={session}
                rerecord={rerecord}
                onSession={(x) => s.set(x)}
                onPublished={() => {
                  void s.reload();
                  onPublished();
                }}
              />
            </div>
          );
        }
        return (
          <div className="stack">
            {modes}
            <div className="notice">
              The capture is the engine's recorded operations (<code>navigate</code>, <code>fill</code>, <code>click</code>, <code>extract</code>, …,
              docs/recordings.md), as <code>PATCH /api/authoring/{'{id}'}</code> takes them.
              {owner
                ? ' Owners can also record them by demonstrating in a remote browser (Record in the browser).'
                : ' Owners record them by demonstrating in a remote browser.'}
            </div>
            {driftStep ? (
              <div className="notice notice-bad">
                Step <code>{driftStep}</code> drifted: fix its target below (a locator with <code>fallbacks</code> survives small changes), then publish.
              </div>
            ) : null}
            <Card
              title={
                <span className="title-with-badge">
                  Capture <Badge tone={editing ? 'blue' : 'green'}>{editing ? 'editing' : 'published'}</Badge>
                </span>
              }
              subtitle={
                <>
                  Updated <Time at={session.updated_at} />.{' '}
                  {editing
                    ? 'Saved changes go live when an owner publishes.'
                    : 'Published: reopen it to change it. The live version stays live until the next publish.'}
                </>
              }
              actions={
                editing ? (
                  <>
                    <button type="button" className="btn" disabled={save.busy || !dirty} onClick={() => void save.run()}>
                      {save.busy ? 'Saving…' : 'Save capture'}
                    </button>
                    <OwnerOnly isOwner={owner}>
                      <button
                        type="button"
                        className="btn btn-primary"
                        disabled={publish.busy || dirty || session.captured_ops.length === 0}
                        title={dirty ? 'Save first' : undefined}
                        onClick={() => void publish.run()}
                      >
                        {publish.busy ? 'Publishing…' : 'Publish'}
                      </button>
                    </OwnerOnly>
                  </>
                ) : (
                  <OwnerOnly isOwner={owner}>
                    <button type="button" className="btn" disabled={reopen.busy} onClick={() => void reopen.run()}>
                      {reopen.busy ? 'Reopening…' : 'Reopen for editing'}
                    </button>
                  </OwnerOnly>
                )
              }
            >
              {published ? (
                <div className="notice notice-ok" role="status">
                  Published: version <Digest value={published} /> is live at <code>/v1/run/{automation.name}</code>.
                </div>
              ) : null}
              {session.error ? <ErrorBox error={new ApiError(422, 'publish_failed', session.error)} title="The last publish failed" /> : null}
              {parseError ? <div className="error-box">{parseError}</div> : null}
              {save.error ? <ErrorBox error={save.error} /> : null}
              {publish.error ? <ErrorBox error={publish.error} /> : null}
              {reopen.error ? <ErrorBox error={reopen.error} /> : null}
              <div className="form">
                <Field label="Operations (JSON array)" htmlFor="cap-ops">
                  <textarea
                    id="cap-ops"
                    className="code-input"
                    rows={Math.min(40, Math.max(8, ops.split('\n').length + 1))}
                    spellCheck={false}
                    readOnly={!editing}
                    value={ops}
                    onChange={(e) => setOps(e.target.value)}
                  />
                </Field>
                <div className="grid-2">
                  <Field
                    label="Input slots"
                    htmlFor="cap-inputs"
                    hint="Op slots that become inputs of the automation (the recorded value is the default). Comma-separated."
                  >
                    <input id="cap-inputs" readOnly={!editing} value={inputSlots} onChange={(e) => setInputSlots(e.target.value)} />
                  </Field>
                  <Field label="Secret slots" htmlFor="cap-secrets" hint="Op slots read from the org secret of the same name at run time; never captured.">
                    <input id="cap-secrets" readOnly={!editing} value={secretSlots} onChange={(e) => setSecretSlots(e.target.value)} />
                  </Field>
                </div>
              </div>
              {session.files.length > 0 ? (
                <div className="small">
                  <div className="io-label">Upload files</div>
                  {session.files.map((f) => (
                    <div key={f.name}>
                      <code>{f.name}</code> <span className="muted">{f.size} bytes</span>
                    </div>
                  ))}
                </div>
              ) : null}
            </Card>
          </div>
        );
      }}
    </Async>
  );
}
