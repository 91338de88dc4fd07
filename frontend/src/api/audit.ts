// The audit log of admin actions. Every successful write may add to it, so the app's
// QueryClient (queryClient.ts) refetches it after each mutation.
import { queryOptions } from '@tanstack/react-query';
import { fetchAudit } from './client';

export const auditKeys = {
  all: () => ['audit'] as const,
};

export function auditOptions() {
  return queryOptions({
    queryKey: auditKeys.all(),
    queryFn: ({ signal }) => fetchAudit(signal),
  });
}
