import { useMemo } from 'react';
import type { TopQueriesParams } from '../api/types';
import { TopQueriesPanel } from '../components/TopQueries/TopQueriesPanel';
import { useTimeRange } from '../hooks/useTimeRange';
import { useTopQueries } from '../hooks/useTopQueries';
import { describeRange } from '../lib/timeRange';

const PAGE_SIZE = 50;

/** Overview: the queries that put the most load on the server in the time range. */
export function Overview() {
  const range = useTimeRange();
  const params = useMemo<TopQueriesParams>(
    () => ({ ...range, limit: PAGE_SIZE, offset: 0 }),
    [range],
  );
  const query = useTopQueries(params);

  return (
    <section className="overview" aria-labelledby="overview-title">
      <div className="page-header">
        <div>
          <h1 id="overview-title">Top queries</h1>
          <p className="range" data-testid="time-range">
            {describeRange(range, query.data)}
          </p>
        </div>
        <button
          type="button"
          className="button"
          onClick={() => void query.refetch()}
          disabled={query.isFetching}
        >
          {query.isFetching && !query.isPending ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <TopQueriesPanel query={query} offset={params.offset ?? 0} />
    </section>
  );
}
