import { useEffect, useState } from 'react';
import { fetchMe } from '../api/client';
import { CSRF_COOKIE, readCookie, tokenStore } from '../auth/tokenStore';

/**
 * On load, without a stored token, restores a cookie session through /api/v1/me. Only
 * asked when the quanta_csrf cookie says there may be one: a signed-out visitor's 401
 * would otherwise show up as an error in the browser's console. True while it checks.
 */
export function useRestoreSession(): boolean {
  const [checking, setChecking] = useState(
    () => tokenStore.getSnapshot().token === null && readCookie(CSRF_COOKIE) !== null,
  );
  useEffect(() => {
    if (!checking) return;
    const controller = new AbortController();
    fetchMe({ signal: controller.signal })
      .then((me) => tokenStore.signInSession(me.csrf_token ?? readCookie(CSRF_COOKIE)))
      .catch(() => {
        // An ended session just means signing in again; nothing to say about it.
      })
      .finally(() => {
        if (!controller.signal.aborted) setChecking(false);
      });
    return () => controller.abort();
  }, [checking]);
  return checking;
}
