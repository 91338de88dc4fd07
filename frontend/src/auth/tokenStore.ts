// The API token lives in localStorage so a reload keeps the session. This small
// external store lets React (useSyncExternalStore) and non-React code (the API client,
// the query cache's 401 handler) share it.

export const TOKEN_KEY = 'quanta.token';

export interface AuthState {
  readonly token: string | null;
  /** Why the user was signed out, shown above the sign-in form. */
  readonly notice: string | null;
}

// Function-typed properties, not methods: they are passed around unbound
// (useSyncExternalStore(store.subscribe, store.getSnapshot)).
export interface TokenStore {
  readonly getSnapshot: () => AuthState;
  readonly subscribe: (listener: () => void) => () => void;
  readonly signIn: (token: string) => void;
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
  let state: AuthState = { token: readToken(storage), notice: null };
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
      update({ token: trimmed, notice: null });
    },
    signOut(notice) {
      try {
        storage?.removeItem(TOKEN_KEY);
      } catch {
        // Nothing persisted, nothing to remove.
      }
      update({ token: null, notice: notice ?? null });
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
