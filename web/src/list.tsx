import type { ReactNode } from 'react';
import { Async, Card, type Resource } from './ui';

/**
 * The app's lists of records (automations, runs, keys, connected clients, audit entries, secrets,
 * members, versions, schedules): one table markup, and the card that holds it, shows its empty state
 * under the same title, and scrolls it sideways on a narrow screen. A page describes its columns;
 * the markup (and so the look the screenshot tests check) lives here only.
 */

export interface Column<T> {
  /** The header cell; none for an actions column. */
  header?: ReactNode;
  cell(row: T): ReactNode;
  /** Class of the body cells (`right` for actions, `small`, `muted`, `num`). */
  className?: string;
  /** Class of the header cell (`num` to align a count's header with its digits). */
  headerClassName?: string;
  /** A body cell's tooltip (the exact time behind a relative one). */
  title?(row: T): string | undefined;
}

export interface TableProps<T> {
  columns: readonly Column<T>[];
  rowKey(row: T): string;
  rowClassName?(row: T): string | undefined;
  /** A whole row opens the record: the row gets `row-link`; links inside it stop the click themselves. */
  onRowClick?(row: T): void;
  /** `data-testid` of the table. */
  testId?: string;
  /** `data-testid` of every body row. */
  rowTestId?: string;
}

/** A table of `rows`, one column per `columns` entry, in the scrolling wrapper. */
export function DataTable<T>({ rows, columns, rowKey, rowClassName, onRowClick, testId, rowTestId }: TableProps<T> & { rows: readonly T[] }) {
  return (
    <div className="table-wrap">
      <table className="table" data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} className={c.headerClassName}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr
              key={rowKey(row)}
              className={[onRowClick ? 'row-link' : '', rowClassName?.(row) ?? ''].filter(Boolean).join(' ') || undefined}
              onClick={onRowClick ? () => onRowClick(row) : undefined}
              data-testid={rowTestId}
            >
              {columns.map((c, i) => (
                <td key={i} className={c.className} title={c.title?.(row)}>
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

export interface RowsCardProps<T> extends TableProps<T> {
  /** The empty state's content (an `Empty`), shown in a card under the same title. */
  empty: ReactNode;
  title?: ReactNode;
  subtitle?: ReactNode;
  /** Inside the card, above the table (an error of the last page load). */
  above?: ReactNode;
  /** Inside the card, below the table (a "load older" button). */
  below?: ReactNode;
}

/**
 * Rows already at hand (a paged list keeps its own): `empty` in a card titled `title` when there is
 * no row, else the flush card titled `title` holding the table. The title stays in both states so
 * the page does not lose its heading when the last record goes.
 */
export function RowsCard<T>({ rows, empty, title, subtitle, above, below, ...table }: RowsCardProps<T> & { rows: readonly T[] }) {
  if (rows.length === 0) {
    return (
      <Card title={title} subtitle={subtitle}>
        {empty}
      </Card>
    );
  }
  return (
    <Card className="card-flush" title={title} subtitle={subtitle}>
      {above}
      <DataTable rows={rows} {...table} />
      {below}
    </Card>
  );
}

/**
 * A resource's rows: loading and errors as `Async` shows them, then a `RowsCard`. `select` narrows
 * the loaded rows (the keys that reach one automation); an empty selection is the empty state.
 */
export function TableCard<T>({
  r,
  label,
  select,
  ...card
}: RowsCardProps<T> & {
  r: Resource<T[]> & { reload(): Promise<void> };
  /** What is loading, for the loading state. */
  label: string;
  select?(rows: T[]): readonly T[];
}) {
  return (
    <Async r={r} label={label}>
      {(rows) => <RowsCard rows={select ? select(rows) : rows} {...card} />}
    </Async>
  );
}
