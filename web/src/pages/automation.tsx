import { useEffect, useState, type FormEvent } from 'react';
import {
  ApiError,
  del,
  get,
  patch,
  post,
  rerecordPath,
  type AuthoringSession,
  type Automation,
  type FlowSpecLike,
  type Member,
  type Schedule,
  type Version,
} from '../api';
import { pretty } from '../format';
import { JsonView } from '../json-view';
import { Link, useLocation } from '../router';
import { useIsOwner } from '../session';
import {
  Async,
  Badge,
  Card,
  ConfirmButton,
  CopyButton,
  Digest,
  Empty,
  ErrorBox,
  Field,
  Loading,
  OwnerOnly,
  PageHeader,
  StatusBadge,
  Time,
  asApiError,
  useAction,
  useResource,
  FormFooter,
} from '../ui';
import { KeysPanel } from './keys';
import { ExecutionsList } from './runs';
import { SecretsPanel } from './secrets';
import { StudioRecorder } from './studio';
import { RunLiveView } from './live';

/** One automation (GET /api/automations/{id}) with a tab per concern. */

const TABS: [string, string][] = [
  ['overview', 'Overview'],
  ['capture', 'Capture'],
  ['versions', 'Versions'],
  ['schedules', 'Schedules'],
  ['executions', 'Executions'],
  ['live', 'Watch live'],
  ['flowspec', 'FlowSpec'],
  ['keys', 'API keys'],
  ['secrets', 'Secrets'],
];

export function AutomationPage({ id, tab }: { id: string; tab: string }) {
  const a = useResource(() => get<{ automation: Automation }>(`/api/automations/${encodeURIComponent(id)}`).then((b) => b.automation), [id]);
  // The drift link (rerecord_href) is /automations/{id}/studio?step=…: the capture tab, recording in
  // the browser from that step (re-record), or for a member its JSON with the step named.
  const current = tab === 'studio' ? 'capture' : tab;
  return (
    <div className="page">
      <Async r={a} label="Loading the automation">
        {(automation) => (
          <>
            <PageHeader
              crumbs={<Link to="/automations">Automations</Link>}
              title={
                <span className="title-with-badge">
                  {automation.name} <StatusBadge status={automation.status} />
                  {automation.needs_attention ? <Badge tone="amber">needs attention</Badge> : null}
                </span>
              }
              subtitle={automation.task || 'No task description yet.'}
            />
            {automation.status === 'failing' ? (
              <DriftNotice automation={automation} />
            ) : automation.needs_attention ? (
              <DegradedNotice automation={automation} />
            ) : null}
            <div className="tabs" role="tablist">
              {TABS.map(([key, label]) => (
                <Link
                  key={key}
                  to={`/automations/${automation.id}/${key}`}
                  role="tab"
                  aria-selected={current === key}
                  className={`tab ${current === key ? 'active' : ''}`}
                >
                  {label}
                </Link>
              ))}
            </div>
            <div className="tab-body">
              {current === 'overview' ? <Overview automation={automation} onChange={(x) => a.set(x)} /> : null}
              {current === 'capture' ? <Capture automation={automation} rerecordTab={tab === 'studio'} onPublished={() => void a.reload()} /> : null}
              {current === 'versions' ? <Versions automation={automation} onChange={(x) => a.set(x)} /> : null}
              {current === 'schedules' ? <Schedules automation={automation} /> : null}
              {current === 'executions' ? <ExecutionsList flow={automation.name} compact /> : null}
              {current === 'live' ? <WatchLive automation={automation} /> : null}
              {current === 'flowspec' ? <FlowSpecTab automation={automation} /> : null}
              {current === 'keys' ? <KeysPanel automation={automation.name} /> : null}
              {current === 'secrets' ? <SecretsTab automation={automation} /> : null}
              {!TABS.some(([k]) => k === current) ? <Empty title="No such tab" /> : null}
            </div>
          </>
        )}
      </Async>
    </div>
  );
}

// Watch live: the browser of a synchronous run of this automation, as it runs (read-only).

function WatchLive({ automation }: { automation: Automation }) {
  return (
    <Card
      title="Watch live"
      subtitle={
        automation.status === 'draft'
          ? 'A draft never runs: publish the capture first. Runs of the live version appear here as they start.'
          : 'The browser page of a run of this automation, while it runs: the newest run in flight, or the next one to start (gateway or MCP, synchronous dispatch).'
      }
    >
      <RunLiveView automationId={automation.id} />
    </Card>
  );
}

