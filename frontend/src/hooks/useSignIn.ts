import { useMutation, useQueryClient } from '@tanstack/react-query';
import { fetchMe } from '../api/client';
import { queryKeys } from '../api/queries';
import { tokenStore } from '../auth/tokenStore';

/** Checks a pasted token against /api/v1/me and keeps it only if the API accepts it. */
export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (token: string) => fetchMe({ token }),
    onSuccess(me, token) {
      queryClient.setQueryData(queryKeys.me(), me);
      tokenStore.signIn(token);
    },
  });
}
