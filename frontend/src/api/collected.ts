// What a worker collects about a query class on one instance when asked (an EXPLAIN, a
// profile, index suggestions): the cache key they share and the request that asks for
// one. Their reads are in diagnostics.ts and advice.ts.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type Collected, requestCollection } from './client';

export const collectedKeys = {
  run: (kind: Collected, queryId: string, instance: string) =>
    ['queries', kind, queryId, instance] as const,
};

/** While a requested run waits for the worker, poll until it is done. */
export const COLLECTED_POLL_MS = 3_000;

/** Asks the server to collect again and refreshes the tab once it accepted. */
export function useRequestCollection(
  kind: Collected,
  queryId: string,
  instance: string,
  onRequested?: () => void,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => requestCollection(kind, queryId, instance),
    onSuccess: () => {
      onRequested?.();
      return queryClient.invalidateQueries({
        queryKey: collectedKeys.run(kind, queryId, instance),
      });
    },
  });
}
