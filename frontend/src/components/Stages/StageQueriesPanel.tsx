import type { UseQueryResult } from '@tanstack/react-query';
import { Link } from 'react-router';
import { errorMessage } from '../../api/errors';
import type { StageQueries } from '../../api/types';
import { formatDuration } from '../../lib/format';
import { EmptyState } from '../Status/EmptyState';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';

/** Queries ranked by the share of their sampled time spent in one stage (production
 * profiles), each linking to its detail. */
export function StageQueriesPanel({
  query,
  detailHref,
}: {
  query: UseQueryResult<StageQueries>;
  detailHref: (queryId: string) => string;
}) {
  if (query.status === 'pending') return <LoadingState label="Loading the stage ranking…" />;
  if (query.status === 'error') {
    return <ErrorState title="Could not rank by stage" message={errorMessage(query.error)} />;
  }
  const { rows, stage } = query.data;
  if (rows.length === 0) {
    return (
      <EmptyState
        title={`No sampled query spends that much in “${stage ?? ''}”.`}
        testId="stage-empty"
      >
        <p>Lower the minimum share, or pick a longer range.</p>
      </EmptyState>
    );
  }
  return (
    <table className="data-table" data-testid="stage-queries">
      <thead>
        <tr>
          <th scope="col">Query</th>
          <th scope="col" className="num">
            Share in stage
          </th>
          <th scope="col" className="num">
            Time in stage
          </th>
          <th scope="col" className="num">
            Per execution
          </th>
          <th scope="col" className="num">
            Sampled
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.query_id}>
            <td>
              <Link to={detailHref(row.query_id)} className="fingerprint">
                {row.fingerprint ?? row.query_id}
              </Link>
            </td>
            <td className="num">{(row.share * 100).toFixed(1)}%</td>
            <td className="num">{formatDuration(row.time_s)}</td>
            <td className="num">{formatDuration(row.per_execution_s)}</td>
            <td className="num" title="executions whose stages were sampled, of those counted">
              {row.executions_sampled.toLocaleString('en-US')} of{' '}
              {row.executions_total.toLocaleString('en-US')}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
