import { useEffect, useState } from 'react';
import { Badge } from '../../ui';
import { canBeOptional, describeTarget, fileList, type Mode, type Op } from './ops';

/** What a step row of the captured ops does to the capture (each a PATCH of the whole capture). */
export interface StepEdits {
  setMode(i: number, mode: Mode): void;
  rename(i: number, slot: string): void;
  toggleOptional(i: number): void;
  swap(i: number, j: number): void;
  remove(i: number): void;
}

/**
 * One captured step: its kind and target, its value (a fixed value, an input or a secret slot), and
 * the buttons that edit it. `isDrifted`: the step a re-record replaces; `isNew`: recorded in it.
 */
export function OpRow({
  op,
  i,
  count,
  mode,
  isDrifted,
  isNew,
  editing,
  busy,
  edits,
}: {
  op: Op;
  i: number;
  count: number;
  mode: Mode;
  isDrifted: boolean;
  isNew: boolean;
  editing: boolean;
  busy: boolean;
  edits: StepEdits;
}) {
  const { setMode, rename, toggleOptional, swap, remove } = edits;
  return (
    <li className={`op-row${isDrifted ? ' op-drifted' : ''}${isNew ? ' op-new' : ''}`} data-drifted={isDrifted || undefined}>
      <span className="op-index">{i + 1}</span>
      <Badge tone={isDrifted ? 'red' : op.kind === 'extract' ? 'violet' : op.kind === 'navigate' ? 'gray' : 'blue'}>{op.kind}</Badge>
      <span className="op-desc">
        {isDrifted ? (
          <span className="op-tag op-tag-drifted" title="A run could not find this element: what you record replaces it">
            drifted{' '}
          </span>
        ) : null}
        {isNew ? (
          <span className="op-tag op-tag-new" title="Recorded in this re-record">
            new{' '}
          </span>
        ) : null}
        {op.optional ? (
          <span className="op-tag op-tag-optional" title="Skipped when its element does not appear">
            optional{' '}
          </span>
        ) : null}
        {op.kind === 'navigate' ? (
          <code>{op.url}</code>
        ) : op.kind === 'press' ? (
          <>
            <code>{String(op.key)}</code>
            {op.target !== undefined ? (
              <>
                <span className="muted"> on </span>
                <code>{describeTarget(op.target)}</code>
              </>
            ) : (
              <span className="muted"> (the focused element)</span>
            )}
          </>
        ) : op.kind === 'drag' ? (
          <>
            <code>{describeTarget(op.source)}</code>
            <span className="muted"> → </span>
            <code>{describeTarget(op.target)}</code>
          </>
        ) : (
          <>
            <code>{describeTarget(op.target)}</code>
            {op.kind === 'fill' || op.kind === 'select' ? (
              mode === 'secret' ? (
                <span className="muted"> ← secret </span>
              ) : (
                <span className="muted"> ← {JSON.stringify(op.value ?? '')}</span>
              )
            ) : null}
            {op.kind === 'extract' && op.all === true ? (
              <span className="muted">
                {' '}
                (list: all matches
                {op.container ? (
                  <>
                    {' '}
                    in <code>{describeTarget(op.container)}</code>
                  </>
                ) : null}
                )
              </span>
            ) : null}
            {op.kind === 'extract' ? <span className="muted"> → output.{op.name}</span> : null}
            {op.kind === 'upload' ? <span className="muted"> ← {fileList(op.files)}</span> : null}
            {op.target?.fallbacks?.length ? (
              <span className="muted small">
                {' '}
                (+{op.target.fallbacks.length} fallback{op.target.fallbacks.length > 1 ? 's' : ''})
              </span>
            ) : null}
          </>
        )}
      </span>
      {op.kind === 'fill' || op.kind === 'select' ? (
        <span className="op-slot">
          <select aria-label={`Value of step ${i + 1}`} value={mode} disabled={!editing || busy} onChange={(e) => setMode(i, e.target.value as Mode)}>
            <option value="literal" disabled={op.value === undefined}>
              fixed value
            </option>
            <option value="input">input slot</option>
            <option value="secret">secret slot</option>
          </select>
          {mode !== 'literal' ? (
            <SlotName value={op.slot ?? ''} disabled={!editing || busy} onChange={(s) => rename(i, s)} label={`Slot of step ${i + 1}`} />
          ) : null}
        </span>
      ) : (
        <span className="op-slot" />
      )}
      <span className="op-actions">
        {canBeOptional(op) ? (
          <button
            type="button"
            className={`btn btn-small${op.optional ? ' btn-primary' : ''}`}
            aria-label={`Step ${i + 1} optional`}
            aria-pressed={op.optional === true}
            title="Optional: when its element does not appear (a cookie banner shown on some visits only), a run skips this step and goes on"
            disabled={!editing || busy}
            onClick={() => toggleOptional(i)}
          >
            Optional
          </button>
        ) : null}
        <button
          type="button"
          className="btn btn-small"
          aria-label={`Move step ${i + 1} up`}
          disabled={!editing || i === 0 || busy}
          onClick={() => swap(i, i - 1)}
        >
          ↑
        </button>
        <button
          type="button"
          className="btn btn-small"
          aria-label={`Move step ${i + 1} down`}
          disabled={!editing || i === count - 1 || busy}
          onClick={() => swap(i, i + 1)}
        >
          ↓
        </button>
        <button type="button" className="btn btn-small" aria-label={`Delete step ${i + 1}`} disabled={!editing || busy} onClick={() => remove(i)}>
          Delete
        </button>
      </span>
    </li>
  );
}

function SlotName({ value, onChange, disabled, label }: { value: string; onChange(v: string): void; disabled: boolean; label: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <input
      className="slot-input mono"
      aria-label={label}
      value={text}
      disabled={disabled}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => text !== value && onChange(text)}
      onKeyDown={(e) => e.key === 'Enter' && text !== value && onChange(text)}
    />
  );
}
