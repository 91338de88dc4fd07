import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { auditKeys } from './audit';
import { errorMessage, isUnauthorized, shouldRetry } from './errors';

/**
 * The app's QueryClient. Any query or write answered 401 means the stored token or the
 * session is no longer good: `onUnauthorized` signs the user out, and the cache is dropped
 * with it. Every successful write may have added to the audit log: it is refetched.
 */
export function createQueryClient(onUnauthorized: (message: string) => void): QueryClient {
  function onError(error: unknown) {
    if (!isUnauthorized(error)) return;
    onUnauthorized(errorMessage(error));
    // Deferred: clearing the cache from inside its own error callback is re-entrant.
    queueMicrotask(() => queryClient.clear());
  }
  const queryClient: QueryClient = new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({
      // A sign-in attempt's 401 is a wrong password, not an ended session.
      onError: (error, _variables, _context, mutation) => {
        if (mutation.meta?.signIn !== true) onError(error);
      },
      onSuccess: () => queryClient.invalidateQueries({ queryKey: auditKeys.all() }),
    }),
    defaultOptions: {
      queries: {
        retry: shouldRetry,
        refetchOnWindowFocus: false,
        staleTime: 30_000,
      },
    },
  });
  return queryClient;
}
