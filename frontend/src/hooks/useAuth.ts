import { useQueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { logout } from '../api/client';
import { tokenStore } from '../auth/tokenStore';

/**
 * The signed-in state (a bearer token or a cookie session), why the last session ended,
 * and sign-out (which also ends the server's session when there is one).
 */
export function useAuth() {
  const queryClient = useQueryClient();
  const { token, session, notice } = useSyncExternalStore(
    tokenStore.subscribe,
    tokenStore.getSnapshot,
  );

  async function signOut() {
    if (session) {
      // Signed out here either way: a failed logout only leaves a cookie that expires.
      await logout().catch(() => undefined);
    }
    tokenStore.signOut();
    queryClient.clear();
  }

  return { token, session, signedIn: token !== null || session, notice, signOut };
}
