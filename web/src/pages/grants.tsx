import { del, get, type OAuthGrant } from '../api';
import { TableCard } from '../list';
import { Badge, ConfirmButton, Empty, ErrorBox, Time, useAction, useResource } from '../ui';

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
      <TableCard
        r={grants}
        label="Loading connected clients"
        title="Connected clients (OAuth)"
        empty={<Empty title="No connected clients">A chat client connecting to /mcp by OAuth shows up here once you allow it.</Empty>}
        rowKey={(g) => g.id}
        rowClassName={(g) => (g.revoked_at ? 'row-dim' : undefined)}
        rowTestId="oauth-grant"
        columns={[
          {
            header: 'Client',
            cell: (g) => (
              <>
                <span className="strong">{g.client_name}</span> <Badge tone={g.mode === 'live' ? 'violet' : 'gray'}>{g.mode}</Badge>
                <div className="muted small">{g.redirect_host}</div>
              </>
            ),
          },
          {
            header: 'Scope',
            className: 'small',
            cell: (g) => (g.automations === null ? <span className="muted">all automations</span> : g.automations.join(', ')),
          },
          { header: 'Created', cell: (g) => <Time at={g.created_at} /> },
          { header: 'Last used', cell: (g) => <Time at={g.last_used_at} /> },
          {
            className: 'right',
            cell: (g) =>
              g.revoked_at ? (
                <Badge tone="red">
                  revoked <Time at={g.revoked_at} />
                </Badge>
              ) : (
                <ConfirmButton label="Revoke" confirm="Revoke now?" busy={revoke.busy} onConfirm={() => void revoke.run(g.id)} />
              ),
          },
        ]}
      />
    </div>
  );
}
