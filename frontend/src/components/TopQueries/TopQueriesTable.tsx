import {
  type ColumnDef,
  type RowData,
  flexRender,
  getCoreRowModel,
  useReactTable,
} from '@tanstack/react-table';
import { type KeyboardEvent, type ReactNode, useMemo } from 'react';
import { Link } from 'react-router';
import type { TopQueries } from '../../api/types';
import {
  formatCount,
  formatDuration,
  formatExamined,
  formatLoad,
  formatRate,
} from '../../lib/format';
import type { Marker } from '../../lib/markers';
import type { SortKey, SortOrder } from '../../lib/viewState';
import { MarkerAxis } from '../Annotations/MarkerAxis';
import { SqlText } from '../Sql/SqlText';
import { groupByLabel } from '../../lib/viewState';
import { compactSelectList } from '../../lib/sql';
import { LoadSparkline, SPARK_WIDTH } from './LoadSparkline';
import { ShareBar } from './ShareBar';
import {
  type TopQueryView,
  type TotalsView,
  isGrouped,
  toRowViews,
  toTotalsView,
} from './topQueriesView';

export interface TopQueriesTableProps {
  data: TopQueries;
  offset?: number;
  sort?: SortKey;
  order?: SortOrder;
  onSort?: (key: SortKey) => void;
  markers?: readonly Marker[];
  /** Link target of a query's detail view (its query string carries the scope). */
  detailHref?: (queryId: string) => string;
  /** In a grouped table, picking a value (filter on it and list its queries). */
  onPickGroup?: (value: string) => void;
}

declare module '@tanstack/react-table' {
  // What a column of this table says besides its header and cell.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ColumnMeta<TData extends RowData, TValue> {
    className?: string;
    title?: string;
    totals?: (totals: TotalsView) => ReactNode;
  }
  // What cells read that changes while the table is shown (see `columns` below).
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface TableMeta<TData extends RowData> {
    markers: readonly Marker[];
    domain: { fromMs: number; toMs: number };
    detailHref: (queryId: string) => string;
    onPickGroup?: (value: string) => void;
  }
}

const NO_MARKERS: readonly Marker[] = [];

function defaultHref(queryId: string): string {
  return `/queries/${encodeURIComponent(queryId)}`;
}

/** Arrow keys move between the rows' query links; Home/End jump to the first/last. */
function moveFocus(event: KeyboardEvent<HTMLTableSectionElement>): void {
  const keys = ['ArrowDown', 'ArrowUp', 'Home', 'End'];
  if (!keys.includes(event.key)) return;
  const target = event.target as HTMLElement;
  if (!target.classList.contains('query-link')) return;
  const links = [...event.currentTarget.querySelectorAll<HTMLElement>('.query-link')];
  const index = links.indexOf(target);
  const next =
    event.key === 'Home'
      ? 0
      : event.key === 'End'
        ? links.length - 1
        : index + (event.key === 'ArrowDown' ? 1 : -1);
  const link = links[next];
  if (link) {
    event.preventDefault();
    link.focus();
  }
}

/**
 * The top queries as a table (TanStack Table, sorted and paged by the server): headers of
 * sortable columns are buttons; rows are reached with Tab and walked with the arrow keys.
 */
