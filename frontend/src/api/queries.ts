// TanStack Query option factories: one place for every key and fetcher, so hooks,
// prefetching and cache updates agree on them.
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import {
  fetchAnnotationImpact,
  fetchAnnotations,
  fetchAudit,
  fetchSignInOptions,
  fetchChannels,
  fetchDeliveries,
  fetchTokens,
  fetchUsers,
  fetchExplain,
  fetchProfile,
  fetchFilters,
  fetchIndexPlan,
  fetchInstances,
  fetchMe,
  fetchQueryDetail,
  fetchQueryExamples,
  fetchSuggestions,
  fetchTableSnapshot,
  fetchTopQueries,
} from './client';
import { isWaiting } from '../lib/runs';
import type { AnnotationsParams, ScopeQuery, TopQueriesParams } from './types';

export const queryKeys = {
  me: () => ['auth', 'me'] as const,
  signInOptions: () => ['auth', 'options'] as const,
  topQueries: (params: TopQueriesParams) => ['queries', 'top', params] as const,
  filters: (params: ScopeQuery) => ['queries', 'filters', params] as const,
  detail: (queryId: string, params: ScopeQuery) => ['queries', 'detail', queryId, params] as const,
  examples: (queryId: string, params: ScopeQuery) =>
    ['queries', 'examples', queryId, params] as const,
  collected: (kind: string, queryId: string, instance: string) =>
    ['queries', kind, queryId, instance] as const,
  annotations: (params: AnnotationsParams) => ['annotations', 'list', params] as const,
  allAnnotations: () => ['annotations'] as const,
  impact: (id: number, window: string) => ['annotations', 'impact', id, window] as const,
  instances: () => ['instances'] as const,
  channels: () => ['channels'] as const,
  deliveries: (channelId: number) => ['channels', channelId, 'deliveries'] as const,
  tokens: () => ['tokens'] as const,
  users: () => ['users'] as const,
  audit: () => ['audit'] as const,
  table: (instanceId: number, table: string) => ['instances', instanceId, 'table', table] as const,
  indexPlan: (instanceId: number) => ['instances', instanceId, 'index-plan'] as const,
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
    // Paging, sorting and filtering keep the old rows on screen until the new ones come.
    placeholderData: keepPreviousData,
  });
}

export function filtersQueryOptions(params: ScopeQuery) {
  return queryOptions({
    queryKey: queryKeys.filters(params),
    queryFn: ({ signal }) => fetchFilters(params, signal),
    placeholderData: keepPreviousData,
  });
}

export function queryDetailOptions(queryId: string, params: ScopeQuery) {
  return queryOptions({
    queryKey: queryKeys.detail(queryId, params),
    queryFn: ({ signal }) => fetchQueryDetail(queryId, params, signal),
  });
}

export function examplesOptions(queryId: string, params: ScopeQuery) {
  const { from, to, instance } = params;
  return queryOptions({
    queryKey: queryKeys.examples(queryId, { from, to, instance }),
    queryFn: ({ signal }) => fetchQueryExamples(queryId, { from, to, instance }, signal),
  });
}

// While a requested run waits for the worker, poll until it is done.
const POLL_MS = 3_000;

export function explainOptions(queryId: string, instance: string) {
  return queryOptions({
    queryKey: queryKeys.collected('explain', queryId, instance),
    queryFn: ({ signal }) => fetchExplain(queryId, instance, signal),
    refetchInterval: (query) => (isWaiting(query.state.data) ? POLL_MS : false),
  });
}

export function profileOptions(queryId: string, instance: string) {
  return queryOptions({
    queryKey: queryKeys.collected('profile', queryId, instance),
    queryFn: ({ signal }) => fetchProfile(queryId, instance, signal),
    refetchInterval: (query) => (isWaiting(query.state.data) ? POLL_MS : false),
  });
}

export function suggestionsOptions(queryId: string, instance: string) {
  return queryOptions({
    queryKey: queryKeys.collected('suggestions', queryId, instance),
    queryFn: ({ signal }) => fetchSuggestions(queryId, instance, signal),
  });
}

export function annotationsOptions(params: AnnotationsParams, enabled = true) {
  return queryOptions({
    queryKey: queryKeys.annotations(params),
    queryFn: ({ signal }) => fetchAnnotations(params, signal),
    enabled,
  });
}

export function impactOptions(id: number, window: string) {
  return queryOptions({
    queryKey: queryKeys.impact(id, window),
    queryFn: ({ signal }) => fetchAnnotationImpact(id, window, signal),
  });
}

export function instancesOptions() {
  return queryOptions({
    queryKey: queryKeys.instances(),
    queryFn: ({ signal }) => fetchInstances(signal),
    staleTime: 5 * 60_000,
  });
}

export function tableSnapshotOptions(instanceId: number, table: string) {
  return queryOptions({
    queryKey: queryKeys.table(instanceId, table),
    queryFn: ({ signal }) => fetchTableSnapshot(instanceId, table, signal),
  });
}

/** An instance's workload index plan; while a requested run is awaited, polled. */
export function indexPlanOptions(instanceId: number, awaitingRun = false) {
  return queryOptions({
    queryKey: queryKeys.indexPlan(instanceId),
    queryFn: ({ signal }) => fetchIndexPlan(instanceId, signal),
    refetchInterval: awaitingRun ? 3_000 : false,
  });
}

export function channelsOptions() {
  return queryOptions({
    queryKey: queryKeys.channels(),
    queryFn: ({ signal }) => fetchChannels(signal),
  });
}

export function deliveriesOptions(channelId: number) {
  return queryOptions({
    queryKey: queryKeys.deliveries(channelId),
    queryFn: ({ signal }) => fetchDeliveries(channelId, signal),
  });
}

export function tokensOptions() {
  return queryOptions({
    queryKey: queryKeys.tokens(),
    queryFn: ({ signal }) => fetchTokens(signal),
  });
}

export function usersOptions() {
  return queryOptions({
    queryKey: queryKeys.users(),
    queryFn: ({ signal }) => fetchUsers(signal),
  });
}

export function signInOptions() {
  return queryOptions({
    queryKey: queryKeys.signInOptions(),
    queryFn: ({ signal }) => fetchSignInOptions(signal),
  });
}

export function auditOptions() {
  return queryOptions({
    queryKey: queryKeys.audit(),
    queryFn: ({ signal }) => fetchAudit(signal),
  });
}
