// Index suggestions for a query class on one instance (requested with
// useRequestCollection from collected.ts), and dismissing or restoring one.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { fetchSuggestions, updateSuggestion } from './client';
import { collectedKeys } from './collected';
import type { SuggestionPatch } from './types';

export function suggestionsOptions(queryId: string, instance: string) {
  return queryOptions({
    queryKey: collectedKeys.run('suggestions', queryId, instance),
    queryFn: ({ signal }) => fetchSuggestions(queryId, instance, signal),
  });
}

/** Sets a suggestion's status (dismissed, new) and refetches the query's suggestions. */
export function useUpdateSuggestion(queryId: string, instance: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, status }: { id: number; status: SuggestionPatch['status'] }) =>
      updateSuggestion(id, status),
    onSuccess: () =>
      queryClient.invalidateQueries({
        queryKey: collectedKeys.run('suggestions', queryId, instance),
      }),
  });
}
