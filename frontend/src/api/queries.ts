// TanStack Query option factories: one place for every key and fetcher, so hooks,
// prefetching and cache updates agree on them.
import { queryOptions } from '@tanstack/react-query';
import { fetchMe, fetchTopQueries } from './client';
import type { TopQueriesParams } from './types';

export const queryKeys = {
  me: () => ['auth', 'me'] as const,
  topQueries: (params: TopQueriesParams) => ['queries', 'top', params] as const,
};

export function meQueryOptions() {
  return queryOptions({
    queryKey: queryKeys.me(),
    queryFn: ({ signal }) => fetchMe({ signal }),
    staleTime: 5 * 60_000,
  });
}

export function topQueriesQueryOptions(params: TopQueriesParams) {
  return queryOptions({
    queryKey: queryKeys.topQueries(params),
    queryFn: ({ signal }) => fetchTopQueries(params, signal),
  });
}
