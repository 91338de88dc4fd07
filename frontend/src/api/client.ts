import createClient, { type Middleware } from 'openapi-fetch';
import { tokenStore } from '../auth/tokenStore';
import { apiErrorFrom } from './errors';
import type { paths } from './schema';
import type {
  Annotation,
  AnnotationCreate,
  AnnotationImpact,
  AnnotationsParams,
  ExplainRun,
  Instance,
  ProfileRun,
  Suggestion,
  SuggestionStatus,
  TableInfo,
} from './pending';
import type {
  Filters,
  Me,
  QueryDetail,
  QueryExamples,
  ScopeQuery,
  TopQueries,
  TopQueriesParams,
} from './types';

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

/** GET /api/v1/filters: each schema, user, host and instance with its share of the load. */
export async function fetchFilters(params: ScopeQuery, signal?: AbortSignal): Promise<Filters> {
  return unwrap(api.GET('/api/v1/filters', { params: { query: params }, signal }));
}

/** GET /api/v1/queries/{query_id}: metrics, series and breakdowns of one query. */
export async function fetchQueryDetail(
  queryId: string,
  params: ScopeQuery,
  signal?: AbortSignal,
): Promise<QueryDetail> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}', {
      params: { path: { query_id: queryId }, query: params },
      signal,
    }),
  );
}

/** GET /api/v1/queries/{query_id}/examples */
export async function fetchQueryExamples(
  queryId: string,
  params: { from?: string; to?: string; instance?: string[] },
  signal?: AbortSignal,
): Promise<QueryExamples> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}/examples', {
      params: { path: { query_id: queryId }, query: params },
      signal,
    }),
  );
}

// Endpoints not in openapi.json yet (see pending.ts): plain fetch with the same auth and
// error handling. Move each to `api` once the generated types have it.
type QueryValue = string | number | boolean | readonly string[] | undefined;

async function request<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  options: { query?: Record<string, QueryValue>; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value as string[]) search.append(name, item);
    else search.set(name, String(value));
  }
  const headers = new Headers({ Accept: 'application/json' });
  const { token } = tokenStore.getSnapshot();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  if (options.body !== undefined) headers.set('Content-Type', 'application/json');
  const query = search.toString();
  const response = await fetch(query ? `${path}?${query}` : path, {
    method,
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    signal: options.signal ?? null,
  });
  const body: unknown =
    response.status === 204 || response.headers.get('Content-Length') === '0'
      ? undefined
      : await response.text().then((text) => {
          try {
            return text ? (JSON.parse(text) as unknown) : undefined;
          } catch {
            return text;
          }
        });
  if (!response.ok) throw apiErrorFrom(response.status, response.statusText, body);
  return body as T;
}

const segment = encodeURIComponent;

export function fetchAnnotations(
  params: AnnotationsParams,
  signal?: AbortSignal,
): Promise<Annotation[]> {
  return request('GET', '/api/v1/annotations', { query: { ...params }, signal });
}

export function createAnnotation(body: AnnotationCreate): Promise<Annotation> {
  return request('POST', '/api/v1/annotations', { body });
}

export function deleteAnnotation(id: number): Promise<void> {
  return request('DELETE', `/api/v1/annotations/${id}`);
}

export function fetchAnnotationImpact(
  id: number,
  window: string,
  signal?: AbortSignal,
): Promise<AnnotationImpact> {
  return request('GET', `/api/v1/annotations/${id}/impact`, { query: { window }, signal });
}

/** The kinds of per-query, per-instance collections the detail tabs show. */
export type Collected = 'explain' | 'profile';

export function fetchCollected(
  kind: 'explain',
  queryId: string,
  instance: string | undefined,
  signal?: AbortSignal,
): Promise<ExplainRun>;
export function fetchCollected(
  kind: 'profile',
  queryId: string,
  instance: string | undefined,
  signal?: AbortSignal,
): Promise<ProfileRun>;
export function fetchCollected(
  kind: Collected,
  queryId: string,
  instance: string | undefined,
  signal?: AbortSignal,
): Promise<ExplainRun | ProfileRun> {
  return request('GET', `/api/v1/queries/${segment(queryId)}/${kind}`, {
    query: { instance },
    signal,
  });
}

/** Asks the server to collect an EXPLAIN, a profile or index suggestions (202). */
export function requestCollection(
  kind: Collected | 'suggestions',
  queryId: string,
  instance: string | undefined,
): Promise<unknown> {
  return request('POST', `/api/v1/queries/${segment(queryId)}/${kind}`, {
    query: { instance },
  });
}

export function fetchSuggestions(
  queryId: string,
  instance: string | undefined,
  signal?: AbortSignal,
): Promise<Suggestion[]> {
  return request('GET', `/api/v1/queries/${segment(queryId)}/suggestions`, {
    query: { instance },
    signal,
  });
}

export function updateSuggestion(id: number, status: SuggestionStatus): Promise<Suggestion> {
  return request('PATCH', `/api/v1/suggestions/${id}`, { body: { status } });
}

export function fetchInstances(signal?: AbortSignal): Promise<Instance[]> {
  return request('GET', '/api/v1/instances', { signal });
}

export function fetchTableInfo(
  instanceId: number,
  table: string,
  signal?: AbortSignal,
): Promise<TableInfo> {
  return request('GET', `/api/v1/instances/${instanceId}/tables/${segment(table)}`, { signal });
}
