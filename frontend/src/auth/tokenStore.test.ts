import { describe, expect, it, vi } from 'vitest';
import { TOKEN_KEY, createTokenStore } from './tokenStore';

function memoryStorage(initial: Record<string, string> = {}) {
  const items = new Map(Object.entries(initial));
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
}

describe('createTokenStore', () => {
  it('starts from the stored token', () => {
    const store = createTokenStore(memoryStorage({ [TOKEN_KEY]: 'abc' }));
    expect(store.getSnapshot()).toEqual({ token: 'abc', session: false, csrf: null, notice: null });
  });

  it('treats a blank stored token as signed out', () => {
    const store = createTokenStore(memoryStorage({ [TOKEN_KEY]: '  ' }));
    expect(store.getSnapshot().token).toBeNull();
  });

  it('persists sign-in, trimmed, and notifies', () => {
    const storage = memoryStorage();
    const store = createTokenStore(storage);
    const listener = vi.fn();
    store.subscribe(listener);
    store.signIn('  tok  ');
    expect(storage.items.get(TOKEN_KEY)).toBe('tok');
    expect(store.getSnapshot()).toEqual({ token: 'tok', session: false, csrf: null, notice: null });
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('forgets the token on sign-out and keeps the reason', () => {
    const storage = memoryStorage({ [TOKEN_KEY]: 'tok' });
    const store = createTokenStore(storage);
    store.signOut('Token expired');
    expect(storage.items.has(TOKEN_KEY)).toBe(false);
    expect(store.getSnapshot()).toEqual({
      token: null,
      session: false,
      csrf: null,
      notice: 'Token expired',
    });
  });

  it('returns the same snapshot until something changes', () => {
    const store = createTokenStore(memoryStorage());
    expect(store.getSnapshot()).toBe(store.getSnapshot());
  });

  it('stops notifying after unsubscribe', () => {
    const store = createTokenStore(memoryStorage());
    const listener = vi.fn();
    const unsubscribe = store.subscribe(listener);
    unsubscribe();
    store.signIn('x');
    expect(listener).not.toHaveBeenCalled();
  });

  it('works when storage throws', () => {
    const broken = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
      removeItem: () => {
        throw new Error('denied');
      },
    };
    const store = createTokenStore(broken);
    expect(store.getSnapshot().token).toBeNull();
    store.signIn('tok');
    expect(store.getSnapshot().token).toBe('tok');
    store.signOut();
    expect(store.getSnapshot().token).toBeNull();
  });

  it('keeps a cookie session in memory only, and signing out ends it', () => {
    const storage = new Map<string, string>();
    const store = createTokenStore({
      getItem: (key) => storage.get(key) ?? null,
      setItem: (key, value) => void storage.set(key, value),
      removeItem: (key) => void storage.delete(key),
    });
    store.signInSession('csrf-1');
    expect(store.getSnapshot()).toEqual({
      token: null,
      session: true,
      csrf: 'csrf-1',
      notice: null,
    });
    expect(storage.size).toBe(0);
    store.signOut('Your session has ended: sign in again.');
    expect(store.getSnapshot().session).toBe(false);
    expect(store.getSnapshot().csrf).toBeNull();
  });
});
