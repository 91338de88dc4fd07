// A query class's EXPLAIN and profile on one instance (requested with
// useRequestCollection from collected.ts).
import { queryOptions } from '@tanstack/react-query';
import { isWaiting } from '../lib/runs';
import { fetchExplain, fetchProfile } from './client';
import { COLLECTED_POLL_MS, collectedKeys } from './collected';

export function explainOptions(queryId: string, instance: string) {
  return queryOptions({
    queryKey: collectedKeys.run('explain', queryId, instance),
    queryFn: ({ signal }) => fetchExplain(queryId, instance, signal),
    refetchInterval: (query) => (isWaiting(query.state.data) ? COLLECTED_POLL_MS : false),
  });
}

export function profileOptions(queryId: string, instance: string) {
  return queryOptions({
    queryKey: collectedKeys.run('profile', queryId, instance),
    queryFn: ({ signal }) => fetchProfile(queryId, instance, signal),
    refetchInterval: (query) => (isWaiting(query.state.data) ? COLLECTED_POLL_MS : false),
  });
}
