// What the agents report per instance and source (last batch, lag, version, spool, errors).
import { queryOptions } from '@tanstack/react-query';
import { fetchAgentSources } from './client';

export const agentKeys = {
  all: () => ['agents'] as const,
};

/** The agents' health; refreshed every half minute (their reports come every minute). */
export function agentSourcesOptions() {
  return queryOptions({
    queryKey: agentKeys.all(),
    queryFn: ({ signal }) => fetchAgentSources(signal),
    refetchInterval: 30_000,
  });
}
