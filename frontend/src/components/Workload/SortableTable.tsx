import {
  type ColumnDef,
  type SortingState,
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
} from '@tanstack/react-table';
import { type ReactNode, useMemo } from 'react';
import type { SortOrder } from '../../lib/viewState';

/** One column: its value (what it sorts by) and, if not the value itself, how it shows. */
export interface WorkloadColumn<T> {
  readonly id: string;
  readonly header: string;
  readonly title?: string;
  /** Right-aligned, tabular figures. */
  readonly numeric?: boolean;
  readonly value: (row: T) => number | string | null | undefined;
  readonly cell?: (row: T) => ReactNode;
}

/**
 * A table sorted in the browser by any column (TanStack Table): every row of the answer is
 * on the page, so sorting needs no request. The sort lives in the URL (the page passes it);
 * unknown values (null: the source does not count it) sort last either way.
 */
export function SortableTable<T>({
  rows,
  columns,
  sort,
  order,
  onSort,
  rowId,
  caption,
  testId,
}: {
  rows: readonly T[];
  columns: readonly WorkloadColumn<T>[];
  sort: string;
  order: SortOrder;
  onSort: (column: string) => void;
  rowId: (row: T) => string;
  caption: string;
  testId: string;
}) {
  const definitions = useMemo<ColumnDef<T>[]>(
    () =>
      columns.map((column) => ({
        id: column.id,
        header: column.header,
        accessorFn: (row: T) => column.value(row) ?? undefined,
        sortUndefined: 'last',
        sortingFn: 'basic',
        cell: ({ row }) => (column.cell ? column.cell(row.original) : column.value(row.original)),
        meta: { className: column.numeric ? 'num' : undefined, title: column.title },
      })),
    [columns],
  );
  const sorting = useMemo<SortingState>(
    () => [{ id: sort, desc: order === 'desc' }],
    [sort, order],
  );
  // TanStack Table v8 hands out fresh functions each render; fine without the React Compiler.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable({
    data: rows as T[],
    columns: definitions,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getRowId: rowId,
    state: { sorting },
    manualSorting: false,
  });

  return (
    <div className="scroll-x">
      <table className="data-table workload-table" data-testid={testId}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => {
                const meta = header.column.columnDef.meta;
                const active = header.column.id === sort;
                return (
                  <th
                    key={header.id}
                    scope="col"
                    className={meta?.className}
                    title={meta?.title}
                    aria-sort={active ? (order === 'desc' ? 'descending' : 'ascending') : undefined}
                  >
                    <button
                      type="button"
                      className={active ? 'sort sort-active' : 'sort'}
                      onClick={() => onSort(header.column.id)}
                      data-testid={`sort-${header.column.id}`}
                    >
                      {flexRender(header.column.columnDef.header, header.getContext())}
                      <span className="sort-icon" aria-hidden="true">
                        {active ? (order === 'desc' ? '▼' : '▲') : '↕'}
                      </span>
                    </button>
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id} data-testid={`${testId}-row`}>
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id} className={cell.column.columnDef.meta?.className}>
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
