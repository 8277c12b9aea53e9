import { useState, type FormEvent } from 'react';
import { get, post } from '../api';
import { Async, ErrorBox, Field, useAction, useResource } from '../ui';

interface ConsentDetails {
  client: { id: string; name: string; redirect_host: string };
  orgs: { id: string; name: string; role: string; automations: string[] }[];
}

/**
 * OAuth consent (docs/mcp.md, "Hosted"): a chat client asks to call this account's automations over
 * MCP. The signed-in user picks the org, live or test, and the automations (the API key's scope
 * model), then "Allow access" or "Deny"; the browser goes on to the client either way.
 */
export function ConsentPage({ uid }: { uid: string }) {
  const base = `/oauth/interaction/${encodeURIComponent(uid)}`;
  const details = useResource(() => get<ConsentDetails>(`${base}/details`), [base]);
  return (
    <div className="center-screen auth-bg">
      <div className="auth-card consent-card">
        <div className="auth-brand">
          <img src="/favicon.svg" alt="" width={36} height={36} />
          <span>flowctl</span>
        </div>
        <Async r={details} label="Loading the request">
          {(d) => <ConsentForm base={base} details={d} />}
        </Async>
      </div>
    </div>
  );
}

function ConsentForm({ base, details }: { base: string; details: ConsentDetails }) {
  const [orgId, setOrgId] = useState(details.orgs[0]?.id ?? '');
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const [scope, setScope] = useState<'all' | 'some'>('all');
  const [chosen, setChosen] = useState<string[]>([]);
  const org = details.orgs.find((o) => o.id === orgId);
  const go = (to: { redirect: string }) => {
    window.location.assign(to.redirect);
  };
  const allow = useAction(async () => {
    go(await post<{ redirect: string }>(`${base}/allow`, { org: orgId, mode, ...(scope === 'some' ? { automations: chosen } : {}) }));
  });
  const deny = useAction(async () => go(await post<{ redirect: string }>(`${base}/deny`)));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void allow.run();
  };
  return (
    <>
      <h1>Connect {details.client.name}?</h1>
      <p className="muted">
        <strong>{details.client.name}</strong> (returning to <code>{details.client.redirect_host}</code>) asks to call your automations as MCP tools. It gets
        what an API key with the same choices gets, until you revoke it on the API keys page.
      </p>
      <form className="form" onSubmit={submit}>
        <Field label="Organization" htmlFor="consent-org">
          <select
            id="consent-org"
            value={orgId}
            onChange={(e) => {
              setOrgId(e.target.value);
              setChosen([]);
            }}
          >
            {details.orgs.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Mode" htmlFor="consent-mode" hint="Test access cannot run automations that read org secrets.">
          <select id="consent-mode" value={mode} onChange={(e) => setMode(e.target.value as 'live' | 'test')}>
            <option value="live">live</option>
            <option value="test">test</option>
          </select>
        </Field>
        <Field label="Automations" htmlFor="consent-scope">
          <select id="consent-scope" value={scope} onChange={(e) => setScope(e.target.value as 'all' | 'some')}>
            <option value="all">Every automation of the organization</option>
            <option value="some">Only the automations chosen</option>
          </select>
        </Field>
        {scope === 'some' ? (
          <div className="checks">
            {(org?.automations ?? []).length === 0 ? <span className="muted small">No automations in this organization.</span> : null}
            {(org?.automations ?? []).map((name) => (
              <label key={name} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(name)}
                  onChange={(e) => setChosen((c) => (e.target.checked ? [...c, name] : c.filter((x) => x !== name)))}
                />{' '}
                {name}
              </label>
            ))}
          </div>
        ) : null}
        {allow.error ? <ErrorBox error={allow.error} /> : null}
        {deny.error ? <ErrorBox error={deny.error} /> : null}
        <div className="form-actions consent-actions">
          <button type="button" className="btn" disabled={allow.busy || deny.busy} onClick={() => void deny.run()}>
            Deny
          </button>
          <button type="submit" className="btn btn-primary" disabled={allow.busy || deny.busy || !orgId || (scope === 'some' && chosen.length === 0)}>
            Allow access
          </button>
        </div>
      </form>
    </>
  );
}
