// The API token lives in localStorage so a reload keeps the session. This small
// external store lets React (useSyncExternalStore) and non-React code (the API client,
// the query cache's 401 handler) share it.

export const TOKEN_KEY = 'quanta.token';

export interface AuthState {
  /** An API token sent as a bearer (signed in with a token). */
  readonly token: string | null;
  /** Signed in with name and password: the session lives in an HttpOnly cookie. */
  readonly session: boolean;
  /** The session's CSRF token, sent as X-CSRF-Token with every write. */
  readonly csrf: string | null;
  /** Why the user was signed out, shown above the sign-in form. */
  readonly notice: string | null;
}

// Function-typed properties, not methods: they are passed around unbound
// (useSyncExternalStore(store.subscribe, store.getSnapshot)).
export interface TokenStore {
  readonly getSnapshot: () => AuthState;
  readonly subscribe: (listener: () => void) => () => void;
  readonly signIn: (token: string) => void;
  /** A cookie session started (password sign-in, or restored from the cookie on load). */
  readonly signInSession: (csrf: string | null) => void;
  readonly signOut: (notice?: string) => void;
}

type KeyValueStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function readToken(storage: KeyValueStorage | undefined): string | null {
  try {
    const token = storage?.getItem(TOKEN_KEY)?.trim();
    return token ? token : null;
  } catch {
    // Storage can be disabled (privacy settings); the session then lasts one page load.
    return null;
  }
}

export function createTokenStore(storage: KeyValueStorage | undefined): TokenStore {
  let state: AuthState = { token: readToken(storage), session: false, csrf: null, notice: null };
  const listeners = new Set<() => void>();

  function update(next: AuthState): void {
    state = next;
    for (const listener of listeners) listener();
  }

  return {
    getSnapshot: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signIn(token) {
      const trimmed = token.trim();
      try {
        storage?.setItem(TOKEN_KEY, trimmed);
      } catch {
        // Keep the in-memory session even when it cannot be persisted.
      }
      update({ token: trimmed, session: false, csrf: null, notice: null });
    },
    signInSession(csrf) {
      update({ token: null, session: true, csrf, notice: null });
    },
    signOut(notice) {
      try {
        storage?.removeItem(TOKEN_KEY);
      } catch {
        // Nothing persisted, nothing to remove.
      }
      update({ token: null, session: false, csrf: null, notice: notice ?? null });
    },
  };
}

function browserStorage(): KeyValueStorage | undefined {
  try {
    return typeof window === 'undefined' ? undefined : window.localStorage;
  } catch {
    return undefined;
  }
}

export const tokenStore = createTokenStore(browserStorage());

/** The value of a (non-HttpOnly) cookie, e.g. quanta_csrf, or null. */
export function readCookie(name: string): string | null {
  if (typeof document === 'undefined') return null;
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return null;
}

export const CSRF_COOKIE = 'quanta_csrf';
