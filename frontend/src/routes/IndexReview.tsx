import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage, isNotFound } from '../api/errors';
import { indexReviewOptions } from '../api/statistics';
import type { IndexFinding } from '../api/types';
import { SqlText } from '../components/Sql/SqlText';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { SortableTable, type WorkloadColumn } from '../components/Workload/SortableTable';
import { WorkloadHeader } from '../components/Workload/WorkloadHeader';
import { useUrlState } from '../hooks/useUrlState';
import {
  FINDING_LABELS,
  type WorkloadState,
  coverageLine,
  nextWorkloadSort,
  parseWorkload,
  rangeParams,
  serializeWorkload,
  tableHref,
  unusedCheckLine,
} from '../lib/workload';

const DEFAULT_SORT = 'table';
const COLUMNS = ['table', 'index', 'kind', 'reason', 'ddl'] as const;
const parse = (search: string) => parseWorkload(search, COLUMNS, DEFAULT_SORT);
const serialize = (state: WorkloadState) => serializeWorkload(state, DEFAULT_SORT);

function columns(instanceId: number): WorkloadColumn<IndexFinding>[] {
  return [
    {
      id: 'table',
      header: 'Table',
      value: (f) => f.table,
      cell: (f) => (
        <Link to={tableHref(instanceId, f.table)}>
          <code>{f.table}</code>
        </Link>
      ),
    },
    { id: 'index', header: 'Index', value: (f) => f.index, cell: (f) => <code>{f.index}</code> },
    {
      id: 'kind',
      header: 'Finding',
      value: (f) => FINDING_LABELS[f.kind],
      cell: (f) => (
        <span className={`finding-kind finding-${f.kind}`}>{FINDING_LABELS[f.kind]}</span>
      ),
    },
    { id: 'reason', header: 'Why', value: (f) => f.reason },
    {
      id: 'ddl',
      header: 'Suggested DDL',
      value: (f) => f.ddl,
      cell: (f) => <SqlText sql={`${f.ddl};`} />,
    },
  ];
}

/** An instance's existing indexes that can go: duplicates, redundant prefixes, primary-key
 * suffixes, and indexes not read over an unbroken window of statistics. */
export function IndexReview() {
  const { instanceId = '' } = useParams();
  const id = Number(instanceId);
  const valid = Number.isInteger(id) && id > 0;
  const [state, setState] = useUrlState(parse, serialize);
  const range = useMemo(() => rangeParams(state.range), [state.range]);
  const query = useQuery({ ...indexReviewOptions(id, range), enabled: valid });
  const onSort = useCallback(
    (column: string) =>
      setState((current) => ({ ...current, ...nextWorkloadSort(current, column) })),
    [setState],
  );
  const findingColumns = useMemo(() => columns(id), [id]);

  const data = query.data;
  if (!valid)
    return <EmptyState title="There is no instance at this address." testId="review-empty" />;
  return (
    <section className="workload" aria-labelledby="workload-title">
      <WorkloadHeader
        instanceId={id}
        instance={data?.instance}
        page="index-review"
        title="Index review"
        range={state.range}
        subtitle="Over the statistics' unbroken window and the latest schema snapshots"
      />
      {query.status === 'pending' && <LoadingState label="Loading the index review…" />}
      {query.status === 'error' &&
        (isNotFound(query.error) ? (
          <EmptyState title="This instance does not exist (any more)." testId="review-empty" />
        ) : (
          <ErrorState
            title="Could not load the index review"
            message={errorMessage(query.error)}
            onRetry={() => void query.refetch()}
            testId="review-error"
          />
        ))}
      {data && (
        <div
          className={query.isPlaceholderData ? 'stale' : undefined}
          data-settled={query.isFetching ? undefined : serialize(state)}
          data-testid="review-region"
        >
          <div className="card review-window" data-testid="review-window">
            <p>{unusedCheckLine(data)}</p>
            <p className="muted">
              {coverageLine(data.coverage, false) ?? 'No index statistics received yet.'}
            </p>
            {data.coverage?.broken_at && (
              <p className="not-ok" data-testid="review-restarted">
                The window restarted at {data.coverage.broken_at.slice(0, 16).replace('T', ' ')}{' '}
                UTC: {data.coverage.break_reason}. Reads before it are not counted, so unused
                indexes wait for a new window.
              </p>
            )}
          </div>
          {data.tables.length === 0 ? (
            <EmptyState
              title="No table of this instance has a schema snapshot yet."
              testId="review-no-tables"
            >
              <p>
                Snapshots are taken for the tables the statistics or the queries name, once the
                instance has a DSN.
              </p>
            </EmptyState>
          ) : data.findings.length === 0 ? (
            <EmptyState title="No index to drop." testId="review-none">
              <p>
                {data.tables.length} table{data.tables.length === 1 ? '' : 's'} reviewed: no
                duplicate, redundant or primary-key-suffix index, and none unused over the window.
              </p>
            </EmptyState>
          ) : (
            <SortableTable
              rows={data.findings}
              columns={findingColumns}
              sort={state.sort}
              order={state.order}
              onSort={onSort}
              rowId={(f) => `${f.table}.${f.index}`}
              caption="Index review findings"
              testId="review-table"
            />
          )}
        </div>
      )}
    </section>
  );
}