function DriftNotice({ automation }: { automation: Automation }) {
  const owner = useIsOwner();
  const { path } = useLocation();
  const step = automation.rerecord_href ? new URL(automation.rerecord_href, window.location.origin).searchParams.get('step') : null;
  const inStudio = path.endsWith('/studio');
  return (
    <div className="notice notice-bad drift-notice">
      <div>
        <strong>Locator drift.</strong> A run could not find{' '}
        {step ? (
          <>
            the element of step <code>{step}</code>
          </>
        ) : (
          'an element'
        )}{' '}
        on the site, so the automation is marked failing (it still runs; the drifted step fails closed).
        {owner
          ? ' Re-record the step (the studio replays the steps before it, you show the changed one), edit the capture, or roll back to a version that works.'
          : ' An owner can re-record the step, edit the capture, or roll back to a version that works.'}
      </div>
      {!inStudio ? (
        <div className="drift-actions">
          {owner && automation.rerecord_href ? (
            <Link to={rerecordPath(automation.rerecord_href)} className="btn btn-small btn-primary">
              Re-record{step ? ` step ${step}` : ''}
            </Link>
          ) : null}
          <Link to={`/automations/${automation.id}/capture${step ? `?step=${encodeURIComponent(step)}` : ''}`} className="btn btn-small">
            Open the capture
          </Link>
        </div>
      ) : null}
    </div>
  );
}

/** Degraded: published, but a run succeeded only through a fallback locator (until a clean run or a new publish). */
function DegradedNotice({ automation }: { automation: Automation }) {
  const owner = useIsOwner();
  const step = automation.rerecord_href ? new URL(automation.rerecord_href, window.location.origin).searchParams.get('step') : null;
  return (
    <div className="notice notice-warn drift-notice" data-testid="degraded-notice">
      <div>
        <strong>Degraded.</strong> The last run succeeded, but{' '}
        {step ? (
          <>
            step <code>{step}</code>
          </>
        ) : (
          'a step'
        )}{' '}
        found its element only through a fallback locator: the site changed. The automation still runs; the next clean run clears this notice, so does
        publishing a new version.
        {owner ? ' Re-record the step to make the new element its primary locator.' : ''}
      </div>
      {owner && automation.rerecord_href ? (
        <div className="drift-actions">
          <Link to={rerecordPath(automation.rerecord_href)} className="btn btn-small">
            Re-record{step ? ` step ${step}` : ''}
          </Link>
        </div>
      ) : null}
    </div>
  );
}

// Overview: details, corrections (any member), MCP (owner), how to call it.

