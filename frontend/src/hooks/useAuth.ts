import { useQueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { tokenStore } from '../auth/tokenStore';

/** The signed-in token (null when signed out), why the last session ended, and sign-out. */
export function useAuth() {
  const queryClient = useQueryClient();
  const { token, notice } = useSyncExternalStore(tokenStore.subscribe, tokenStore.getSnapshot);

  function signOut() {
    tokenStore.signOut();
    queryClient.clear();
  }

  return { token, notice, signOut };
}
