import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage, isNotFound } from '../api/errors';
import { userWorkloadOptions } from '../api/statistics';
import type { UserWorkloadRow } from '../api/types';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { SortableTable, type WorkloadColumn } from '../components/Workload/SortableTable';
import { WorkloadHeader } from '../components/Workload/WorkloadHeader';
import { useUrlState } from '../hooks/useUrlState';
import { formatCount, formatDuration, formatShare } from '../lib/format';
import {
  type WorkloadState,
  nextWorkloadSort,
  parseWorkload,
  rangeParams,
  serializeWorkload,
  userQueriesHref,
} from '../lib/workload';

type Numeric = {
  [K in keyof UserWorkloadRow]: UserWorkloadRow[K] extends number | null | undefined ? K : never;
}[keyof UserWorkloadRow];

const count = (
  field: Numeric,
  header: string,
  title?: string,
): WorkloadColumn<UserWorkloadRow> => ({
  id: field,
  header,
  numeric: true,
  ...(title && { title }),
  value: (row) => row[field],
  cell: (row) => {
    const value = row[field];
    return value === null || value === undefined ? '–' : formatCount(value);
  },
});

const seconds = (
  field: Numeric,
  header: string,
  title: string,
): WorkloadColumn<UserWorkloadRow> => ({
  id: field,
  header,
  title,
  numeric: true,
  value: (row) => row[field],
  cell: (row) => formatDuration(row[field] ?? null),
});

function columns(instance: string): WorkloadColumn<UserWorkloadRow>[] {
  return [
    {
      id: 'user',
      header: 'User',
      value: (row) => row.user,
      cell: (row) => (
        <Link
          to={userQueriesHref(instance, row.user)}
          title={`The top queries of ${row.user || 'no user'} on ${instance}`}
          data-testid="user-link"
        >
          {row.user || <span className="muted">(none given)</span>}
        </Link>
      ),
    },
    {
      id: 'own',
      header: 'Account of',
      title: "Quanta's own monitoring account (the instance's DSN) reads statistics too",
      value: (row) => (row.own ? 'Quanta' : 'application'),
      cell: (row) => (row.own ? <span className="muted">Quanta</span> : ''),
    },
    seconds('cpu_time_s', 'CPU', 'CPU time the server spent on its connections (USER_STATISTICS)'),
    seconds('busy_time_s', 'Busy', 'Time its connections were busy (USER_STATISTICS)'),
    count('connections_total', 'Connections'),
    count('connections_concurrent', 'Concurrent', 'The most connections at once the agent saw'),
    count('connections_denied', 'Denied', 'Connections refused (too many, bad password...)'),
    count('access_denied', 'Access denied', 'Statements refused for lack of a privilege'),
    count('errors', 'Errors', 'Statements that failed (performance_schema)'),
    count('rows_read', 'Rows read', 'userstat: read from tables; else examined by its queries'),
    count('rows_sent', 'Rows sent'),
    count('rows_changed', 'Rows changed'),
    count('select_commands', 'Selects'),
    count('update_commands', 'Updates', 'INSERT, UPDATE, DELETE, REPLACE... statements'),
    count('other_commands', 'Other'),
    count('calls', 'Calls', 'Statements of its query classes in the query store'),
    seconds('query_time_s', 'Query time', 'Summed query time of its query classes'),
    {
      id: 'load_share',
      header: 'Load share',
      numeric: true,
      value: (row) => row.load_share,
      cell: (row) => (row.load_share === null ? '–' : formatShare(row.load_share)),
    },
  ];
}

const COLUMNS = [
  'user',
  'own',
  'cpu_time_s',
  'busy_time_s',
  'connections_total',
  'connections_concurrent',
  'connections_denied',
  'access_denied',
  'errors',
  'rows_read',
  'rows_sent',
  'rows_changed',
  'select_commands',
  'update_commands',
  'other_commands',
  'calls',
  'query_time_s',
  'load_share',
] as const;
const DEFAULT_SORT = 'cpu_time_s';
const parse = (search: string) => parseWorkload(search, COLUMNS, DEFAULT_SORT);
const serialize = (state: WorkloadState) => serializeWorkload(state, DEFAULT_SORT);

const SOURCES = {
  userstat: 'From USER_STATISTICS (userstat), next to what the query store has per user.',
  queries:
    'USER_STATISTICS is not available here (MySQL, or userstat off): the figures are what ' +
    "the query store knows per user (its statements' time and rows).",
};

/** An instance's database accounts by activity over the range, sortable by every column. */
export function Users() {
  const { instanceId = '' } = useParams();
  const id = Number(instanceId);
  const valid = Number.isInteger(id) && id > 0;
  const [state, setState] = useUrlState(parse, serialize);
  const range = useMemo(() => rangeParams(state.range), [state.range]);
  const query = useQuery({ ...userWorkloadOptions(id, range), enabled: valid });
  const onSort = useCallback(
    (column: string) =>
      setState((current) => ({ ...current, ...nextWorkloadSort(current, column) })),
    [setState],
  );
  const data = query.data;
  const userColumns = useMemo(() => columns(data?.instance ?? ''), [data?.instance]);

  if (!valid)
    return <EmptyState title="There is no instance at this address." testId="users-empty" />;
  return (
    <section className="workload" aria-labelledby="workload-title">
      <WorkloadHeader
        instanceId={id}
        instance={data?.instance}
        page="users"
        title="Users"
        range={state.range}
        onRange={(value) => setState({ range: value })}
        resolved={data && { from: data.from, to: data.to }}
      />
      {query.status === 'pending' && <LoadingState label="Loading users…" />}
      {query.status === 'error' &&
        (isNotFound(query.error) ? (
          <EmptyState title="This instance does not exist (any more)." testId="users-empty" />
        ) : (
          <ErrorState
            title="Could not load the users"
            message={errorMessage(query.error)}
            onRetry={() => void query.refetch()}
            testId="users-error"
          />
        ))}
      {data && (
        <div
          className={query.isPlaceholderData ? 'stale' : undefined}
          data-settled={query.isFetching ? undefined : serialize(state)}
          data-testid="users-region"
        >
          <p className="muted" data-testid="users-source">
            {SOURCES[data.source]}
          </p>
          {data.users.length === 0 ? (
            <EmptyState title="No account was active in this range." testId="users-none" />
          ) : (
            <SortableTable
              rows={data.users}
              columns={userColumns}
              sort={state.sort}
              order={state.order}
              onSort={onSort}
              rowId={(row) => row.user}
              caption="Database accounts by activity"
              testId="users-table"
            />
          )}
        </div>
      )}
    </section>
  );
}
