import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage, isNotFound } from '../api/errors';
import { tableWorkloadOptions } from '../api/statistics';
import type { TableWorkloadRow } from '../api/types';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { SortableTable, type WorkloadColumn } from '../components/Workload/SortableTable';
import { WorkloadHeader } from '../components/Workload/WorkloadHeader';
import { useUrlState } from '../hooks/useUrlState';
import { formatBytes, formatCount, formatRate, formatShare } from '../lib/format';
import { compactSelectList } from '../lib/sql';
import {
  type WorkloadState,
  coverageLine,
  nextWorkloadSort,
  parseWorkload,
  queryHref,
  rangeParams,
  serializeWorkload,
  tableHref,
} from '../lib/workload';

const DEFAULT_SORT = 'rows_read';
// Query classes shown per row (the table's page lists all of them).
const QUERIES_SHOWN = 2;

function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : formatCount(value);
}

function columns(instanceId: number, instance: string, search: string) {
  const list: WorkloadColumn<TableWorkloadRow>[] = [
    {
      id: 'table',
      header: 'Table',
      value: (row) => row.table,
      cell: (row) => (
        <Link to={tableHref(instanceId, row.table, search)} data-testid="table-link">
          <code>{row.table}</code>
        </Link>
      ),
    },
    {
      id: 'rows_read',
      header: 'Rows read',
      numeric: true,
      value: (r) => r.rows_read,
      cell: (r) => count(r.rows_read),
    },
    {
      id: 'rows_read_per_s',
      header: 'Read/s',
      title: 'Rows read per second of the range the statistics cover',
      numeric: true,
      value: (r) => r.rows_read_per_s,
      cell: (r) => formatRate(r.rows_read_per_s),
    },
    {
      id: 'read_share',
      header: 'Read share',
      numeric: true,
      value: (r) => r.read_share,
      cell: (r) => formatShare(r.read_share),
    },
    {
      id: 'rows_changed',
      header: 'Rows changed',
      title: 'Rows inserted, updated or deleted',
      numeric: true,
      value: (r) => r.rows_changed,
      cell: (r) => count(r.rows_changed),
    },
    {
      id: 'rows_changed_per_s',
      header: 'Changed/s',
      numeric: true,
      value: (r) => r.rows_changed_per_s,
      cell: (r) => formatRate(r.rows_changed_per_s),
    },
    {
      id: 'changed_share',
      header: 'Change share',
      numeric: true,
      value: (r) => r.changed_share,
      cell: (r) => formatShare(r.changed_share),
    },
    {
      id: 'writes',
      header: 'Ins / upd / del',
      title: 'performance_schema counts each kind; userstat only their sum',
      numeric: true,
      value: (r) => r.rows_inserted,
      cell: (r) =>
        r.rows_inserted === null
          ? '–'
          : `${count(r.rows_inserted)} / ${count(r.rows_updated)} / ${count(r.rows_deleted)}`,
    },
    {
      id: 'row_estimate',
      header: 'Rows (est.)',
      title: 'From the latest schema snapshot',
      numeric: true,
      value: (r) => r.row_estimate,
      cell: (r) => count(r.row_estimate),
    },
    {
      id: 'size',
      header: 'Size',
      title: 'Data + indexes, from the latest schema snapshot',
      numeric: true,
      value: (r) => (r.data_bytes === null ? null : r.data_bytes + (r.index_bytes ?? 0)),
      cell: (r) => (r.data_bytes === null ? '–' : formatBytes(r.data_bytes + (r.index_bytes ?? 0))),
    },
    {
      id: 'queries',
      header: 'Queries (share of load)',
      title: 'The query classes naming the table, heaviest first',
      value: (r) => r.queries[0]?.load ?? null,
      cell: (r) => (
        <ul className="table-queries">
          {r.queries.slice(0, QUERIES_SHOWN).map((q) => (
            <li key={q.query_id}>
              <Link to={queryHref(q.query_id, instance, q.schema)} title={q.fingerprint}>
                <code>{compactSelectList(q.fingerprint).slice(0, 60)}</code>
              </Link>{' '}
              <span className="muted">{formatShare(q.share)}</span>
            </li>
          ))}
          {r.queries.length > QUERIES_SHOWN && (
            <li className="muted">+{r.queries.length - QUERIES_SHOWN} more</li>
          )}
        </ul>
      ),
    },
  ];
  return list;
}

const TABLE_COLUMNS = [
  'table',
  'rows_read',
  'rows_read_per_s',
  'read_share',
  'rows_changed',
  'rows_changed_per_s',
  'changed_share',
  'writes',
  'row_estimate',
  'size',
  'queries',
] as const;

const parse = (search: string) => parseWorkload(search, TABLE_COLUMNS, DEFAULT_SORT);
const serialize = (state: WorkloadState) => serializeWorkload(state, DEFAULT_SORT);

/** An instance's tables by reads and writes over the range, sortable by every column. */
export function Tables() {
  const { instanceId = '' } = useParams();
  const id = Number(instanceId);
  const valid = Number.isInteger(id) && id > 0;
  const [state, setState] = useUrlState(parse, serialize);
  const range = useMemo(() => rangeParams(state.range), [state.range]);
  const query = useQuery({ ...tableWorkloadOptions(id, range), enabled: valid });
  const onSort = useCallback(
    (column: string) =>
      setState((current) => ({ ...current, ...nextWorkloadSort(current, column) })),
    [setState],
  );
  const search = serialize({ ...state, sort: DEFAULT_SORT, order: 'desc' });
  const data = query.data;
  const tableColumns = useMemo(
    () => columns(id, data?.instance ?? '', search),
    [id, data?.instance, search],
  );

  if (!valid)
    return <EmptyState title="There is no instance at this address." testId="tables-empty" />;
  return (
    <section className="workload" aria-labelledby="workload-title">
      <WorkloadHeader
        instanceId={id}
        instance={data?.instance}
        page="tables"
        title="Tables"
        range={state.range}
        onRange={(value) => setState({ range: value })}
        resolved={data && { from: data.from, to: data.to }}
      />
      {query.status === 'pending' && <LoadingState label="Loading tables…" />}
      {query.status === 'error' &&
        (isNotFound(query.error) ? (
          <EmptyState title="This instance does not exist (any more)." testId="tables-empty" />
        ) : (
          <ErrorState
            title="Could not load the tables"
            message={errorMessage(query.error)}
            onRetry={() => void query.refetch()}
            testId="tables-error"
          />
        ))}
      {data && (
        <div
          className={query.isPlaceholderData ? 'stale' : undefined}
          data-settled={query.isFetching ? undefined : serialize(state)}
          data-testid="tables-region"
        >
          <p className="muted" data-testid="statistics-source">
            {coverageLine(data.coverage) ?? 'No table statistics from this instance yet.'}
          </p>
          {data.tables.length === 0 ? (
            <EmptyState title="No table was read or written in this range." testId="tables-none">
              <p>
                The agent sends table statistics with the <code>stats</code> source: userstat
                (MariaDB, Percona Server: <code>SET GLOBAL userstat = ON</code>) or else
                performance_schema&apos;s table I/O summaries.
              </p>
            </EmptyState>
          ) : (
            <SortableTable
              rows={data.tables}
              columns={tableColumns}
              sort={state.sort}
              order={state.order}
              onSort={onSort}
              rowId={(row) => row.table}
              caption="Tables by reads and writes"
              testId="tables-table"
            />
          )}
        </div>
      )}
    </section>
  );
}
