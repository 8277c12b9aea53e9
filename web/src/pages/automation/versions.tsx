import { get, post, type Automation, type Member, type Version } from '../../api';
import { Link } from '../../router';
import { useIsOwner } from '../../session';
import { Async, Badge, Card, ConfirmButton, Digest, Empty, ErrorBox, Time, useAction, useResource } from '../../ui';

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
