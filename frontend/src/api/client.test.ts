import { afterEach, describe, expect, it } from 'vitest';
import { tokenStore } from '../auth/tokenStore';
import { csrfHeader } from './client';

async function headersAfter(method: string, headers: Record<string, string> = {}) {
  const request = new Request('http://quanta.test/api/v1/annotations', { method, headers });
  // Only `request` is read by this middleware; the rest of the context is irrelevant.
  const next = await csrfHeader.onRequest?.({ request } as never);
  return (next instanceof Request ? next : request).headers;
}

describe('csrfHeader', () => {
  afterEach(() => tokenStore.signOut());

  it('sends the session CSRF token with writes', async () => {
    tokenStore.signInSession('csrf-abc');
    expect((await headersAfter('POST')).get('X-CSRF-Token')).toBe('csrf-abc');
    expect((await headersAfter('DELETE')).get('X-CSRF-Token')).toBe('csrf-abc');
  });

  it('sends none with reads, nor with a bearer token', async () => {
    tokenStore.signInSession('csrf-abc');
    expect((await headersAfter('GET')).has('X-CSRF-Token')).toBe(false);
    const bearer = await headersAfter('POST', { Authorization: 'Bearer qnt_x' });
    expect(bearer.has('X-CSRF-Token')).toBe(false);
  });

  it('sends none without a session', async () => {
    expect((await headersAfter('POST')).has('X-CSRF-Token')).toBe(false);
  });
});
