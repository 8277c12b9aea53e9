import { useState, type FormEvent } from 'react';
import { del, get, post, type ApiKey, type Automation } from '../api';
import { useIsOwner } from '../session';
import { TableCard } from '../list';
import { GrantsPanel } from './grants';
import { Async, Badge, Card, ConfirmButton, CopyButton, Empty, ErrorBox, Field, PageHeader, Time, useAction, useResource, FormFooter } from '../ui';

/** API keys (owner): mint (the secret shown once), list, revoke. */
export function KeysPage() {
  return (
    <div className="page">
      <PageHeader
        title="API keys"
        subtitle="Bearer keys for the run gateway (POST /v1/run/{name}) and the MCP endpoint (POST /mcp). A key may be limited to some automations."
      />
      <div className="stack">
        <KeysPanel />
        <GrantsPanel />
      </div>
    </div>
  );
}

/** The keys panel; with `automation`, it shows the keys that reach it and mints keys scoped to it. */
export function KeysPanel({ automation }: { automation?: string }) {
  const owner = useIsOwner();
  const keys = useResource(() => (owner ? get<{ keys: ApiKey[] }>('/api/keys').then((b) => b.keys) : Promise.resolve([])), [owner]);
  const automations = useResource(
    () => (automation ? Promise.resolve([] as Automation[]) : get<{ automations: Automation[] }>('/api/automations').then((b) => b.automations)),
    [automation],
  );
  const [minted, setMinted] = useState<{ key: ApiKey; secret: string } | undefined>();
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const [scope, setScope] = useState<'all' | 'some'>(automation ? 'some' : 'all');
  const [chosen, setChosen] = useState<string[]>(automation ? [automation] : []);
  const mint = useAction(async () => {
    const body = { mode, ...(name.trim() ? { name: name.trim() } : {}), ...(scope === 'some' ? { automations: chosen } : {}) };
    const b = await post<{ key: ApiKey; secret: string }>('/api/keys', body);
    setMinted(b);
    setName('');
    await keys.reload();
  });
  const revoke = useAction(async (id: string) => {
    await del(`/api/keys/${id}`);
    await keys.reload();
  });
  if (!owner) {
    return (
      <Card>
        <Empty title="Owners manage API keys">Ask an owner of this organization for a key.</Empty>
      </Card>
    );
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void mint.run();
  };
  const visible = (list: ApiKey[]) => (automation ? list.filter((k) => k.automations === null || k.automations.includes(automation)) : list);
  return (
    <div className="stack">
      {minted ? (
        <div className="secret-reveal" role="status">
          <div className="secret-reveal-head">
            <strong>
              New {minted.key.mode} key “{minted.key.name}”
            </strong>
            <button type="button" className="btn btn-small btn-ghost" onClick={() => setMinted(undefined)} aria-label="Dismiss">
              ✕
            </button>
          </div>
          <p>Copy it now: this is the only time the service shows it. It is stored as a hash.</p>
          <div className="secret-line">
            <code data-testid="minted-secret">{minted.secret}</code>
            <CopyButton text={minted.secret} />
          </div>
          <pre className="code-block code-wrap small">{`curl -X POST ${window.location.origin}/v1/run/${automation ?? minted.key.automations?.[0] ?? '<name>'} \\
  -H 'authorization: Bearer ${minted.secret}' \\
  -H 'content-type: application/json' -d '{"inputs":{}}'`}</pre>
        </div>
      ) : null}
      <Card title="Create a key">
        <form className="form form-inline-grid key-form" onSubmit={submit}>
          <Field label="Name" htmlFor="key-name" hint="Optional, for you: where the key is used.">
            <input id="key-name" maxLength={120} value={name} onChange={(e) => setName(e.target.value)} placeholder={`${mode} key`} />
          </Field>
          <Field label="Mode" htmlFor="key-mode" hint="Test keys cannot run automations that read org secrets.">
            <select id="key-mode" value={mode} onChange={(e) => setMode(e.target.value as 'live' | 'test')}>
              <option value="live">live (svc_live_…)</option>
              <option value="test">test (svc_test_…)</option>
            </select>
          </Field>
          <Field label="Scope" htmlFor="key-scope">
            <select id="key-scope" value={scope} onChange={(e) => setScope(e.target.value as 'all' | 'some')}>
              <option value="all">Every automation of the org</option>
              <option value="some">{automation ? `Only ${automation}` : 'Only the automations chosen'}</option>
            </select>
          </Field>
          {scope === 'some' && !automation ? (
            <div className="field span-all">
              <label>Automations</label>
              <Async r={automations} isEmpty={(a) => a.length === 0} empty={<span className="muted small">No automations yet.</span>}>
                {(list) => (
                  <div className="checks">
                    {list.map((a) => (
                      <label key={a.id} className="check">
                        <input
                          type="checkbox"
                          checked={chosen.includes(a.name)}
                          onChange={(e) => setChosen((c) => (e.target.checked ? [...c, a.name] : c.filter((x) => x !== a.name)))}
                        />{' '}
                        {a.name}
                      </label>
                    ))}
                  </div>
                )}
              </Async>
            </div>
          ) : null}
          <FormFooter action={mint} label="Create key" busyLabel="Creating…" disabled={scope === 'some' && chosen.length === 0} />
        </form>
      </Card>
      {revoke.error ? <ErrorBox error={revoke.error} /> : null}
      <TableCard
        r={keys}
        label="Loading keys"
        select={visible}
        title={automation ? `Keys that can call ${automation}` : 'Keys'}
        empty={<Empty title={automation ? 'No key reaches this automation' : 'No keys yet'}>Create one above; its secret is shown once.</Empty>}
        rowKey={(k) => k.id}
        rowClassName={(k) => (k.revoked_at ? 'row-dim' : undefined)}
        columns={[
          {
            header: 'Name',
            cell: (k) => (
              <>
                <span className="strong">{k.name}</span> <Badge tone={k.mode === 'live' ? 'violet' : 'gray'}>{k.mode}</Badge>
              </>
            ),
          },
          {
            header: 'Key',
            cell: (k) => (
              <code>
                {k.prefix}…{k.last4}
              </code>
            ),
          },
          {
            header: 'Scope',
            className: 'small',
            cell: (k) => (k.automations === null ? <span className="muted">all automations</span> : k.automations.join(', ')),
          },
          { header: 'Created', cell: (k) => <Time at={k.created_at} /> },
          { header: 'Last used', cell: (k) => <Time at={k.last_used_at} /> },
          {
            className: 'right',
            cell: (k) =>
              k.revoked_at ? (
                <Badge tone="red">
                  revoked <Time at={k.revoked_at} />
                </Badge>
              ) : (
                <ConfirmButton label="Revoke" confirm="Revoke now?" busy={revoke.busy} onConfirm={() => void revoke.run(k.id)} />
              ),
          },
        ]}
      />
    </div>
  );
}
