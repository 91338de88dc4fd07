// Monitored instances (registered by an admin or by an agent's first batch) and the
// table snapshots taken on them.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createInstance,
  deleteInstance,
  fetchInstances,
  fetchTableSnapshot,
  testInstanceConnection,
  updateInstance,
} from './client';
import type { InstanceCreate, InstanceUpdate } from './types';

export const instanceKeys = {
  // A prefix of every instance key: a change to an instance refetches its tables too.
  all: () => ['instances'] as const,
  table: (instanceId: number, table: string) => ['instances', instanceId, 'table', table] as const,
};

export function instancesOptions() {
  return queryOptions({
    queryKey: instanceKeys.all(),
    queryFn: ({ signal }) => fetchInstances(signal),
    staleTime: 5 * 60_000,
  });
}

export function tableSnapshotOptions(instanceId: number, table: string) {
  return queryOptions({
    queryKey: instanceKeys.table(instanceId, table),
    queryFn: ({ signal }) => fetchTableSnapshot(instanceId, table, signal),
  });
}

/** A new instance (no id) or the changes to one. */
export type InstanceSave =
  { id?: undefined; body: InstanceCreate } | { id: number; body: InstanceUpdate };

/** Adds or changes an instance; `onSaved` runs once the list has been refetched. */
export function useSaveInstance(onSaved?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (save: InstanceSave) =>
      save.id === undefined ? createInstance(save.body) : updateInstance(save.id, save.body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: instanceKeys.all() });
      onSaved?.();
    },
  });
}

export function useTestInstanceConnection(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => testInstanceConnection(id),
    // The test detects the server's flavor and version, which the list shows.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: instanceKeys.all() }),
  });
}

export function useDeleteInstance(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => deleteInstance(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: instanceKeys.all() }),
  });
}
