import { createElement, type FunctionComponent, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

/**
 * The web app's one table component (web/src/list.tsx), rendered to markup: the empty state keeps
 * the card's title, and the classes and test ids the e2e tests and styles.css read are on the rows.
 */

// Imported by a computed path: the repository's tsconfig has no JSX (web/ has its own), so tsc must not
// follow this import into a .tsx file; vitest transforms it. The column shape is restated here.
const LIST = '../../../web/src/list.js';
const { RowsCard } = (await import(LIST)) as { RowsCard: FunctionComponent<Record<string, unknown>> };

interface Column<T> {
  header?: ReactNode;
  cell(row: T): ReactNode;
  className?: string;
  headerClassName?: string;
  title?(row: T): string | undefined;
}

interface Row {
  id: string;
  name: string;
  revoked: boolean;
}

const columns: Column<Row>[] = [
  { header: 'Name', cell: (r) => r.name, title: (r) => `id ${r.id}` },
  { header: 'Count', headerClassName: 'num', className: 'num', cell: () => 3 },
  { className: 'right', cell: () => 'Revoke' },
];

function render(rows: Row[], extra: Record<string, unknown> = {}): string {
  return renderToStaticMarkup(
    createElement(RowsCard, {
      rows,
      columns,
      rowKey: (r: Row) => r.id,
      title: 'Connected clients',
      empty: createElement('div', { className: 'empty' }, 'Nothing here'),
      ...extra,
    }),
  );
}

describe('RowsCard', () => {
  it('shows the empty state under the card title', () => {
    const html = render([]);
    expect(html).toContain('<h2 class="card-title">Connected clients</h2>');
    expect(html).toContain('Nothing here');
    expect(html).not.toContain('<table');
    expect(html).not.toContain('card-flush');
  });

  it('renders rows in the flush card with the row classes, test ids and cell classes', () => {
    const html = render(
      [
        { id: 'a', name: 'alpha', revoked: false },
        { id: 'b', name: 'beta', revoked: true },
      ],
      {
        testId: 'grants',
        rowTestId: 'oauth-grant',
        rowClassName: (r: Row) => (r.revoked ? 'row-dim' : undefined),
        onRowClick: () => {},
        below: createElement('p', null, 'Older'),
      },
    );
    expect(html).toContain('class="card card-flush"');
    expect(html).toContain('<h2 class="card-title">Connected clients</h2>');
    expect(html).toContain('<div class="table-wrap"><table class="table" data-testid="grants">');
    expect(html).toContain('<th class="num">Count</th>');
    expect(html).toContain('<tr class="row-link" data-testid="oauth-grant"><td title="id a">alpha</td>');
    expect(html).toContain('<tr class="row-link row-dim" data-testid="oauth-grant"><td title="id b">beta</td>');
    expect(html).toContain('<td class="right">Revoke</td>');
    expect(html.indexOf('</table></div><p>Older</p>')).toBeGreaterThan(0);
  });
});
