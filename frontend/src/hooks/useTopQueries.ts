import { useQuery } from '@tanstack/react-query';
import { topQueriesQueryOptions } from '../api/queries';
import type { TopQueriesParams } from '../api/types';

export function useTopQueries(params: TopQueriesParams) {
  return useQuery(topQueriesQueryOptions(params));
}
