import { del, get, type OAuthGrant } from '../api';
import { Async, Badge, Card, ConfirmButton, Empty, ErrorBox, Time, useAction, useResource } from '../ui';

/**
 * OAuth grants (docs/hosted-api.md, "OAuth"): the chat clients connected to this org's MCP endpoint,
 * beside the API keys. An owner sees and revokes every grant; a member the ones they gave.
 */
export function GrantsPanel() {
  const grants = useResource(() => get<{ grants: OAuthGrant[] }>('/api/oauth/grants').then((b) => b.grants), []);
  const revoke = useAction(async (id: string) => {
    await del(`/api/oauth/grants/${id}`);
    await grants.reload();
  });
  return (
    <div className="stack">
      {revoke.error ? <ErrorBox error={revoke.error} /> : null}
      <Async
        r={grants}
        label="Loading connected clients"
        isEmpty={(g) => g.length === 0}
        empty={
          <Card title="Connected clients (OAuth)">
            <Empty title="No connected clients">A chat client connecting to /mcp by OAuth shows up here once you allow it.</Empty>
          </Card>
        }
      >
        {(list) => (
          <Card className="card-flush" title="Connected clients (OAuth)">
            <div className="table-wrap">
              <table className="table">
                <thead>
                  <tr>
                    <th>Client</th>
                    <th>Scope</th>
                    <th>Created</th>
                    <th>Last used</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {list.map((g) => (
                    <tr key={g.id} className={g.revoked_at ? 'row-dim' : ''} data-testid="oauth-grant">
                      <td>
                        <span className="strong">{g.client_name}</span> <Badge tone={g.mode === 'live' ? 'violet' : 'gray'}>{g.mode}</Badge>
                        <div className="muted small">{g.redirect_host}</div>
                      </td>
                      <td className="small">{g.automations === null ? <span className="muted">all automations</span> : g.automations.join(', ')}</td>
                      <td>
                        <Time at={g.created_at} />
                      </td>
                      <td>
                        <Time at={g.last_used_at} />
                      </td>
                      <td className="right">
                        {g.revoked_at ? (
                          <Badge tone="red">
                            revoked <Time at={g.revoked_at} />
                          </Badge>
                        ) : (
                          <ConfirmButton label="Revoke" confirm="Revoke now?" busy={revoke.busy} onConfirm={() => void revoke.run(g.id)} />
                        )}
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
