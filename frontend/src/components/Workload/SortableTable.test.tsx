import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { SortableTable, type WorkloadColumn } from './SortableTable';

interface Row {
  name: string;
  reads: number | null;
}

const ROWS: Row[] = [
  { name: 'b', reads: 5 },
  { name: 'a', reads: null },
  { name: 'c', reads: 50 },
];
const COLUMNS: WorkloadColumn<Row>[] = [
  { id: 'name', header: 'Name', value: (r) => r.name },
  { id: 'reads', header: 'Reads', numeric: true, value: (r) => r.reads },
];

function order(sort: string, direction: 'asc' | 'desc'): string[] {
  const html = renderToStaticMarkup(
    <SortableTable
      rows={ROWS}
      columns={COLUMNS}
      sort={sort}
      order={direction}
      onSort={() => undefined}
      rowId={(r) => r.name}
      caption="rows"
      testId="t"
    />,
  );
  return [...html.matchAll(/<tr data-testid="t-row"><td>(\w)<\/td>/g)].map((m) => m[1] ?? '');
}

describe('SortableTable', () => {
  it('sorts by any column, unknown values last either way', () => {
    expect(order('reads', 'desc')).toEqual(['c', 'b', 'a']);
    expect(order('reads', 'asc')).toEqual(['b', 'c', 'a']);
    expect(order('name', 'asc')).toEqual(['a', 'b', 'c']);
    expect(order('name', 'desc')).toEqual(['c', 'b', 'a']);
  });
});
