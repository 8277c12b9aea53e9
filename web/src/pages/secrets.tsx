import { useState, type FormEvent } from 'react';
import { del, get, put, type SecretMeta } from '../api';
import { useIsOwner } from '../session';
import { TableCard } from '../list';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, Field, PageHeader, Time, useAction, useResource, FormFooter } from '../ui';

/** The org secret store: names only; values go in (owner), never out. */
export function SecretsPage() {
  return (
    <div className="page">
      <PageHeader
        title="Secrets"
        subtitle="Encrypted at rest. A secret slot of an automation reads the org secret of the same name at run time; no route ever returns a value."
      />
      <SecretsPanel />
    </div>
  );
}

export function SecretsPanel({ needed }: { needed?: string[] }) {
  const owner = useIsOwner();
  const secrets = useResource(() => get<{ secrets: SecretMeta[] }>('/api/secrets').then((b) => b.secrets), []);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const save = useAction(async (n: string, v: string) => {
    await put(`/api/secrets/${encodeURIComponent(n)}`, { value: v });
    setValue('');
    setName('');
    await secrets.reload();
  });
  const remove = useAction(async (n: string) => {
    await del(`/api/secrets/${encodeURIComponent(n)}`);
    await secrets.reload();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(name.trim(), value);
  };
  const have = new Set((secrets.data ?? []).map((s) => s.name));
  return (
    <div className="stack">
      {needed && needed.length > 0 ? (
        <Card title="Secrets this automation reads" subtitle="Its secret slots, each resolved from the org secret of the same name.">
          <ul className="slot-list">
            {needed.map((n) => (
              <li key={n}>
                <code>{n}</code>{' '}
                {secrets.data === undefined ? null : have.has(n) ? (
                  <Badge tone="green">set</Badge>
                ) : (
                  <Badge tone="red">missing: runs fail with secret_not_found</Badge>
                )}
                {owner && secrets.data !== undefined && !have.has(n) ? (
                  <button type="button" className="btn btn-small btn-ghost" onClick={() => setName(n)}>
                    Set it
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
        </Card>
      ) : null}
      {owner ? (
        <Card title="Set a secret" subtitle="Setting an existing name replaces its value.">
          <form className="form form-inline-grid" onSubmit={submit}>
            <Field label="Name" htmlFor="secret-name" hint="Letters, digits, _ . - (at most 128).">
              <input
                id="secret-name"
                required
                maxLength={128}
                pattern="[A-Za-z0-9_][A-Za-z0-9_.\-]*"
                value={name}
                onChange={(e) => setName(e.target.value)}
                placeholder="password"
              />
            </Field>
            <Field label="Value" htmlFor="secret-value" hint="Sent once over this connection; never shown again.">
              <input id="secret-value" type="password" autoComplete="off" required value={value} onChange={(e) => setValue(e.target.value)} />
            </Field>
            <FormFooter action={save} label="Save secret" busyLabel="Saving…" />
          </form>
        </Card>
      ) : null}
      {remove.error ? <ErrorBox error={remove.error} /> : null}
      <TableCard
        r={secrets}
        label="Loading secrets"
        empty={<Empty title="No secrets yet">{owner ? 'Set one above.' : 'An owner sets them.'}</Empty>}
        title="Org secrets"
        rowKey={(s) => s.name}
        columns={[
          { header: 'Name', cell: (s) => <code className="strong">{s.name}</code> },
          { header: 'Value', cell: () => '••••••••', className: 'muted' },
          { header: 'Updated', cell: (s) => <Time at={s.updated_at} /> },
          {
            className: 'right',
            cell: (s) =>
              owner ? <ConfirmButton label="Delete" confirm={`Delete ${s.name}?`} busy={remove.busy} onConfirm={() => void remove.run(s.name)} /> : null,
          },
        ]}
      />
    </div>
  );
}
