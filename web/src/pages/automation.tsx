import { get, type AuthoringSession, type Automation } from '../api';
import { Link } from '../router';
import { Async, Badge, Card, Empty, Loading, PageHeader, StatusBadge, useResource } from '../ui';
import { KeysPanel } from './keys';
import { ExecutionsList } from './runs';
import { SecretsPanel } from './secrets';
import { RunLiveView } from './live';
import { DriftNotice, DegradedNotice } from './automation/notices';
import { Overview } from './automation/overview';
import { Capture } from './automation/capture';
import { Versions } from './automation/versions';
import { Schedules } from './automation/schedules';
import { FlowSpecTab } from './automation/flowspec';

/** One automation (GET /api/automations/{id}) with a tab per concern (the larger tabs and the banners are under automation/). */

const TABS: [string, string][] = [
  ['overview', 'Overview'],
  ['capture', 'Capture'],
  ['versions', 'Versions'],
  ['schedules', 'Schedules'],
  ['executions', 'Executions'],
  ['live', 'Watch live'],
  ['flowspec', 'FlowSpec'],
  ['keys', 'API keys'],
  ['secrets', 'Secrets'],
];

export function AutomationPage({ id, tab }: { id: string; tab: string }) {
  const a = useResource(() => get<{ automation: Automation }>(`/api/automations/${encodeURIComponent(id)}`).then((b) => b.automation), [id]);
  // The drift link (rerecord_href) is /automations/{id}/studio?step=…: the capture tab, recording in
  // the browser from that step (re-record), or for a member its JSON with the step named.
  const current = tab === 'studio' ? 'capture' : tab;
  return (
    <div className="page">
      <Async r={a} label="Loading the automation">
        {(automation) => (
          <>
            <PageHeader
              crumbs={<Link to="/automations">Automations</Link>}
              title={
                <span className="title-with-badge">
                  {automation.name} <StatusBadge status={automation.status} />
                  {automation.needs_attention ? <Badge tone="amber">needs attention</Badge> : null}
                </span>
              }
              subtitle={automation.task || 'No task description yet.'}
            />
            {automation.status === 'failing' ? (
              <DriftNotice automation={automation} />
            ) : automation.needs_attention ? (
              <DegradedNotice automation={automation} />
            ) : null}
            <div className="tabs" role="tablist">
              {TABS.map(([key, label]) => (
                <Link
                  key={key}
                  to={`/automations/${automation.id}/${key}`}
                  role="tab"
                  aria-selected={current === key}
                  className={`tab ${current === key ? 'active' : ''}`}
                >
                  {label}
                </Link>
              ))}
            </div>
            <div className="tab-body">
              {current === 'overview' ? <Overview automation={automation} onChange={(x) => a.set(x)} /> : null}
              {current === 'capture' ? <Capture automation={automation} rerecordTab={tab === 'studio'} onPublished={() => void a.reload()} /> : null}
              {current === 'versions' ? <Versions automation={automation} onChange={(x) => a.set(x)} /> : null}
              {current === 'schedules' ? <Schedules automation={automation} /> : null}
              {current === 'executions' ? <ExecutionsList flow={automation.name} compact /> : null}
              {current === 'live' ? <WatchLive automation={automation} /> : null}
              {current === 'flowspec' ? <FlowSpecTab automation={automation} /> : null}
              {current === 'keys' ? <KeysPanel automation={automation.name} /> : null}
              {current === 'secrets' ? <SecretsTab automation={automation} /> : null}
              {!TABS.some(([k]) => k === current) ? <Empty title="No such tab" /> : null}
            </div>
          </>
        )}
      </Async>
    </div>
  );
}

// Watch live: the browser of a synchronous run of this automation, as it runs (read-only).

function WatchLive({ automation }: { automation: Automation }) {
  return (
    <Card
      title="Watch live"
      subtitle={
        automation.status === 'draft'
          ? 'A draft never runs: publish the capture first. Runs of the live version appear here as they start.'
          : 'The browser page of a run of this automation, while it runs: the newest run in flight, or the next one to start (gateway or MCP, synchronous dispatch).'
      }
    >
      <RunLiveView automationId={automation.id} />
    </Card>
  );
}

function SecretsTab({ automation }: { automation: Automation }) {
  const s = useResource(() => get<{ session: AuthoringSession }>(`/api/authoring/${automation.id}`).then((b) => b.session.secret_slots), [automation.id]);
  if (s.state === 'loading' && !s.data) return <Loading label="Loading" />;
  return <SecretsPanel needed={s.data ?? []} />;
}
