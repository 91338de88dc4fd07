// An instance's workload index plan (one ALTER TABLE per table) and the request for a fresh one.
import { queryOptions, useMutation } from '@tanstack/react-query';
import { fetchIndexPlan, requestIndexPlan } from './client';

export const indexPlanKeys = {
  // Under the instance's key: a change to the instance refetches its plan too.
  plan: (instanceId: number) => ['instances', instanceId, 'index-plan'] as const,
};

/** An instance's workload index plan; while a requested run is awaited, polled. */
export function indexPlanOptions(instanceId: number, awaitingRun = false) {
  return queryOptions({
    queryKey: indexPlanKeys.plan(instanceId),
    queryFn: ({ signal }) => fetchIndexPlan(instanceId, signal),
    refetchInterval: awaitingRun ? 3_000 : false,
  });
}

/** Asks for the plan to be computed again; `onRequested` runs once the run is queued. */
export function useRequestIndexPlan(instanceId: number, onRequested: () => void) {
  return useMutation({
    mutationFn: () => requestIndexPlan(instanceId),
    onSuccess: onRequested,
  });
}
