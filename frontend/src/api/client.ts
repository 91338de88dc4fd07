import createClient, { type Middleware } from 'openapi-fetch';
import { tokenStore } from '../auth/tokenStore';
import { apiErrorFrom } from './errors';
import type { paths } from './schema';
import type { Me, TopQueries, TopQueriesParams } from './types';

// Adds the stored token unless the caller set one (sign-in checks a candidate token).
const bearerAuth: Middleware = {
  onRequest({ request }) {
    const { token } = tokenStore.getSnapshot();
    if (token && !request.headers.has('Authorization')) {
      request.headers.set('Authorization', `Bearer ${token}`);
    }
    return request;
  },
};

// Same origin: the backend serves this UI, and `vite dev` proxies /api to it.
export const api = createClient<paths>({ baseUrl: '' });
api.use(bearerAuth);

/**
 * The body of a successful call, or an ApiError with the API's `detail`. Typed loosely on
 * purpose: the error shapes an operation documents (often none) are not all it can answer,
 * e.g. a 401 from the auth dependency or a 502 from a proxy.
 */
async function unwrap<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await request;
  if (error !== undefined || data === undefined) {
    throw apiErrorFrom(response.status, response.statusText, error);
  }
  return data;
}

/** GET /api/v1/me with the stored token, or with `token` when given. */
export async function fetchMe(options: { signal?: AbortSignal; token?: string } = {}): Promise<Me> {
  const headers = options.token ? { Authorization: `Bearer ${options.token}` } : undefined;
  return unwrap(api.GET('/api/v1/me', { signal: options.signal, headers }));
}

/** GET /api/v1/queries: the top queries of a time range with totals and sparklines. */
export async function fetchTopQueries(
  params: TopQueriesParams,
  signal?: AbortSignal,
): Promise<TopQueries> {
  return unwrap(api.GET('/api/v1/queries', { params: { query: params }, signal }));
}
