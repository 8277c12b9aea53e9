import { get, post, type Automation, type Member, type Version } from '../../api';
import { Link } from '../../router';
import { useIsOwner } from '../../session';
import { TableCard } from '../../list';
import { Badge, ConfirmButton, Digest, Empty, ErrorBox, Time, useAction, useResource } from '../../ui';

// Versions: GET /api/automations/{id}/versions; roll back (owner).

export function Versions({ automation, onChange }: { automation: Automation; onChange(a: Automation): void }) {
  const owner = useIsOwner();
  const v = useResource(() => get<{ versions: Version[] }>(`/api/automations/${automation.id}/versions`).then((b) => b.versions), [automation.id]);
  const members = useResource(() => get<{ members: Member[] }>('/api/members').then((b) => new Map(b.members.map((m) => [m.user_id, m.email]))), []);
  const rollback = useAction(async (digest: string) =>
    onChange((await post<{ automation: Automation }>(`/api/automations/${automation.id}/rollback`, { flow_digest: digest })).automation),
  );
  return (
    <div className="stack">
      {rollback.error ? <ErrorBox error={rollback.error} /> : null}
      <TableCard
        r={v}
        label="Loading versions"
        empty={
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
        }
        title="Published versions"
        subtitle="Each publish is a content-addressed FlowSpec. Rolling back moves the live pointer; nothing is rebuilt."
        rowKey={(x) => x.flow_digest}
        columns={[
          {
            header: 'Version',
            cell: (x) => (
              <>
                <Digest value={x.flow_digest} /> {x.flow_digest === automation.live_digest ? <Badge tone="green">live</Badge> : null}
              </>
            ),
          },
          { header: 'Published', cell: (x) => <Time at={x.created_at} /> },
          { header: 'By', className: 'small', cell: (x) => members.data?.get(x.created_by) ?? x.created_by.slice(0, 8) },
          {
            className: 'right',
            cell: (x) =>
              x.flow_digest === automation.live_digest ? null : owner ? (
                <ConfirmButton
                  label="Roll back to this"
                  confirm="Make this version live?"
                  busy={rollback.busy}
                  onConfirm={() => void rollback.run(x.flow_digest)}
                />
              ) : (
                <span className="muted small">owners roll back</span>
              ),
          },
        ]}
      />
    </div>
  );
}
