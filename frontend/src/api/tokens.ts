// API tokens: listing, creating (the secret is in the answer, once) and revoking.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { createToken, fetchTokens, revokeToken } from './client';
import type { TokenCreate, TokenCreated } from './types';

export const tokenKeys = {
  all: () => ['tokens'] as const,
};

export function tokensOptions() {
  return queryOptions({
    queryKey: tokenKeys.all(),
    queryFn: ({ signal }) => fetchTokens(signal),
  });
}

/** Creates a token; `onCreated` gets its secret before the list is refetched. */
export function useCreateToken(onCreated?: (created: TokenCreated) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: TokenCreate) => createToken(body),
    onSuccess: async (created) => {
      onCreated?.(created);
      await queryClient.invalidateQueries({ queryKey: tokenKeys.all() });
    },
  });
}

export function useRevokeToken(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => revokeToken(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.all() }),
  });
}