export function TopQueriesTable({
  data,
  offset = 0,
  sort = 'load',
  order = 'desc',
  onSort,
  markers = NO_MARKERS,
  detailHref = defaultHref,
  onPickGroup,
}: TopQueriesTableProps) {
  const rows = useMemo(() => toRowViews(data, offset), [data, offset]);
  const grouped = isGrouped(data);
  const groupLabel = groupByLabel(data.group_by);
  const totals = toTotalsView(data.totals);
  const domain = useMemo(
    () => ({ fromMs: Date.parse(data.from), toMs: Date.parse(data.to) }),
    [data.from, data.to],
  );

  const columns = useMemo<ColumnDef<TopQueryView>[]>(
    () => [
      {
        id: 'rank',
        header: '#',
        enableSorting: false,
        meta: { className: 'num rank' },
        cell: ({ row }) => row.original.rank,
      },
      {
        id: 'query',
        header: grouped ? groupLabel : 'Query',
        enableSorting: false,
        meta: { className: 'query' },
        cell: ({ row, table }) => {
          const view = row.original;
          const { detailHref, onPickGroup } = table.options.meta!;
          if (grouped) {
            return (
              <button
                type="button"
                className="query-link group-link"
                onClick={() => onPickGroup?.(view.queryId)}
                title={`Show the queries of ${groupLabel.toLowerCase()} ${view.queryId || '(empty)'}`}
                data-testid="group-link"
              >
                {view.queryId || <span className="muted">(empty)</span>}
              </button>
            );
          }
          return (
            <>
              <Link
                className="query-link"
                to={detailHref(view.queryId)}
                title={view.fingerprint}
                data-testid="query-link"
              >
                <SqlText
                  sql={compactSelectList(view.fingerprint)}
                  className="fingerprint"
                  title={view.fingerprint}
                />
              </Link>
              <span className="query-meta">
                <span className="query-id">{view.queryId}</span>
                {view.tables.length > 0 && (
                  <span className="query-tables" title="Tables">
                    {view.tables.join(', ')}
                  </span>
                )}
              </span>
            </>
          );
        },
      },
      {
        id: 'load',
        header: 'Load',
        meta: {
          title:
            'Average active sessions: total query time / seconds in range; under 0.1, the ' +
            'query time per second (12 ms/s is 0.012 sessions)',
          totals: (t: TotalsView) => (
            <div className="load">
              <span className="load-value">{formatLoad(t.load)}</span>
              <ShareBar share={1} />
            </div>
          ),
        },
        cell: ({ row }) => (
          <div className="load">
            <span className="load-value">{formatLoad(row.original.load)}</span>
            <ShareBar share={row.original.share} />
          </div>
        ),
      },
      {
        id: 'sparkline',
        header: ({ table }) => (
          <div className="spark-header" style={{ width: SPARK_WIDTH }}>
            <span>Load over time</span>
            <MarkerAxis markers={table.options.meta!.markers} label="Annotations in this range" />
          </div>
        ),
        enableSorting: false,
        cell: ({ row, table }) => (
          <LoadSparkline
            data={row.original.sparkline}
            domain={table.options.meta!.domain}
            markers={table.options.meta!.markers}
          />
        ),
      },
      {
        id: 'count',
        header: 'Count',
        meta: { className: 'num', totals: (t: TotalsView) => formatCount(t.count) },
        cell: ({ row }) => formatCount(row.original.count),
      },
      {
        id: 'qps',
        header: 'QPS',
        meta: {
          className: 'num',
          title: 'Queries per second',
          totals: (t: TotalsView) => formatRate(t.qps),
        },
        cell: ({ row }) => formatRate(row.original.qps),
      },
      {
        id: 'query_time_avg',
        header: 'Avg',
        meta: {
          className: 'num',
          title: 'Average latency',
          totals: (t: TotalsView) => formatDuration(t.avgTime),
        },
        cell: ({ row }) => formatDuration(row.original.avgTime),
      },
      {
        id: 'query_time_p95',
        header: 'p95',
        meta: { className: 'num', title: '95th percentile latency' },
        cell: ({ row }) => formatDuration(row.original.p95Time),
      },
      {
        id: 'rows_examined_per_row_sent',
        header: 'Exam./sent',
        meta: {
          className: 'num',
          title:
            'Rows examined per row sent: high values point at missing indexes; for ' +
            'statements that send no rows (UPDATE, DELETE), rows examined per call',
          totals: (t: TotalsView) => formatExamined(t.examinedPerSent),
        },
        cell: ({ row }) => formatExamined(row.original.examinedPerSent),
      },
      {
        id: 'flags',
        header: 'Flags',
        enableSorting: false,
        cell: ({ row }) => (
          <span className="flags">
            {row.original.flags.map((flag) => (
              <span key={flag.key} className={`flag flag-${flag.key}`} title={flag.title}>
                {flag.label}
              </span>
            ))}
          </span>
        ),
      },
    ],
    // Only what changes the columns themselves: TanStack renders a cell function as a React
    // component, so a new one remounts every cell, and a focused row link loses its focus
    // (annotations arriving after the rows did that). What else changes comes as `meta`.
    [grouped, groupLabel],
  );

  // TanStack Table v8 hands out fresh functions each render; fine without the React Compiler.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable({
    data: rows,
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (row) => row.queryId,
    meta: { markers, domain, detailHref, onPickGroup },
    manualSorting: true,
    manualPagination: true,
    state: { sorting: [{ id: sort, desc: order === 'desc' }] },
  });

  return (
    <table className="top-queries" data-testid="top-queries-table">
      <caption className="visually-hidden">Top queries</caption>
      <colgroup>
        <col className="col-rank" />
        <col className="col-query" />
        <col className="col-load" />
        <col className="col-spark" />
        <col className="col-count" />
        <col className="col-qps" />
        <col className="col-time" />
        <col className="col-time" />
        <col className="col-ratio" />
        <col className="col-flags" />
      </colgroup>
      <thead>
        {table.getHeaderGroups().map((group) => (
          <tr key={group.id}>
            {group.headers.map((header) => {
              const meta = header.column.columnDef.meta;
              // Sorting is the server's (manualSorting), so columns have no accessor and
              // TanStack's getCanSort() is false: the column definitions say it instead.
              const sortable =
                header.column.columnDef.enableSorting !== false && onSort !== undefined;
              const active = header.column.id === sort;
              const content = flexRender(header.column.columnDef.header, header.getContext());
              return (
                <th
                  key={header.id}
                  scope="col"
                  className={meta?.className}
                  title={meta?.title}
                  aria-sort={active ? (order === 'desc' ? 'descending' : 'ascending') : undefined}
                >
                  {sortable ? (
                    <button
                      type="button"
                      className={active ? 'sort sort-active' : 'sort'}
                      onClick={() => onSort(header.column.id as SortKey)}
                      data-testid={`sort-${header.column.id}`}
                    >
                      {content}
                      <span className="sort-icon" aria-hidden="true">
                        {active ? (order === 'desc' ? '▼' : '▲') : '↕'}
                      </span>
                    </button>
                  ) : (
                    content
                  )}
                </th>
              );
            })}
          </tr>
        ))}
      </thead>
      <tbody onKeyDown={moveFocus}>
        <tr className="totals" data-testid="totals-row">
          {table.getVisibleLeafColumns().map((column) => {
            const meta = column.columnDef.meta;
            if (column.id === 'query') {
              return (
                <th key={column.id} scope="row" className="query">
                  {grouped ? 'Everything' : 'All queries'}
                  <span className="query-meta">{formatCount(totals.queries)} query classes</span>
                </th>
              );
            }
            return (
              <td key={column.id} className={meta?.className}>
                {meta?.totals?.(totals)}
              </td>
            );
          })}
        </tr>
        {table.getRowModel().rows.map((row) => (
          <tr key={row.id} data-testid={grouped ? 'group-row' : 'query-row'}>
            {row.getVisibleCells().map((cell) => {
              const meta = cell.column.columnDef.meta;
              return (
                <td key={cell.id} className={meta?.className}>
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
