import { ApiError, type Automation, type FlowSpecLike } from '../../api';
import { JsonView } from '../../json-view';
import { Async, Badge, Card, CopyButton, Empty, asApiError, useResource } from '../../ui';

// FlowSpec: GET /api/flowspecs/{name}, the bytes the gateway executes (ETag = digest).

export async function fetchSpec(name: string): Promise<{ spec: FlowSpecLike; etag: string | null }> {
  const res = await fetch(`/api/flowspecs/${encodeURIComponent(name)}`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(res.status, 'invalid_response', `HTTP ${res.status}`);
  }
  if (!res.ok) throw new ApiError(res.status, body?.error ?? 'http_error', body?.message ?? `HTTP ${res.status}`);
  return { spec: body, etag: res.headers.get('etag') };
}

const NotPublished = () => (
  <Card>
    <Empty title="Not published yet">This automation is a draft: it has no live FlowSpec. Publish the capture (Capture tab) to create one.</Empty>
  </Card>
);

export function FlowSpecTab({ automation }: { automation: Automation }) {
  // A draft has nothing to read; a 404 (e.g. published elsewhere then gone) is `null`, not `undefined`
  // (Async shows `undefined` as still loading).
  if (automation.status === 'draft' || !automation.live_digest) return <NotPublished />;
  return <LiveFlowSpec automation={automation} />;
}

function LiveFlowSpec({ automation }: { automation: Automation }) {
  const r = useResource(
    () =>
      fetchSpec(automation.name).catch((err) => {
        if (asApiError(err).status === 404) return null;
        throw err;
      }),
    [automation.name, automation.live_digest],
  );
  return (
    <Async r={r} label="Loading the FlowSpec" isEmpty={(x) => x === null} empty={<NotPublished />}>
      {(x) => {
        const spec = x!.spec;
        const digest = x!.etag?.replace(/"/g, '') ?? automation.live_digest ?? '';
        const text = JSON.stringify(spec, null, 2);
        return (
          <div className="stack">
            <Card
              title="Live FlowSpec"
              subtitle={
                <>
                  The exact document the gateway executes, read-only. Its digest is the ETag: <code>{digest}</code>
                </>
              }
              actions={<CopyButton text={text} label="Copy JSON" />}
            >
              <div className="grid-2">
                <div>
                  <div className="io-label">Inputs</div>
                  {Object.keys(spec.inputs ?? {}).length === 0 ? (
                    <p className="muted small">None.</p>
                  ) : (
                    <ul className="slot-list">
                      {Object.entries(spec.inputs ?? {}).map(([n, c]) => (
                        <li key={n}>
                          <code>{n}</code> <span className="muted small">{c.type}</span> {c.secret ? <Badge tone="violet">secret</Badge> : null}{' '}
                          {c.required ? <Badge tone="gray">required</Badge> : null}
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
                <div>
                  <div className="io-label">Steps</div>
                  <ol className="step-list">
                    {(spec.steps ?? []).map((s) => (
                      <li key={s.id}>
                        <code>{s.id}</code> <span className="muted small">{s.tool ? `${s.tool.ref}@${s.tool.version}` : ''}</span>
                      </li>
                    ))}
                  </ol>
                </div>
              </div>
            </Card>
            <Card title="Document">
              <JsonView value={spec} collapseAt={5} />
            </Card>
          </div>
        );
      }}
    </Async>
  );
}
