import { useMutation, useQueryClient } from '@tanstack/react-query';
import { fetchMe, login } from '../api/client';
import { queryKeys } from '../api/queries';
import { tokenStore } from '../auth/tokenStore';

/** Checks a pasted token against /api/v1/me and keeps it only if the API accepts it. */
export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    meta: { signIn: true },
    mutationFn: (token: string) => fetchMe({ token }),
    onSuccess(me, token) {
      queryClient.setQueryData(queryKeys.me(), me);
      tokenStore.signIn(token);
    },
  });
}

/** Signs in with a name and password: the server sets the session cookie. */
export function usePasswordSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    meta: { signIn: true },
    mutationFn: ({ name, password }: { name: string; password: string }) => login(name, password),
    onSuccess(result) {
      queryClient.removeQueries({ queryKey: queryKeys.me() });
      tokenStore.signInSession(result.csrf_token);
    },
  });
}
