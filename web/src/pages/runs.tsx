import { useEffect, useState } from 'react';
import { get, q, type Automation, type Execution } from '../api';
import { duration } from '../format';
import { RowsCard } from '../list';
import { Link, navigate, useLocation } from '../router';
import { Badge, Digest, Empty, ErrorBox, Loading, PageHeader, StatusBadge, Time, useAction, useResource, LoadOlder } from '../ui';

/** The run inspector's list: GET /api/executions, filtered by automation, paged by cursor. */
export function RunsPage() {
  const { search } = useLocation();
  const flow = search.get('flow') ?? '';
  // Page size: 25, or `?limit=` (1-200) from the address.
  const limit = Math.min(200, Math.max(1, Number(search.get('limit')) || 25));
  const automations = useResource(() => get<{ automations: Automation[] }>('/api/automations').then((b) => b.automations), []);
  return (
    <div className="page">
      <PageHeader
        title="Runs"
        subtitle="Every run of the org's automations (gateway, MCP and schedules), newest first. Each one reads the engine's journal."
        actions={
          <label className="inline-select">
            <span className="muted small">Automation</span>
            <select
              aria-label="Filter by automation"
              value={flow}
              onChange={(e) => navigate(`/runs${q({ flow: e.target.value, limit: search.get('limit') })}`)}
            >
              <option value="">All automations</option>
              {(automations.data ?? []).map((a) => (
                <option key={a.id} value={a.name}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        }
      />
      <ExecutionsList flow={flow || undefined} limit={limit} />
    </div>
  );
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

export function ExecutionsList({ flow, compact, limit = 25 }: { flow?: string; compact?: boolean; limit?: number }) {
  const [rows, setRows] = useState<Execution[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const load = useAction(async (after: string | null) => {
    const page = await get<{ executions: Execution[]; next_cursor: string | null }>(`/api/executions${q({ limit, flow, cursor: after })}`);
    setRows((prev) => (after ? [...(prev ?? []), ...page.executions] : page.executions));
    setCursor(page.next_cursor);
  });
  useEffect(() => {
    setRows(undefined);
    void load.run(null);
  }, [flow, limit]);
  // While a run on screen is in flight, look again now and then (its page streams; the list polls).
  const inFlight = (rows ?? []).some((r) => !TERMINAL.has(r.status));
  useEffect(() => {
    if (!inFlight) return;
    const t = setInterval(() => void load.run(null), 3000);
    return () => clearInterval(t);
  }, [inFlight, flow]);

  if (rows === undefined) return load.error ? <ErrorBox error={load.error} onRetry={() => void load.run(null)} /> : <Loading label="Loading runs" />;
  return (
    <RowsCard
      rows={rows}
      empty={
        <Empty title="No runs yet">
          Runs appear here when an automation is called: <code>POST /v1/run/{flow ?? '{name}'}</code> with an API key, a <code>tools/call</code> on{' '}
          <code>/mcp</code>, or a schedule.
        </Empty>
      }
      testId="executions"
      rowKey={(e) => e.id}
      onRowClick={(e) => navigate(`/runs/${e.id}`)}
      above={load.error ? <ErrorBox error={load.error} /> : null}
      below={<LoadOlder cursor={cursor} busy={load.busy} label="Older runs" onLoad={(c) => void load.run(c)} />}
      columns={[
        {
          header: 'Status',
          cell: (e) => (
            <Link to={`/runs/${e.id}`} onClick={(ev) => ev.stopPropagation()} aria-label={`Run ${e.id}`}>
              <StatusBadge status={e.status} />
            </Link>
          ),
        },
        ...(compact ? [] : [{ header: 'Automation', cell: (e: Execution) => <span className="strong">{e.flow}</span> }]),
        { header: 'Started', cell: (e) => <Time at={e.created_at} /> },
        {
          header: 'Duration',
          cell: (e) => (e.finished_at ? duration(Date.parse(e.finished_at) - Date.parse(e.created_at)) : <span className="muted">running</span>),
        },
        { header: 'Via', cell: (e) => <Badge tone="gray">{e.dispatch}</Badge> },
        { header: 'Version', cell: (e) => <Digest value={e.flow_digest} /> },
        { header: 'Error', cell: (e) => (e.error_code ? <code className="error-text">{e.error_code}</code> : <span className="muted">—</span>) },
      ]}
    />
  );
}
