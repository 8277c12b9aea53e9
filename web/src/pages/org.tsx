import { useState, type FormEvent } from 'react';
import { post } from '../api';
import { navigate } from '../router';
import { useSessionApi } from '../session';
import { Card, ErrorBox, Field, PageHeader, useAction } from '../ui';

/** POST /api/orgs: a new org you own; it becomes the session's active org. */
export function NewOrgPage() {
  const { refresh } = useSessionApi();
  const [name, setName] = useState('');
  const create = useAction(async () => {
    await post('/api/orgs', { name });
    await refresh();
    navigate('/automations');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  return (
    <div className="page page-narrow">
      <PageHeader title="New organization" subtitle="You will be its owner, and it becomes your active organization." />
      <Card>
        <form className="form" onSubmit={submit}>
          <Field label="Name" htmlFor="org-name">
            <input id="org-name" required maxLength={120} value={name} onChange={(e) => setName(e.target.value)} />
          </Field>
          {create.error ? <ErrorBox error={create.error} /> : null}
          <div className="form-actions">
            <button type="submit" className="btn btn-primary" disabled={create.busy}>
              {create.busy ? 'Creating…' : 'Create organization'}
            </button>
          </div>
        </form>
      </Card>
    </div>
  );
}
