// Regressions: queries that got dearer per call than their baseline, open and resolved.
import { queryOptions } from '@tanstack/react-query';
import { fetchRegressions } from './client';
import type { RegressionsParams } from './types';

export const regressionKeys = {
  list: (params: RegressionsParams) => ['regressions', 'list', params] as const,
};

/** Regressions by instance, status or query; refreshed every minute, as beat checks. */
export function regressionsOptions(params: RegressionsParams, enabled = true) {
  return queryOptions({
    queryKey: regressionKeys.list(params),
    queryFn: ({ signal }) => fetchRegressions(params, signal),
    refetchInterval: 60_000,
    enabled,
  });
}
