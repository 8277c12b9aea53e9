import { useState, type FormEvent } from 'react';
import { del, get, patch, post, type Automation, type Schedule } from '../../api';
import { useIsOwner } from '../../session';
import { TableCard } from '../../list';
import { Card, ConfirmButton, Digest, Empty, ErrorBox, Field, Time, useAction, useResource, FormFooter } from '../../ui';

// Schedules: list, create, enable/disable, delete (owner).

export function Schedules({ automation }: { automation: Automation }) {
  const owner = useIsOwner();
  const list = useResource(() => get<{ schedules: Schedule[] }>(`/api/automations/${automation.id}/schedules`).then((b) => b.schedules), [automation.id]);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const [cron, setCron] = useState('0 7 * * 1-5');
  const [timezone, setTimezone] = useState(zone && zone !== 'UTC' ? zone : '');
  const [inputs, setInputs] = useState('{}');
  const [enabled, setEnabled] = useState(true);
  const [inputsError, setInputsError] = useState<string>();
  const create = useAction(async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(inputs || '{}');
    } catch (err) {
      setInputsError(`Inputs are not valid JSON: ${(err as Error).message}`);
      return;
    }
    setInputsError(undefined);
    await post(`/api/automations/${automation.id}/schedules`, { cron, inputs: parsed, enabled, ...(timezone.trim() ? { timezone: timezone.trim() } : {}) });
    await list.reload();
  });
  const toggle = useAction(async (s: Schedule) => {
    await patch(`/api/schedules/${s.id}`, { enabled: !s.enabled });
    await list.reload();
  });
  const remove = useAction(async (s: Schedule) => {
    await del(`/api/schedules/${s.id}`);
    await list.reload();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  return (
    <div className="stack">
      {owner ? (
        <Card title="New schedule" subtitle="It runs the version live now, with these inputs, whatever is published later.">
          {automation.status === 'draft' ? (
            <p className="muted">Publish a version first: a draft cannot be scheduled.</p>
          ) : (
            <form className="form form-inline-grid" onSubmit={submit}>
              <Field label="Cron" htmlFor="sch-cron" hint="5 fields (minute hour day month weekday), or 6 with seconds first.">
                <input id="sch-cron" required value={cron} onChange={(e) => setCron(e.target.value)} className="mono" />
              </Field>
              <Field label="Time zone" htmlFor="sch-tz" hint="IANA name; empty: UTC.">
                <input id="sch-tz" value={timezone} onChange={(e) => setTimezone(e.target.value)} placeholder="UTC" />
              </Field>
              <Field label="Inputs (JSON object)" htmlFor="sch-inputs" hint="Non-secret inputs only; secrets resolve at every fire.">
                <input id="sch-inputs" value={inputs} onChange={(e) => setInputs(e.target.value)} className="mono" />
              </Field>
              <div className="field">
                <label>&nbsp;</label>
                <label className="check">
                  <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> enabled
                </label>
              </div>
              {inputsError ? <div className="error-box span-all">{inputsError}</div> : null}
              <FormFooter action={create} label="Create schedule" busyLabel="Creating…" />
            </form>
          )}
        </Card>
      ) : null}
      {toggle.error ? <ErrorBox error={toggle.error} /> : null}
      {remove.error ? <ErrorBox error={remove.error} /> : null}
      <TableCard
        r={list}
        label="Loading schedules"
        empty={<Empty title="No schedules">{owner ? 'Create one above.' : 'Owners create schedules.'}</Empty>}
        title="Schedules"
        rowKey={(s) => s.id}
        rowClassName={(s) => (s.enabled ? undefined : 'row-dim')}
        columns={[
          {
            header: 'Cron',
            cell: (s) => (
              <>
                <code>{s.cron}</code> <span className="muted small">{s.timezone ?? 'UTC'}</span>
              </>
            ),
          },
          { header: 'Next fire', cell: (s) => (s.next_fire_at ? <Time at={s.next_fire_at} /> : <span className="muted">disabled</span>) },
          { header: 'Inputs', className: 'small', cell: (s) => <code>{JSON.stringify(s.inputs)}</code> },
          { header: 'Version', cell: (s) => <Digest value={s.flow_digest} /> },
          {
            header: 'Enabled',
            cell: (s) => (
              <label className="switch">
                <input
                  type="checkbox"
                  aria-label={`Enable schedule ${s.cron}`}
                  checked={s.enabled}
                  disabled={!owner || toggle.busy}
                  onChange={() => void toggle.run(s)}
                />
                <span>{s.enabled ? 'on' : 'off'}</span>
              </label>
            ),
          },
          {
            className: 'right',
            cell: (s) => (owner ? <ConfirmButton label="Delete" confirm="Delete?" busy={remove.busy} onConfirm={() => void remove.run(s)} /> : null),
          },
        ]}
      />
    </div>
  );
}
