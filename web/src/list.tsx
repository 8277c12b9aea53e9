import type { ReactNode } from 'react';
import { Async, Card, type Resource } from './ui';

/**
 * The app's lists of records (secrets, members, versions, schedules...): one table markup, and the
 * card that loads it, shows its empty state, and scrolls it sideways on a narrow screen.
 */

export interface Column<T> {
  /** The header cell; none for an actions column. */
  header?: ReactNode;
  cell(row: T): ReactNode;
  /** Class of the body cells (`right` for actions, `small`, `muted`). */
  className?: string;
}

/** A table of `rows`, one column per `columns` entry, in the scrolling wrapper. */
export function DataTable<T>({
  rows,
  columns,
  rowKey,
  rowClassName,
  testId,
}: {
  rows: readonly T[];
  columns: readonly Column<T>[];
  rowKey(row: T): string;
  rowClassName?(row: T): string | undefined;
  testId?: string;
}) {
  return (
    <div className="table-wrap">
      <table className="table" data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i}>{c.header}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={rowClassName?.(row) || undefined}>
              {columns.map((c, i) => (
                <td key={i} className={c.className}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A resource's rows in a flush card: loading and errors as `Async` shows them, `empty` (in a card of
 * its own) when there is no row, else the card titled `title` holding the table.
 */
export function TableCard<T>({
  r,
  label,
  empty,
  title,
  subtitle,
  ...table
}: {
  r: Resource<T[]> & { reload(): Promise<void> };
  /** What is loading, for the loading state. */
  label: string;
  /** The empty state's content (an `Empty`). */
  empty: ReactNode;
  title?: ReactNode;
  subtitle?: ReactNode;
  columns: readonly Column<T>[];
  rowKey(row: T): string;
  rowClassName?(row: T): string | undefined;
  testId?: string;
}) {
  return (
    <Async r={r} label={label} isEmpty={(rows) => rows.length === 0} empty={<Card>{empty}</Card>}>
      {(rows) => (
        <Card className="card-flush" title={title} subtitle={subtitle}>
          <DataTable rows={rows} {...table} />
        </Card>
      )}
    </Async>
  );
}
