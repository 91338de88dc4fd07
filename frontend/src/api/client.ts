import createClient, { type Middleware } from 'openapi-fetch';
import { tokenStore } from '../auth/tokenStore';
import { apiErrorFrom } from './errors';
import type { paths } from './schema';
import type {
  Annotation,
  AnnotationCreate,
  AnnotationImpact,
  AnnotationsParams,
  Channel,
  ExplainRun,
  Filters,
  Instance,
  Me,
  ProfileRun,
  SuggestionList,
  SuggestionPatch,
  TableSnapshot,
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
  params: { from?: string | null; to?: string | null; instance?: string[] | null },
  signal?: AbortSignal,
): Promise<QueryExamples> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}/examples', {
      params: { path: { query_id: queryId }, query: params },
      signal,
    }),
  );
}

/** The answer of a call that has no body (204), or an ApiError. */
async function unwrapEmpty(
  request: Promise<{ error?: unknown; response: Response }>,
): Promise<void> {
  const { error, response } = await request;
  if (!response.ok) throw apiErrorFrom(response.status, response.statusText, error);
}

/** GET /api/v1/annotations: those overlapping the range, oldest first. */
export async function fetchAnnotations(
  params: AnnotationsParams,
  signal?: AbortSignal,
): Promise<Annotation[]> {
  return unwrap(api.GET('/api/v1/annotations', { params: { query: params }, signal }));
}

export async function createAnnotation(body: AnnotationCreate): Promise<Annotation> {
  return unwrap(api.POST('/api/v1/annotations', { body }));
}

export async function deleteAnnotation(id: number): Promise<void> {
  return unwrapEmpty(
    api.DELETE('/api/v1/annotations/{annotation_id}', {
      params: { path: { annotation_id: id } },
    }),
  );
}

/** GET /api/v1/annotations/{id}/impact: each query before and after the annotation. */
export async function fetchAnnotationImpact(
  id: number,
  window: string,
  signal?: AbortSignal,
): Promise<AnnotationImpact> {
  return unwrap(
    api.GET('/api/v1/annotations/{annotation_id}/impact', {
      params: { path: { annotation_id: id }, query: { window } },
      signal,
    }),
  );
}

function queryInstance(queryId: string, instance: string) {
  return { path: { query_id: queryId }, query: { instance } };
}

/** The latest EXPLAIN of a query on an instance (404: none yet). */
export async function fetchExplain(
  queryId: string,
  instance: string,
  signal?: AbortSignal,
): Promise<ExplainRun> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}/explain', {
      params: queryInstance(queryId, instance),
      signal,
    }),
  );
}

/** The latest profile of a query on an instance (404: none yet). */
export async function fetchProfile(
  queryId: string,
  instance: string,
  signal?: AbortSignal,
): Promise<ProfileRun> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}/profile', {
      params: queryInstance(queryId, instance),
      signal,
    }),
  );
}

export type Collected = 'explain' | 'profile' | 'suggestions';

/** Asks the server to collect an EXPLAIN, a profile or index suggestions (202). */
export async function requestCollection(
  kind: Collected,
  queryId: string,
  instance: string,
): Promise<unknown> {
  const params = queryInstance(queryId, instance);
  if (kind === 'explain') {
    return unwrap(api.POST('/api/v1/queries/{query_id}/explain', { params }));
  }
  if (kind === 'profile') {
    return unwrap(api.POST('/api/v1/queries/{query_id}/profile', { params }));
  }
  return unwrap(api.POST('/api/v1/queries/{query_id}/suggestions', { params }));
}

export async function fetchSuggestions(
  queryId: string,
  instance: string,
  signal?: AbortSignal,
): Promise<SuggestionList> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}/suggestions', {
      params: queryInstance(queryId, instance),
      signal,
    }),
  );
}

export async function updateSuggestion(id: number, status: SuggestionPatch['status']) {
  return unwrap(
    api.PATCH('/api/v1/suggestions/{suggestion_id}', {
      params: { path: { suggestion_id: id } },
      body: { status },
    }),
  );
}

export async function fetchInstances(signal?: AbortSignal): Promise<Instance[]> {
  return unwrap(api.GET('/api/v1/instances', { signal }));
}

/** The latest snapshot of one table ("db.table") of an instance (404: none yet). */
export async function fetchTableSnapshot(
  instanceId: number,
  table: string,
  signal?: AbortSignal,
): Promise<TableSnapshot> {
  return unwrap(
    api.GET('/api/v1/instances/{instance_id}/tables/{table}', {
      params: { path: { instance_id: instanceId, table } },
      signal,
    }),
  );
}

export async function fetchChannels(signal?: AbortSignal): Promise<Channel[]> {
  return unwrap(api.GET('/api/v1/channels', { signal }));
}
