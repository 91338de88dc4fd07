// Production stage profiles: a query's stages from performance_schema's history on one
// instance, and the queries ranked by the share of their time in one stage.
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { fetchQueryStages, fetchStageQueries } from './client';
import type { StageQueriesParams } from './types';

export interface StageRange {
  from?: string;
  to?: string;
}

export const stageKeys = {
  query: (queryId: string, instance: string, range: StageRange) =>
    ['queries', queryId, 'stages', instance, range] as const,
  ranking: (params: StageQueriesParams) => ['stages', 'queries', params] as const,
};

export function queryStagesOptions(queryId: string, instance: string, range: StageRange) {
  return queryOptions({
    queryKey: stageKeys.query(queryId, instance, range),
    queryFn: ({ signal }) => fetchQueryStages(queryId, instance, range, signal),
  });
}

export function stageQueriesOptions(params: StageQueriesParams) {
  return queryOptions({
    queryKey: stageKeys.ranking(params),
    queryFn: ({ signal }) => fetchStageQueries(params, signal),
    placeholderData: keepPreviousData,
  });
}
