// Who is signed in and how one can sign in: option factories and the sign-in mutations.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { tokenStore } from '../auth/tokenStore';
import { fetchMe, fetchSignInOptions, login } from './client';

export const authKeys = {
  me: () => ['auth', 'me'] as const,
  signInMethods: () => ['auth', 'options'] as const,
};

export function meOptions() {
  return queryOptions({
    queryKey: authKeys.me(),
    queryFn: ({ signal }) => fetchMe({ signal }),
    staleTime: 5 * 60_000,
  });
}

/** GET /api/v1/auth/options: the ways one can sign in now. */
export function signInMethodsOptions() {
  return queryOptions({
    queryKey: authKeys.signInMethods(),
    queryFn: ({ signal }) => fetchSignInOptions(signal),
  });
}

/** Checks a pasted token against /api/v1/me and keeps it only if the API accepts it. */
export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    meta: { signIn: true },
    mutationFn: (token: string) => fetchMe({ token }),
    onSuccess(me, token) {
      queryClient.setQueryData(authKeys.me(), me);
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
      queryClient.removeQueries({ queryKey: authKeys.me() });
      tokenStore.signInSession(result.csrf_token);
    },
  });
}
