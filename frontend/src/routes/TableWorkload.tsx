import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage } from '../api/errors';
import { indexReviewOptions, tableWorkloadOptions } from '../api/statistics';
import type { TableWorkloadRow } from '../api/types';
import { SqlText } from '../components/Sql/SqlText';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { WorkloadHeader } from '../components/Workload/WorkloadHeader';
import { useUrlState } from '../hooks/useUrlState';
import {
  formatBytes,
  formatCount,
  formatInstant,
  formatLoad,
  formatRate,
  formatShare,
} from '../lib/format';
import {
  FINDING_LABELS,
  type IndexView,
  type WorkloadState,
  coverageLine,
  parseWorkload,
  queryHref,
  rangeParams,
  reviewedTable,
  serializeWorkload,
  tableIndexes,
} from '../lib/workload';

const parse = (search: string) => parseWorkload(search, [], '');
const serialize = (state: WorkloadState) => serializeWorkload(state, '');

function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : formatCount(value);
}

/** One table: its reads and writes over the range, its indexes with their reads and the
 * review's findings, and the query classes that name it. */
export function TableWorkload() {
  const { instanceId = '', table = '' } = useParams();
  const id = Number(instanceId);
  const valid = Number.isInteger(id) && id > 0 && table.includes('.');
  const [state, setState] = useUrlState(parse, serialize);
  const range = useMemo(() => rangeParams(state.range), [state.range]);
  const workload = useQuery({ ...tableWorkloadOptions(id, range), enabled: valid });
  const review = useQuery({ ...indexReviewOptions(id, range), enabled: valid });
  const row = workload.data?.tables.find((t) => t.table.toLowerCase() === table.toLowerCase());
  const indexes = useMemo(
    () => (review.data ? tableIndexes(review.data, table) : []),
    [review.data, table],
  );

  if (!valid) return <EmptyState title="There is no table at this address." testId="table-empty" />;
  const instance = workload.data?.instance;
  const reviewed = review.data ? reviewedTable(review.data, table) : null;
  return (
    <section className="workload" aria-labelledby="workload-title">
      <WorkloadHeader
        instanceId={id}
        instance={instance}
        page={null}
        title={table}
        range={state.range}
        onRange={(value) => setState({ range: value })}
        resolved={workload.data && { from: workload.data.from, to: workload.data.to }}
      />
      <p className="breadcrumb">
        <Link to={`/instances/${id}/tables${serialize(state) ? `?${serialize(state)}` : ''}`}>
          ← All tables
        </Link>
      </p>
      {workload.status === 'pending' && <LoadingState label="Loading the table…" />}
      {workload.status === 'error' && (
        <ErrorState
          title="Could not load the table's figures"
          message={errorMessage(workload.error)}
          onRetry={() => void workload.refetch()}
        />
      )}
      {workload.data && (
        <div
          data-settled={workload.isFetching || review.isFetching ? undefined : serialize(state)}
          data-testid="table-region"
        >
          <p className="muted">{coverageLine(workload.data.coverage) ?? 'No statistics yet.'}</p>
          {row ? (
            <TableFigures row={row} />
          ) : (
            <EmptyState
              title="The statistics saw no reads or writes of this table in this range."
              testId="table-idle"
            />
          )}
          <h2>Indexes</h2>
          {reviewed && (
            <p className="muted" data-testid="table-unused-check">
              {reviewed.unused_checked
                ? `Unused indexes checked over the statistics since ${formatInstant(reviewed.statistics_since ?? '')} UTC.`
                : 'Not observed long enough yet to call an index unused.'}
            </p>
          )}
          {review.status === 'pending' && <LoadingState label="Loading the indexes…" />}
          {review.status === 'error' && (
            <ErrorState
              title="Could not load the index review"
              message={errorMessage(review.error)}
            />
          )}
          {review.data &&
            (indexes.length === 0 ? (
              <EmptyState title="No snapshot of this table yet." testId="table-no-snapshot">
                <p>Its indexes are read from the server once the instance has a DSN.</p>
              </EmptyState>
            ) : (
              <IndexList indexes={indexes} />
            ))}
          <h2>Queries</h2>
          {row && row.queries.length > 0 && instance ? (
            <table className="data-table" data-testid="table-queries">
              <thead>
                <tr>
                  <th scope="col">Query</th>
                  <th scope="col" className="num">
                    Calls
                  </th>
                  <th scope="col" className="num">
                    Load
                  </th>
                  <th scope="col" className="num">
                    Share of load
                  </th>
                </tr>
              </thead>
              <tbody>
                {row.queries.map((q) => (
                  <tr key={q.query_id}>
                    <td>
                      <Link to={queryHref(q.query_id, instance, q.schema)}>
                        <SqlText sql={q.fingerprint} />
                      </Link>
                    </td>
                    <td className="num">{formatCount(q.calls)}</td>
                    <td className="num">{formatLoad(q.load)}</td>
                    <td className="num">{formatShare(q.share)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">No query class in this range names this table.</p>
          )}
        </div>
      )}
    </section>
  );
}

function TableFigures({ row }: { row: TableWorkloadRow }) {
  const facts: [string, string][] = [
    ['Rows read', count(row.rows_read)],
    ['Read per second', formatRate(row.rows_read_per_s)],
    ['Share of rows read', formatShare(row.read_share)],
    ['Rows changed', count(row.rows_changed)],
    ['Changed per second', formatRate(row.rows_changed_per_s)],
    ['Share of rows changed', formatShare(row.changed_share)],
  ];
  if (row.rows_inserted !== null) {
    facts.push([
      'Inserted / updated / deleted',
      `${count(row.rows_inserted)} / ${count(row.rows_updated)} / ${count(row.rows_deleted)}`,
    ]);
  }
  if (row.rows_changed_x_indexes !== null) {
    facts.push(['Index entries changed', count(row.rows_changed_x_indexes)]);
  }
  facts.push(['Rows (estimate)', count(row.row_estimate)]);
  facts.push([
    'Data / indexes',
    row.data_bytes === null
      ? '–'
      : `${formatBytes(row.data_bytes)} / ${formatBytes(row.index_bytes)}`,
  ]);
  return (
    <dl className="table-info" data-testid="table-figures">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function IndexList({ indexes }: { indexes: IndexView[] }) {
  return (
    <table className="data-table" data-testid="table-indexes">
      <thead>
        <tr>
          <th scope="col">Index</th>
          <th scope="col">Columns</th>
          <th scope="col" className="num">
            Reads in range
          </th>
          <th scope="col">Last read</th>
          <th scope="col">Review</th>
        </tr>
      </thead>
      <tbody>
        {indexes.map((index) => (
          <tr key={index.name} data-testid="table-index">
            <td>
              <code>{index.label}</code>
              {index.unique && <span className="muted"> unique</span>}
            </td>
            <td>{index.columns}</td>
            <td className="num">{count(index.reads)}</td>
            <td>{index.lastReadAt ? `${formatInstant(index.lastReadAt)} UTC` : '–'}</td>
            <td>
              {index.finding ? (
                <div className="finding" data-testid="table-finding">
                  <strong>{FINDING_LABELS[index.finding.kind]}</strong>: {index.finding.reason}
                  <div>
                    <SqlText sql={`${index.finding.ddl};`} />
                  </div>
                </div>
              ) : (
                <span className="muted">–</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
