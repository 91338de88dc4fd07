// Query classes (a normalised SQL statement, its fingerprint and digest): the top list,
// the filters beside it, one class's detail and its example statements. Read-only here;
// what a worker collects about a class is in diagnostics.ts and advice.ts.
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import {
  fetchClassCaps,
  fetchFilters,
  fetchQueryDetail,
  fetchQueryExamples,
  fetchTopQueries,
} from './client';
import type { ScopeQuery, TopQueriesParams } from './types';

export const queryClassKeys = {
  top: (params: TopQueriesParams) => ['queries', 'top', params] as const,
  filters: (params: ScopeQuery) => ['queries', 'filters', params] as const,
  classCaps: () => ['queries', 'class-caps'] as const,
  detail: (queryId: string, params: ScopeQuery) => ['queries', 'detail', queryId, params] as const,
  examples: (queryId: string, params: ScopeQuery) =>
    ['queries', 'examples', queryId, params] as const,
};

export function topQueriesOptions(params: TopQueriesParams) {
  return queryOptions({
    queryKey: queryClassKeys.top(params),
    queryFn: ({ signal }) => fetchTopQueries(params, signal),
    // Paging, sorting and filtering keep the old rows on screen until the new ones come.
    placeholderData: keepPreviousData,
  });
}

export function filtersOptions(params: ScopeQuery) {
  return queryOptions({
    queryKey: queryClassKeys.filters(params),
    queryFn: ({ signal }) => fetchFilters(params, signal),
    placeholderData: keepPreviousData,
  });
}

export function queryDetailOptions(queryId: string, params: ScopeQuery) {
  return queryOptions({
    queryKey: queryClassKeys.detail(queryId, params),
    queryFn: ({ signal }) => fetchQueryDetail(queryId, params, signal),
  });
}

export function queryExamplesOptions(queryId: string, params: ScopeQuery) {
  const { from, to, instance } = params;
  return queryOptions({
    queryKey: queryClassKeys.examples(queryId, { from, to, instance }),
    queryFn: ({ signal }) => fetchQueryExamples(queryId, { from, to, instance }, signal),
  });
}

/** Each instance against the query-class caps (the overview warns when one folds). */
export function classCapsOptions() {
  return queryOptions({
    queryKey: queryClassKeys.classCaps(),
    queryFn: ({ signal }) => fetchClassCaps(signal),
  });
}
