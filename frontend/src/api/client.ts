import createClient, { type Middleware } from 'openapi-fetch';
import { CSRF_COOKIE, readCookie, tokenStore } from '../auth/tokenStore';
import { apiErrorFrom } from './errors';
import type { paths } from './schema';
import type {
  AgentSource,
  AuditEntry,
  ChannelSave,
  ChannelUpdate,
  ChannelTestResult,
  ConnectionTest,
  Delivery,
  InstanceCreate,
  InstanceUpdate,
  LoginResult,
  SignInOptions,
  TokenCreate,
  TokenCreated,
  TokenInfo,
  PasswordResetResult,
  SessionsEnded,
  User,
  UserCreate,
  UserUpdate,
  Annotation,
  AnnotationCreate,
  AnnotationImpact,
  AnnotationsParams,
  Channel,
  ClassCap,
  ExplainRun,
  Filters,
  QueryStages,
  StageQueries,
  StageQueriesParams,
  IndexPlanList,
  IndexReview,
  Instance,
  Me,
  ProfileRun,
  SuggestionList,
  SuggestionPatch,
  TableSnapshot,
  TableWorkload,
  UserWorkload,
  WorkloadRange,
  QueryDetail,
  QueryExamples,
  Regression,
  RegressionsParams,
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

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// A cookie session's writes must carry its CSRF token (the login answer's, /me's, or the
// quanta_csrf cookie's); a bearer request needs none, since no browser adds it on its own.
export const csrfHeader: Middleware = {
  onRequest({ request }) {
    if (SAFE_METHODS.has(request.method) || request.headers.has('Authorization')) return request;
    const csrf = tokenStore.getSnapshot().csrf ?? readCookie(CSRF_COOKIE);
    if (csrf) request.headers.set('X-CSRF-Token', csrf);
    return request;
  },
};

// Same origin: the backend serves this UI, and `vite dev` proxies /api to it.
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(bearerAuth, csrfHeader);

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

/** GET /api/v1/auth/options: how one can sign in now (public). */
export async function fetchSignInOptions(signal?: AbortSignal): Promise<SignInOptions> {
  return unwrap(api.GET('/api/v1/auth/options', { signal }));
}

/** GET /api/v1/queries: the top queries of a time range with totals and sparklines. */
export async function fetchTopQueries(
  params: TopQueriesParams,
  signal?: AbortSignal,
): Promise<TopQueries> {
  return unwrap(api.GET('/api/v1/queries', { params: { query: params }, signal }));
}

/** GET /api/v1/class-caps: each instance against the query-class caps. */
export async function fetchClassCaps(signal?: AbortSignal): Promise<ClassCap[]> {
  return unwrap(api.GET('/api/v1/class-caps', { signal }));
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

/** GET /api/v1/queries/{query_id}/stages: the production profile of a query on an instance. */
export async function fetchQueryStages(
  queryId: string,
  instance: string,
  range: { from?: string; to?: string },
  signal?: AbortSignal,
): Promise<QueryStages> {
  return unwrap(
    api.GET('/api/v1/queries/{query_id}/stages', {
      params: { path: { query_id: queryId }, query: { instance, ...range } },
      signal,
    }),
  );
}

/** GET /api/v1/stages/queries: queries ranked by the share of their time in one stage. */
export async function fetchStageQueries(
  params: StageQueriesParams,
  signal?: AbortSignal,
): Promise<StageQueries> {
  return unwrap(api.GET('/api/v1/stages/queries', { params: { query: params }, signal }));
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
/** GET /api/v1/instances/{id}/tables: each table's reads and writes over a range. */
export async function fetchTableWorkload(
  instanceId: number,
  range: WorkloadRange,
  signal?: AbortSignal,
): Promise<TableWorkload> {
  return unwrap(
    api.GET('/api/v1/instances/{instance_id}/tables', {
      params: { path: { instance_id: instanceId }, query: range },
      signal,
    }),
  );
}

/** GET /api/v1/instances/{id}/users: each database account's activity over a range. */
export async function fetchUserWorkload(
  instanceId: number,
  range: WorkloadRange,
  signal?: AbortSignal,
): Promise<UserWorkload> {
  return unwrap(
    api.GET('/api/v1/instances/{instance_id}/users', {
      params: { path: { instance_id: instanceId }, query: range },
      signal,
    }),
  );
}

/** GET /api/v1/instances/{id}/index-review: findings, and each index's reads over a range. */
export async function fetchIndexReview(
  instanceId: number,
  range: WorkloadRange,
  signal?: AbortSignal,
): Promise<IndexReview> {
  return unwrap(
    api.GET('/api/v1/instances/{instance_id}/index-review', {
      params: { path: { instance_id: instanceId }, query: range },
      signal,
    }),
  );
}

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

export async function fetchIndexPlan(
  instanceId: number,
  signal?: AbortSignal,
): Promise<IndexPlanList> {
  return unwrap(
    api.GET('/api/v1/instances/{instance_id}/index-plan', {
      params: { path: { instance_id: instanceId } },
      signal,
    }),
  );
}

/** Queue a fresh plan (202); the page polls GET until it is newer. */
export async function requestIndexPlan(instanceId: number): Promise<unknown> {
  return unwrap(
    api.POST('/api/v1/instances/{instance_id}/index-plan', {
      params: { path: { instance_id: instanceId } },
    }),
  );
}

export async function fetchChannels(signal?: AbortSignal): Promise<Channel[]> {
  return unwrap(api.GET('/api/v1/channels', { signal }));
}

/** POST /api/v1/auth/login: starts a cookie session (401 wrong name or password, 429). */
export async function login(name: string, password: string): Promise<LoginResult> {
  return unwrap(api.POST('/api/v1/auth/login', { body: { name, password } }));
}

/** POST /api/v1/auth/logout: ends the cookie session (204). */
export async function logout(): Promise<void> {
  return unwrapEmpty(api.POST('/api/v1/auth/logout'));
}

export async function createInstance(body: InstanceCreate): Promise<Instance> {
  return unwrap(api.POST('/api/v1/instances', { body }));
}

export async function updateInstance(id: number, body: InstanceUpdate): Promise<Instance> {
  return unwrap(
    api.PATCH('/api/v1/instances/{instance_id}', {
      params: { path: { instance_id: id } },
      body,
    }),
  );
}

export async function deleteInstance(id: number): Promise<void> {
  return unwrapEmpty(
    api.DELETE('/api/v1/instances/{instance_id}', { params: { path: { instance_id: id } } }),
  );
}

/** POST /api/v1/instances/{id}/test-connection: what the DSN's account can do. */
export async function testInstanceConnection(id: number): Promise<ConnectionTest> {
  return unwrap(
    api.POST('/api/v1/instances/{instance_id}/test-connection', {
      params: { path: { instance_id: id } },
    }),
  );
}

export async function createChannel(body: ChannelSave): Promise<Channel> {
  return unwrap(api.POST('/api/v1/channels', { body }));
}

export async function updateChannel(id: number, body: ChannelUpdate): Promise<Channel> {
  return unwrap(
    api.PATCH('/api/v1/channels/{channel_id}', { params: { path: { channel_id: id } }, body }),
  );
}

export async function deleteChannel(id: number): Promise<void> {
  return unwrapEmpty(
    api.DELETE('/api/v1/channels/{channel_id}', { params: { path: { channel_id: id } } }),
  );
}

export async function sendTestMessage(id: number): Promise<ChannelTestResult> {
  return unwrap(
    api.POST('/api/v1/channels/{channel_id}/test', { params: { path: { channel_id: id } } }),
  );
}

export async function fetchDeliveries(id: number, signal?: AbortSignal): Promise<Delivery[]> {
  return unwrap(
    api.GET('/api/v1/channels/{channel_id}/deliveries', {
      params: { path: { channel_id: id } },
      signal,
    }),
  );
}

export async function fetchTokens(signal?: AbortSignal): Promise<TokenInfo[]> {
  return unwrap(api.GET('/api/v1/tokens', { signal }));
}

export async function createToken(body: TokenCreate): Promise<TokenCreated> {
  return unwrap(api.POST('/api/v1/tokens', { body }));
}

export async function revokeToken(id: number): Promise<void> {
  return unwrapEmpty(
    api.DELETE('/api/v1/tokens/{token_id}', { params: { path: { token_id: id } } }),
  );
}

export async function fetchUsers(signal?: AbortSignal): Promise<User[]> {
  return unwrap(api.GET('/api/v1/users', { signal }));
}

export async function createUser(body: UserCreate): Promise<User> {
  return unwrap(api.POST('/api/v1/users', { body }));
}

/** PATCH /api/v1/users/{id}: a new role and/or disabled (which ends their sessions). */
export async function updateUser(id: number, body: UserUpdate): Promise<User> {
  return unwrap(api.PATCH('/api/v1/users/{user_id}', { params: { path: { user_id: id } }, body }));
}

/** POST /api/v1/users/{id}/password without a body: a generated password, shown once. */
export async function resetUserPassword(id: number): Promise<PasswordResetResult> {
  return unwrap(
    api.POST('/api/v1/users/{user_id}/password', { params: { path: { user_id: id } } }),
  );
}

/** DELETE /api/v1/users/{id}/sessions: signs the user out everywhere. */
export async function endUserSessions(id: number): Promise<SessionsEnded> {
  return unwrap(
    api.DELETE('/api/v1/users/{user_id}/sessions', { params: { path: { user_id: id } } }),
  );
}

export async function deleteUser(id: number): Promise<void> {
  return unwrapEmpty(api.DELETE('/api/v1/users/{user_id}', { params: { path: { user_id: id } } }));
}

export async function fetchAudit(signal?: AbortSignal): Promise<AuditEntry[]> {
  return unwrap(api.GET('/api/v1/audit', { signal }));
}

/** Per instance and source: the last batch, its lag, the agent's status (GET /agents). */
export async function fetchAgentSources(signal?: AbortSignal): Promise<AgentSource[]> {
  return unwrap(api.GET('/api/v1/agents', { signal }));
}

export async function fetchRegressions(
  params: RegressionsParams,
  signal?: AbortSignal,
): Promise<Regression[]> {
  const body = await unwrap(api.GET('/api/v1/regressions', { params: { query: params }, signal }));
  return body.regressions;
}
