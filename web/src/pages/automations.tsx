import { useState, type FormEvent } from 'react';
import { get, post, rerecordPath, type Automation } from '../api';
import { TableCard } from '../list';
import { Link, navigate } from '../router';
import { useIsOwner } from '../session';
import { Badge, Card, Digest, Empty, ErrorBox, Field, PageHeader, StatusBadge, Time, useAction, useResource } from '../ui';

/** GET /api/automations: status, attention, last run, calls in 7 days. */
export function AutomationsPage() {
  const r = useResource(() => get<{ automations: Automation[] }>('/api/automations').then((b) => b.automations), []);
  const owner = useIsOwner();
  const example = useAction(async () => {
    const b = await post<{ automation: Automation }>('/api/automations/example');
    navigate(`/automations/${b.automation.id}`);
  });
  const actions = (
    <>
      <button type="button" className="btn" onClick={() => void example.run()} disabled={example.busy} title="POST /api/automations/example">
        {example.busy ? 'Adding…' : 'Add the starter example'}
      </button>
      <Link to="/automations/new" className="btn btn-primary">
        New automation
      </Link>
    </>
  );
  return (
    <div className="page">
      <PageHeader
        title="Automations"
        subtitle="Each automation is a named endpoint: POST /v1/run/{name} with an API key, or a tool on the MCP endpoint."
        actions={actions}
      />
      {example.error ? <ErrorBox error={example.error} /> : null}
      <TableCard
        r={r}
        label="Loading automations"
        empty={
          <Empty title="No automations yet" action={actions}>
            Create one and give it a capture, or add the starter example: a published automation of a demo page this service serves.
          </Empty>
        }
        rowKey={(a) => a.id}
        onRowClick={(a) => navigate(`/automations/${a.id}`)}
        columns={[
          {
            header: 'Name',
            cell: (a) => (
              <>
                <Link to={`/automations/${a.id}`} className="strong" onClick={(e) => e.stopPropagation()}>
                  {a.name}
                </Link>
                <div className="muted small clamp">{a.task || <em>no task description</em>}</div>
              </>
            ),
          },
          {
            header: 'Status',
            cell: (a) => (
              <div className="badges">
                <StatusBadge status={a.status} />
                {a.needs_attention ? (
                  <Badge tone="amber" title="A run found locator drift: re-record the failing step">
                    needs attention
                  </Badge>
                ) : null}
                {a.rerecord_href && owner ? (
                  <Link
                    to={rerecordPath(a.rerecord_href)}
                    className="btn btn-small"
                    title="Open the studio at the drifted step"
                    onClick={(e) => e.stopPropagation()}
                  >
                    Re-record
                  </Link>
                ) : null}
                {!a.mcp_enabled ? <Badge tone="gray">MCP off</Badge> : null}
              </div>
            ),
          },
          { header: 'Last run', cell: (a) => <Time at={a.last_run_at} /> },
          { header: 'Calls (7 d)', headerClassName: 'num', className: 'num', cell: (a) => a.calls_7d },
          { header: 'Live version', cell: (a) => <Digest value={a.live_digest} /> },
        ]}
      />
    </div>
  );
}

interface ParamRow {
  name: string;
  required: boolean;
  sample: string;
}

/** POST /api/automations: a draft and its authoring session. */
export function NewAutomationPage() {
  const [name, setName] = useState('');
  const [site, setSite] = useState('https://');
  const [task, setTask] = useState('');
  const [params, setParams] = useState<ParamRow[]>([]);
  const create = useAction(async () => {
    const body = {
      name,
      site,
      task,
      ...(params.length > 0
        ? { params: params.filter((p) => p.name.trim()).map((p) => ({ name: p.name.trim(), required: p.required, sample: p.sample })) }
        : {}),
    };
    const b = await post<{ automation: Automation }>('/api/automations', body);
    navigate(`/automations/${b.automation.id}/capture`);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  const setParam = (i: number, p: Partial<ParamRow>) => setParams((ps) => ps.map((x, n) => (n === i ? { ...x, ...p } : x)));
  return (
    <div className="page page-narrow">
      <PageHeader
        crumbs={<Link to="/automations">Automations</Link>}
        title="New automation"
        subtitle="A draft: give it a capture, then publish it to make it callable."
      />
      <Card>
        <form className="form" onSubmit={submit}>
          <Field
            label="Name"
            htmlFor="a-name"
            hint={
              <>
                Lowercase letters, digits and dashes. It becomes the endpoint <code>/v1/run/{name || '{name}'}</code>.
              </>
            }
          >
            <input
              id="a-name"
              required
              maxLength={64}
              pattern="[a-z0-9][a-z0-9\-]*"
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="shop-search"
            />
          </Field>
          <Field label="Site" htmlFor="a-site" hint="The site the automation works on.">
            <input id="a-site" required value={site} onChange={(e) => setSite(e.target.value)} />
          </Field>
          <Field label="Task" htmlFor="a-task" hint="What it does, in a sentence. Publishing needs one; MCP clients see it as the tool description.">
            <textarea id="a-task" rows={3} value={task} onChange={(e) => setTask(e.target.value)} />
          </Field>
          <div className="field">
            <label>Inputs (optional)</label>
            {params.map((p, i) => (
              <div className="param-row" key={i}>
                <input aria-label="Input name" placeholder="name" value={p.name} onChange={(e) => setParam(i, { name: e.target.value })} />
                <input aria-label="Sample value" placeholder="sample value" value={p.sample} onChange={(e) => setParam(i, { sample: e.target.value })} />
                <label className="check">
                  <input type="checkbox" checked={p.required} onChange={(e) => setParam(i, { required: e.target.checked })} /> required
                </label>
                <button
                  type="button"
                  className="btn btn-small btn-ghost"
                  onClick={() => setParams((ps) => ps.filter((_, n) => n !== i))}
                  aria-label="Remove input"
                >
                  ✕
                </button>
              </div>
            ))}
            <div>
              <button type="button" className="btn btn-small" onClick={() => setParams((ps) => [...ps, { name: '', required: false, sample: '' }])}>
                + Add input
              </button>
            </div>
          </div>
          {create.error ? <ErrorBox error={create.error} /> : null}
          <div className="form-actions">
            <Link to="/automations" className="btn btn-ghost">
              Cancel
            </Link>
            <button type="submit" className="btn btn-primary" disabled={create.busy}>
              {create.busy ? 'Creating…' : 'Create draft'}
            </button>
          </div>
        </form>
      </Card>
    </div>
  );
}
