import { useEffect, useState } from 'react';
import { get, q, type AuditEntry, type Member } from '../api';
import { absTime } from '../format';
import { RowsCard } from '../list';
import { useIsOwner } from '../session';
import { Badge, Card, Digest, Empty, ErrorBox, Loading, PageHeader, Time, useAction, useResource, LoadOlder } from '../ui';

/** `member:<user id>` with the member's email; other ids shortened (the full target is the title). */
function target(t: string, who: (id: string) => string): string {
  const i = t.indexOf(':');
  const kind = t.slice(0, i);
  const id = t.slice(i + 1);
  if (kind === 'member') return `member:${who(id)}`;
  if (kind === 'secret') return t;
  return /^[0-9a-f-]{36}$/.test(id) ? `${kind}:${id.slice(0, 8)}` : t;
}

/** A clamped cell's tooltip: what it shows in full, then the raw id when that differs (a member's user id). */
function fullTitle(shown: string, raw: string): string {
  return shown === raw ? raw : `${shown}\n${raw}`;
}

interface Page {
  entries: AuditEntry[];
  next_cursor: string | null;
}

/** GET /api/audit (owner): newest first, paged by cursor; GET /api/audit/verify checks the hash chain. */
export function AuditPage() {
  const owner = useIsOwner();
  const members = useResource(() => get<{ members: Member[] }>('/api/members').then((b) => new Map(b.members.map((m) => [m.user_id, m.email]))), []);
  const [entries, setEntries] = useState<AuditEntry[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const load = useAction(async (after: string | null) => {
    const page = await get<Page>(`/api/audit${q({ limit: 50, cursor: after })}`);
    setEntries((prev) => (after ? [...(prev ?? []), ...page.entries] : page.entries));
    setCursor(page.next_cursor);
  });
  const verify = useAction(() => get<{ ok: boolean; entries: number; broken?: { seq: number; id: string; reason: string } }>('/api/audit/verify'));
  const [verdict, setVerdict] = useState<{ ok: boolean; entries: number; broken?: { seq: number; reason: string } }>();
  useEffect(() => {
    if (owner) void load.run(null);
  }, [owner]);
  if (!owner) {
    return (
      <div className="page">
        <PageHeader title="Audit log" />
        <Card>
          <Empty title="Owners read the audit log" />
        </Card>
      </div>
    );
  }
  // `service`: what the service did by itself (an automation's status following its runs).
  const who = (id: string) => (id === 'service' ? 'the service' : (members.data?.get(id) ?? id.slice(0, 8)));
  return (
    <div className="page">
      <PageHeader
        title="Audit log"
        subtitle="Every owner action, in the same transaction as the action; hash-chained per organization."
        actions={
          <button type="button" className="btn" disabled={verify.busy} onClick={() => void verify.run().then((v) => v && setVerdict(v))}>
            {verify.busy ? 'Verifying…' : 'Verify the chain'}
          </button>
        }
      />
      {verdict ? (
        <div className={`notice ${verdict.ok ? 'notice-ok' : 'notice-bad'}`} role="status">
          {verdict.ok
            ? `The chain verifies: ${verdict.entries} entries, none changed, removed or reordered.`
            : `The chain is broken at entry ${verdict.broken?.seq} (${verdict.broken?.reason}).`}
        </div>
      ) : null}
      {verify.error ? <ErrorBox error={verify.error} /> : null}
      {load.error ? <ErrorBox error={load.error} onRetry={() => void load.run(entries ? cursor : null)} /> : null}
      {entries === undefined ? (
        load.error ? null : (
          <Loading label="Loading the audit log" />
        )
      ) : (
        <RowsCard
          rows={entries}
          empty={<Empty title="Nothing audited yet" />}
          rowKey={(e) => e.id}
          below={<LoadOlder cursor={cursor} busy={load.busy} label="Older entries" onLoad={(c) => void load.run(c)} />}
          columns={[
            { header: 'When', title: (e) => absTime(e.at), cell: (e) => <Time at={e.at} /> },
            { header: 'Action', cell: (e) => <Badge tone="blue">{String(e.metadata.action ?? '')}</Badge> },
            // Actor and target can be long emails: one line each, cut at a fixed width, so the table stays
            // inside its card and Details keeps the room; the cell's title has them in full.
            {
              header: 'Actor',
              className: 'small',
              title: (e) => fullTitle(who(e.actor), e.actor),
              cell: (e) => <span className="cell-clamp">{who(e.actor)}</span>,
            },
            {
              header: 'Target',
              title: (e) => fullTitle(target(e.target, who), e.target),
              cell: (e) => <code className="cell-clamp">{target(e.target, who)}</code>,
            },
            { header: 'Details', className: 'small details', cell: (e) => <Details metadata={e.metadata} /> },
          ]}
        />
      )}
    </div>
  );
}

/** An entry's metadata but its action (a column of its own), digests shortened. */
function Details({ metadata }: { metadata: AuditEntry['metadata'] }) {
  const { action: _action, ...rest } = metadata;
  return (
    <>
      {Object.entries(rest).map(([k, v]) => (
        <span key={k} className="kv">
          <span className="muted">{k}</span>{' '}
          {typeof v === 'string' && /^sha256:[0-9a-f]{64}$/.test(v) ? <Digest value={v} /> : typeof v === 'string' ? v : JSON.stringify(v)}
        </span>
      ))}
    </>
  );
}
