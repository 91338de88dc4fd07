import type { UseQueryResult } from '@tanstack/react-query';
import { errorMessage } from '../../api/errors';
import type { TopQueries } from '../../api/types';
import { type AgentsAtAGlance, formatAgo } from '../../lib/agents';
import { EmptyState } from '../Status/EmptyState';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { TopQueriesTable, type TopQueriesTableProps } from './TopQueriesTable';
import { toRowViews } from './topQueriesView';

/** The top-queries table, or its loading, error or empty state. */
export function TopQueriesPanel({
  query,
  offset,
  filtered = false,
  agents,
  ...table
}: {
  query: Pick<UseQueryResult<TopQueries>, 'status' | 'data' | 'error' | 'refetch'>;
  offset: number;
  /** A search or filter is set: the empty state says so instead of explaining ingest. */
  filtered?: boolean;
  /** The agents' state, for the empty state (undefined: not known). */
  agents?: AgentsAtAGlance;
} & Omit<TopQueriesTableProps, 'data' | 'offset'>) {
  if (query.status === 'pending') {
    return <LoadingState label="Loading top queries…" testId="queries-loading" />;
  }
  if (query.status === 'error') {
    return (
      <ErrorState
        title="Could not load the top queries"
        message={errorMessage(query.error)}
        onRetry={() => void query.refetch()}
        testId="queries-error"
      />
    );
  }
  if (query.data === undefined || toRowViews(query.data).length === 0) {
    if (filtered || offset > 0) {
      return (
        <EmptyState title="No queries match." testId="queries-empty">
          <p>Clear the search or a filter, or pick a longer time range.</p>
        </EmptyState>
      );
    }
    return (
      <EmptyState title="No queries in this time range." testId="queries-empty">
        <NoQueriesYet agents={agents} />
      </EmptyState>
    );
  }
  return <TopQueriesTable data={query.data} offset={offset} {...table} />;
}

/** Why the range is empty: an agent connected (wait, or a longer range), one that
 * stopped, or none yet (how to start one). */
function NoQueriesYet({ agents }: { agents: AgentsAtAGlance | undefined }) {
  if (agents && agents.connected.length > 0) {
    const last =
      agents.lastBatchSeconds === null
        ? 'no batch of data yet'
        : `last batch ${formatAgo(agents.lastBatchSeconds)}`;
    return (
      <p data-testid="agent-connected">
        An agent is connected ({agents.connected.join(', ')}; {last}): its batches are counted
        within a minute of arriving. Pick a longer time range for older queries; Settings → Agents
        shows each source&apos;s state.
      </p>
    );
  }
  if (agents && agents.stopped.length > 0) {
    return (
      <p data-testid="agent-stopped">
        The agent stopped reporting: {agents.stopped.join(', ')} (Settings → Agents says since when
        and its last error). Start <code>quanta-agent run</code> again on that host.
      </p>
    );
  }
  return (
    <p>
      Import a slow log with <code>quanta-agent import /path/to/slow.log</code>, or run{' '}
      <code>quanta-agent</code> next to your MySQL or MariaDB server to ship its slow log and
      performance_schema digests.
    </p>
  );
}