function Overview({ automation, onChange }: { automation: Automation; onChange(a: Automation): void }) {
  const owner = useIsOwner();
  const [site, setSite] = useState(automation.site);
  const [task, setTask] = useState(automation.task);
  const save = useAction(async () => onChange((await patch<{ automation: Automation }>(`/api/automations/${automation.id}`, { site, task })).automation));
  const mcp = useAction(async (on: boolean) =>
    onChange((await patch<{ automation: Automation }>(`/api/automations/${automation.id}`, { mcp_enabled: on })).automation),
  );
  const spec = useResource(
    () => (automation.live_digest ? fetchSpec(automation.name).then((s) => s.spec) : Promise.resolve(undefined)),
    [automation.name, automation.live_digest],
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run();
  };
  const inputs = Object.entries(spec.data?.inputs ?? {}).filter(([, c]) => !c.secret);
  const example = Object.fromEntries(
    inputs.map(([n, c]) => [n, c.default ?? (c.type === 'number' || c.type === 'integer' ? 0 : c.type === 'boolean' ? false : '')]),
  );
  const origin = window.location.origin;
  return (
    <div className="grid-2">
      <Card title="Details">
        <dl className="dl">
          <dt>Endpoint</dt>
          <dd>
            <code>POST /v1/run/{automation.name}</code>
          </dd>
          <dt>Site</dt>
          <dd>
            <a href={automation.site} target="_blank" rel="noreferrer">
              {automation.site}
            </a>
          </dd>
          <dt>Live version</dt>
          <dd>
            <Digest value={automation.live_digest} />
          </dd>
          <dt>Calls (7 d)</dt>
          <dd>{automation.calls_7d}</dd>
          <dt>Last run</dt>
          <dd>
            <Time at={automation.last_run_at} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={automation.created_at} />
          </dd>
          <dt>MCP tool</dt>
          <dd>
            <label className="check">
              <input type="checkbox" checked={automation.mcp_enabled} disabled={!owner || mcp.busy} onChange={(e) => void mcp.run(e.target.checked)} /> offered
              on <code>/mcp</code>
            </label>
            {!owner ? <div className="muted small">Only an owner can change this.</div> : null}
          </dd>
        </dl>
        {mcp.error ? <ErrorBox error={mcp.error} /> : null}
      </Card>
      <Card
        title="Call it"
        subtitle={automation.status === 'draft' ? 'Publish a version first: a draft never runs.' : 'With an API key of this org (API keys tab).'}
      >
        {automation.status === 'draft' ? (
          <p className="muted">
            The <Link to={`/automations/${automation.id}/capture`}>capture</Link> becomes a version when an owner publishes it.
          </p>
        ) : (
          <>
            <pre className="code-block code-wrap">{`curl -X POST ${origin}/v1/run/${automation.name} \\
  -H "authorization: Bearer $FLOWCTL_KEY" \\
  -H 'content-type: application/json' \\
  -d '${JSON.stringify({ inputs: example })}'`}</pre>
            {inputs.length > 0 ? (
              <div className="table-wrap">
                <table className="table table-small">
                  <thead>
                    <tr>
                      <th>Input</th>
                      <th>Type</th>
                      <th>Required</th>
                      <th>Default</th>
                    </tr>
                  </thead>
                  <tbody>
                    {inputs.map(([n, c]) => (
                      <tr key={n}>
                        <td>
                          <code>{n}</code>
                        </td>
                        <td>{c.type}</td>
                        <td>{c.required ? 'yes' : 'no'}</td>
                        <td>{c.default === undefined ? '—' : <code>{JSON.stringify(c.default)}</code>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : spec.state === 'loading' ? (
              <Loading label="Reading inputs" />
            ) : (
              <p className="muted small">No inputs.</p>
            )}
          </>
        )}
      </Card>
      <Card title="Correct site or task" className="span-2">
        <form className="form" onSubmit={submit}>
          <Field label="Site" htmlFor="ov-site">
            <input id="ov-site" required value={site} onChange={(e) => setSite(e.target.value)} />
          </Field>
          <Field label="Task" htmlFor="ov-task" hint="Publishing uses it as the FlowSpec's description; MCP clients see it.">
            <textarea id="ov-task" rows={2} value={task} onChange={(e) => setTask(e.target.value)} />
          </Field>
          {save.error ? <ErrorBox error={save.error} /> : null}
          <div className="form-actions">
            <button type="submit" className="btn btn-primary" disabled={save.busy || (site === automation.site && task === automation.task)}>
              {save.busy ? 'Saving…' : 'Save'}
            </button>
          </div>
        </form>
      </Card>
    </div>
  );
}

// Capture: the authoring session over its API (GET/PATCH /api/authoring/{id}, publish, reopen).

const splitList = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

function Capture({ automation, onPublished, rerecordTab }: { automation: Automation; onPublished(): void; rerecordTab: boolean }) {
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

// Versions: GET /api/automations/{id}/versions; roll back (owner).

function Versions({ automation, onChange }: { automation: Automation; onChange(a: Automation): void }) {
  const owner = useIsOwner();
  const v = useResource(() => get<{ versions: Version[] }>(`/api/automations/${automation.id}/versions`).then((b) => b.versions), [automation.id]);
  const members = useResource(() => get<{ members: Member[] }>('/api/members').then((b) => new Map(b.members.map((m) => [m.user_id, m.email]))), []);
  const rollback = useAction(async (digest: string) =>
    onChange((await post<{ automation: Automation }>(`/api/automations/${automation.id}/rollback`, { flow_digest: digest })).automation),
  );
  return (
    <div className="stack">
      {rollback.error ? <ErrorBox error={rollback.error} /> : null}
      <Async
        r={v}
        label="Loading versions"
        isEmpty={(x) => x.length === 0}
        empty={
          <Card>
            <Empty
              title="No version yet"
              action={
                <Link to={`/automations/${automation.id}/capture`} className="btn">
                  Open the capture
                </Link>
              }
            >
              Publishing the capture creates the first version.
            </Empty>
          </Card>
        }
      >
        {(versions) => (
          <Card
            className="card-flush"
            title="Published versions"
            subtitle="Each publish is a content-addressed FlowSpec. Rolling back moves the live pointer; nothing is rebuilt."
          >
            <div className="table-wrap">
              <table className="table">
                <thead>
                  <tr>
                    <th>Version</th>
                    <th>Published</th>
                    <th>By</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {versions.map((x) => {
                    const live = x.flow_digest === automation.live_digest;
                    return (
                      <tr key={x.flow_digest}>
                        <td>
                          <Digest value={x.flow_digest} /> {live ? <Badge tone="green">live</Badge> : null}
                        </td>
                        <td>
                          <Time at={x.created_at} />
                        </td>
                        <td className="small">{members.data?.get(x.created_by) ?? x.created_by.slice(0, 8)}</td>
                        <td className="right">
                          {live ? null : owner ? (
                            <ConfirmButton
                              label="Roll back to this"
                              confirm="Make this version live?"
                              busy={rollback.busy}
                              onConfirm={() => void rollback.run(x.flow_digest)}
                            />
                          ) : (
                            <span className="muted small">owners roll back</span>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          </Card>
        )}
      </Async>
    </div>
  );
}

// Schedules: list, create, enable/disable, delete (owner).

function Schedules({ automation }: { automation: Automation }) {
  const owner = useIsOwner();
  const list = useResource(() => get<{ schedules: Schedule[] }>(`/api/automations/${automation.id}/schedules`).then((b) => b.schedules), [automation.id]);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const [cron, setCron] = useState('0 7 * * 1-5');
  const [timezone, setTimezone] = useState(zone && zone !== 'UTC' ? zone : '');
  const [inputs, setInputs] = useState('{}');
  const [enabled, setEnabled] = useState(true);
  const [inputsError, setInputsError] = useState<string>();
  const create = useAction(async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(inputs || '{}');
    } catch (err) {
      setInputsError(`Inputs are not valid JSON: ${(err as Error).message}`);
      return;
    }
    setInputsError(undefined);
    await post(`/api/automations/${automation.id}/schedules`, { cron, inputs: parsed, enabled, ...(timezone.trim() ? { timezone: timezone.trim() } : {}) });
    await list.reload();
  });
  const toggle = useAction(async (s: Schedule) => {
    await patch(`/api/schedules/${s.id}`, { enabled: !s.enabled });
    await list.reload();
  });
  const remove = useAction(async (s: Schedule) => {
    await del(`/api/schedules/${s.id}`);
    await list.reload();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  return (
    <div className="stack">
      {owner ? (
        <Card title="New schedule" subtitle="It runs the version live now, with these inputs, whatever is published later.">
          {automation.status === 'draft' ? (
            <p className="muted">Publish a version first: a draft cannot be scheduled.</p>
          ) : (
            <form className="form form-inline-grid" onSubmit={submit}>
              <Field label="Cron" htmlFor="sch-cron" hint="5 fields (minute hour day month weekday), or 6 with seconds first.">
                <input id="sch-cron" required value={cron} onChange={(e) => setCron(e.target.value)} className="mono" />
              </Field>
              <Field label="Time zone" htmlFor="sch-tz" hint="IANA name; empty: UTC.">
                <input id="sch-tz" value={timezone} onChange={(e) => setTimezone(e.target.value)} placeholder="UTC" />
              </Field>
              <Field label="Inputs (JSON object)" htmlFor="sch-inputs" hint="Non-secret inputs only; secrets resolve at every fire.">
                <input id="sch-inputs" value={inputs} onChange={(e) => setInputs(e.target.value)} className="mono" />
              </Field>
              <div className="field">
                <label>&nbsp;</label>
                <label className="check">
                  <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> enabled
                </label>
              </div>
              {inputsError ? <div className="error-box span-all">{inputsError}</div> : null}
              <FormFooter action={create} label="Create schedule" busyLabel="Creating…" />
            </form>
          )}
        </Card>
      ) : null}
      {toggle.error ? <ErrorBox error={toggle.error} /> : null}
      {remove.error ? <ErrorBox error={remove.error} /> : null}
      <Async
        r={list}
        label="Loading schedules"
        isEmpty={(x) => x.length === 0}
        empty={
          <Card>
            <Empty title="No schedules">{owner ? 'Create one above.' : 'Owners create schedules.'}</Empty>
          </Card>
        }
      >
        {(schedules) => (
          <Card className="card-flush" title="Schedules">
            <div className="table-wrap">
              <table className="table">
                <thead>
                  <tr>
                    <th>Cron</th>
                    <th>Next fire</th>
                    <th>Inputs</th>
                    <th>Version</th>
                    <th>Enabled</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {schedules.map((s) => (
                    <tr key={s.id} className={s.enabled ? '' : 'row-dim'}>
                      <td>
                        <code>{s.cron}</code> <span className="muted small">{s.timezone ?? 'UTC'}</span>
                      </td>
                      <td>{s.next_fire_at ? <Time at={s.next_fire_at} /> : <span className="muted">disabled</span>}</td>
                      <td className="small">
                        <code>{JSON.stringify(s.inputs)}</code>
                      </td>
                      <td>
                        <Digest value={s.flow_digest} />
                      </td>
                      <td>
                        <label className="switch">
                          <input
                            type="checkbox"
                            aria-label={`Enable schedule ${s.cron}`}
                            checked={s.enabled}
                            disabled={!owner || toggle.busy}
                            onChange={() => void toggle.run(s)}
                          />
                          <span>{s.enabled ? 'on' : 'off'}</span>
                        </label>
                      </td>
                      <td className="right">
                        {owner ? <ConfirmButton label="Delete" confirm="Delete?" busy={remove.busy} onConfirm={() => void remove.run(s)} /> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
        )}
      </Async>
    </div>
  );
}

// FlowSpec: GET /api/flowspecs/{name}, the bytes the gateway executes (ETag = digest).

async function fetchSpec(name: string): Promise<{ spec: FlowSpecLike; etag: string | null }> {
  const res = await fetch(`/api/flowspecs/${encodeURIComponent(name)}`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(res.status, 'invalid_response', `HTTP ${res.status}`);
  }
  if (!res.ok) throw new ApiError(res.status, body?.error ?? 'http_error', body?.message ?? `HTTP ${res.status}`);
  return { spec: body, etag: res.headers.get('etag') };
}

const NotPublished = () => (
  <Card>
    <Empty title="Not published yet">This automation is a draft: it has no live FlowSpec. Publish the capture (Capture tab) to create one.</Empty>
  </Card>
);

function FlowSpecTab({ automation }: { automation: Automation }) {
  // A draft has nothing to read; a 404 (e.g. published elsewhere then gone) is `null`, not `undefined`
  // (Async shows `undefined` as still loading).
  if (automation.status === 'draft' || !automation.live_digest) return <NotPublished />;
  return <LiveFlowSpec automation={automation} />;
}

function LiveFlowSpec({ automation }: { automation: Automation }) {
  const r = useResource(
    () =>
      fetchSpec(automation.name).catch((err) => {
        if (asApiError(err).status === 404) return null;
        throw err;
      }),
    [automation.name, automation.live_digest],
  );
  return (
    <Async r={r} label="Loading the FlowSpec" isEmpty={(x) => x === null} empty={<NotPublished />}>
      {(x) => {
        const spec = x!.spec;
        const digest = x!.etag?.replace(/"/g, '') ?? automation.live_digest ?? '';
        const text = JSON.stringify(spec, null, 2);
        return (
          <div className="stack">
            <Card
              title="Live FlowSpec"
              subtitle={
                <>
                  The exact document the gateway executes, read-only. Its digest is the ETag: <code>{digest}</code>
                </>
              }
              actions={<CopyButton text={text} label="Copy JSON" />}
            >
              <div className="grid-2">
                <div>
                  <div className="io-label">Inputs</div>
                  {Object.keys(spec.inputs ?? {}).length === 0 ? (
                    <p className="muted small">None.</p>
                  ) : (
                    <ul className="slot-list">
                      {Object.entries(spec.inputs ?? {}).map(([n, c]) => (
                        <li key={n}>
                          <code>{n}</code> <span className="muted small">{c.type}</span> {c.secret ? <Badge tone="violet">secret</Badge> : null}{' '}
                          {c.required ? <Badge tone="gray">required</Badge> : null}
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
                <div>
                  <div className="io-label">Steps</div>
                  <ol className="step-list">
                    {(spec.steps ?? []).map((s) => (
                      <li key={s.id}>
                        <code>{s.id}</code> <span className="muted small">{s.tool ? `${s.tool.ref}@${s.tool.version}` : ''}</span>
                      </li>
                    ))}
                  </ol>
                </div>
              </div>
            </Card>
            <Card title="Document">
              <JsonView value={spec} collapseAt={5} />
            </Card>
          </div>
        );
      }}
    </Async>
  );
}

function SecretsTab({ automation }: { automation: Automation }) {
  const s = useResource(() => get<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`).then((b) => b.session.secret_slots), [automation.id]);
  if (s.state === 'loading' && !s.data) return <Loading label="Loading" />;
  return <SecretsPanel needed={s.data ?? []} />;
}
