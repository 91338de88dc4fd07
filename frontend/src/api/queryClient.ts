import { QueryCache, QueryClient } from '@tanstack/react-query';
import { errorMessage, isUnauthorized, shouldRetry } from './errors';

/**
 * The app's QueryClient. Any query answered 401 means the stored token is no longer
 * good: `onUnauthorized` signs the user out, and the cache is dropped with it.
 */
export function createQueryClient(onUnauthorized: (message: string) => void): QueryClient {
  const queryClient: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      onError(error) {
        if (!isUnauthorized(error)) return;
        onUnauthorized(errorMessage(error));
        // Deferred: clearing the cache from inside its own error callback is re-entrant.
        queueMicrotask(() => queryClient.clear());
      },
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
