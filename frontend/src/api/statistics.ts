// The workload of an instance by table and by account, and its index review: read-only
// views of the statistics the agent collects, keyed under the instance.
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { fetchIndexReview, fetchTableWorkload, fetchUserWorkload } from './client';
import type { WorkloadRange } from './types';

export const statisticsKeys = {
  tables: (instanceId: number, range: WorkloadRange) =>
    ['instances', instanceId, 'workload', 'tables', range] as const,
  users: (instanceId: number, range: WorkloadRange) =>
    ['instances', instanceId, 'workload', 'users', range] as const,
  review: (instanceId: number, range: WorkloadRange) =>
    ['instances', instanceId, 'index-review', range] as const,
};

export function tableWorkloadOptions(instanceId: number, range: WorkloadRange) {
  return queryOptions({
    queryKey: statisticsKeys.tables(instanceId, range),
    queryFn: ({ signal }) => fetchTableWorkload(instanceId, range, signal),
    placeholderData: keepPreviousData,
  });
}

export function userWorkloadOptions(instanceId: number, range: WorkloadRange) {
  return queryOptions({
    queryKey: statisticsKeys.users(instanceId, range),
    queryFn: ({ signal }) => fetchUserWorkload(instanceId, range, signal),
    placeholderData: keepPreviousData,
  });
}

export function indexReviewOptions(instanceId: number, range: WorkloadRange) {
  return queryOptions({
    queryKey: statisticsKeys.review(instanceId, range),
    queryFn: ({ signal }) => fetchIndexReview(instanceId, range, signal),
    placeholderData: keepPreviousData,
  });
}
