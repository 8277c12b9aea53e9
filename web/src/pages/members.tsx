import { useState, type FormEvent } from 'react';
import { del, get, patch, post, type Member, type Role } from '../api';
import { useSession } from '../session';
import { TableCard } from '../list';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, Field, PageHeader, Time, useAction, useResource, FormFooter } from '../ui';

/** Members of the active org; owners add, change roles and remove (an org always keeps an owner). */
export function MembersPage() {
  const session = useSession();
  const owner = session.role === 'owner';
  const members = useResource(() => get<{ members: Member[] }>('/api/members').then((b) => b.members), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const add = useAction(async () => {
    await post('/api/members', { email, role });
    setEmail('');
    await members.reload();
  });
  const change = useAction(async (userId: string, to: Role) => {
    await patch(`/api/members/${userId}`, { role: to });
    await members.reload();
  });
  const remove = useAction(async (userId: string) => {
    await del(`/api/members/${userId}`);
    await members.reload();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void add.run();
  };
  return (
    <div className="page">
      <PageHeader
        title="Members"
        subtitle={`Who belongs to ${session.org.name}. Owners manage keys, secrets, schedules, members and publishing; members read and correct automations.`}
      />
      <div className="stack">
        {owner ? (
          <Card title="Add a member" subtitle="They need an account first (they sign up, then you add their email).">
            <form className="form form-inline-grid" onSubmit={submit}>
              <Field label="Email" htmlFor="member-email">
                <input id="member-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
              </Field>
              <Field label="Role" htmlFor="member-role">
                <select id="member-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                  <option value="member">member</option>
                  <option value="owner">owner</option>
                </select>
              </Field>
              <FormFooter action={add} label="Add member" busyLabel="Adding…" />
            </form>
          </Card>
        ) : null}
        {change.error ? <ErrorBox error={change.error} /> : null}
        {remove.error ? <ErrorBox error={remove.error} /> : null}
        <TableCard
          r={members}
          label="Loading members"
          empty={<Empty title="No members" />}
          rowKey={(m) => m.user_id}
          columns={[
            {
              header: 'Email',
              cell: (m) => (
                <>
                  <span className="strong">{m.email}</span> {m.user_id === session.user.id ? <Badge tone="blue">you</Badge> : null}
                </>
              ),
            },
            {
              header: 'Role',
              cell: (m) =>
                owner ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={change.busy}
                    onChange={(e) => void change.run(m.user_id, e.target.value as Role)}
                  >
                    <option value="member">member</option>
                    <option value="owner">owner</option>
                  </select>
                ) : (
                  <Badge tone={m.role === 'owner' ? 'violet' : 'gray'}>{m.role}</Badge>
                ),
            },
            { header: 'Joined', cell: (m) => <Time at={m.created_at} /> },
            {
              className: 'right',
              cell: (m) =>
                owner ? <ConfirmButton label="Remove" confirm={`Remove ${m.email}?`} busy={remove.busy} onConfirm={() => void remove.run(m.user_id)} /> : null,
            },
          ]}
        />
      </div>
    </div>
  );
}
