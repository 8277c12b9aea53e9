import { useState, type ReactNode } from 'react';

/** Read-only, highlighted JSON with collapsible objects and arrays (the FlowSpec, run inputs and outputs). */

export function JsonView({ value, collapseAt = 4, className }: { value: unknown; collapseAt?: number; className?: string }) {
  return (
    <pre className={`json ${className ?? ''}`}>
      <Node value={value} depth={0} collapseAt={collapseAt} last />
    </pre>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span className="j-null">null</span>;
  if (typeof value === 'string') return <span className="j-str">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span className="j-num">{String(value)}</span>;
  if (typeof value === 'boolean') return <span className="j-bool">{String(value)}</span>;
  return <span className="j-null">{value === undefined ? 'undefined' : String(value)}</span>;
}

function Node({ value, depth, collapseAt, last, name }: { value: unknown; depth: number; collapseAt: number; last: boolean; name?: string }): ReactNode {
  const [open, setOpen] = useState(depth < collapseAt);
  const indent = '  '.repeat(depth);
  const key =
    name !== undefined ? (
      <>
        <span className="j-key">{JSON.stringify(name)}</span>
        {': '}
      </>
    ) : null;
  const comma = last ? '' : ',';
  if (value === null || typeof value !== 'object') {
    return (
      <div>
        {indent}
        {key}
        <Scalar value={value} />
        {comma}
      </div>
    );
  }
  const isArray = Array.isArray(value);
  const entries: [string | undefined, unknown][] = isArray ? (value as unknown[]).map((v) => [undefined, v]) : Object.entries(value as Record<string, unknown>);
  const [l, r] = isArray ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    return (
      <div>
        {indent}
        {key}
        {l}
        {r}
        {comma}
      </div>
    );
  }
  if (!open) {
    return (
      <div>
        {indent}
        {key}
        <button type="button" className="j-toggle" onClick={() => setOpen(true)} title="Expand">
          {l} … {entries.length} {isArray ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'} {r}
        </button>
        {comma}
      </div>
    );
  }
  return (
    <>
      <div>
        {indent}
        {key}
        {depth > 0 ? (
          <button type="button" className="j-toggle" onClick={() => setOpen(false)} title="Collapse">
            {l}
          </button>
        ) : (
          l
        )}
      </div>
      {entries.map(([k, v], i) => (
        <Node key={k ?? i} name={k} value={v} depth={depth + 1} collapseAt={collapseAt} last={i === entries.length - 1} />
      ))}
      <div>
        {indent}
        {r}
        {comma}
      </div>
    </>
  );
}
