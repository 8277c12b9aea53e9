import { useState, type FormEvent } from 'react';
import { patch, type Automation } from '../../api';
import { Link } from '../../router';
import { useIsOwner } from '../../session';
import { Card, Digest, ErrorBox, Field, Loading, Time, useAction, useResource } from '../../ui';
import { fetchSpec } from './flowspec';

// Overview: details, corrections (any member), MCP (owner), how to call it.

export function Overview({ automation, onChange }: { automation: Automation; onChange(a: Automation): void }) {
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
