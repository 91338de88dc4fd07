// The whole view state lives in the URL's query string so that a copied link opens the
// same view. These pure functions turn a query string into view state and back; the
// serialisers leave defaults out and write parameters in a fixed order, so equal states
// give equal URLs (and equal TanStack Query keys).

import type { GroupBy, QuerySortKey, SortOrder } from '../api/types';

export type { GroupBy, SortOrder };

export const RANGE_PRESETS = ['1h', '6h', '24h', '7d', '30d'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];
export const DEFAULT_PRESET: RangePreset = '24h';

export const RANGE_LABELS: Record<RangePreset, string> = {
  '1h': 'Last hour',
  '6h': 'Last 6 hours',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

export type RangeState =
  | { readonly kind: 'preset'; readonly preset: RangePreset }
  | { readonly kind: 'custom'; readonly from: string; readonly to?: string };

/** Where the data comes from: time range, instances and the schema/user/host filters. */
export interface ScopeState {
  readonly range: RangeState;
  /** Instance names; empty means all. */
  readonly instances: readonly string[];
  readonly schema?: string;
  readonly user?: string;
  readonly host?: string;
  /** Query tags as `key:value` (values of one key are alternatives, keys all required). */
  readonly tags?: readonly string[];
  /** Instance labels as `key:value`, likewise. */
  readonly labels?: readonly string[];
  /** Show Quanta's own statements (EXPLAIN, probes, polls), hidden by default. */
  readonly own?: boolean;
}

/** Sort keys the overview table offers (a subset of what /api/v1/queries accepts). */
export const SORT_KEYS = [
  'load',
  'count',
  'qps',
  'query_time_avg',
  'query_time_p95',
  'rows_examined_per_row_sent',
] as const satisfies readonly QuerySortKey[];
export type SortKey = (typeof SORT_KEYS)[number];
const SORT_ORDERS = ['asc', 'desc'] as const satisfies readonly SortOrder[];

/** What one overview row is: a query class, or one value of a dimension; besides these,
 * one value of a tag key (`tag:team`) or of an instance label key (`label:environment`). */
export const GROUP_BYS = ['query', 'schema', 'user', 'host', 'instance'] as const;

const KEYED_GROUP = /^(tag|label):[a-z_][a-z0-9_.-]*$/;

/** Whether the API accepts this group_by. */
export function isGroupBy(value: string | null): value is GroupBy {
  return (
    value !== null && ((GROUP_BYS as readonly string[]).includes(value) || KEYED_GROUP.test(value))
  );
}

/** A tag or label key's group_by split into its kind and key (undefined for the others). */
export function keyedGroup(group: string): { kind: 'tag' | 'label'; key: string } | undefined {
  const match = KEYED_GROUP.exec(group);
  if (match === null) return undefined;
  return { kind: match[1] as 'tag' | 'label', key: group.slice(match[1]!.length + 1) };
}

const GROUP_BY_LABELS: Record<(typeof GROUP_BYS)[number], string> = {
  query: 'Query',
  schema: 'Schema',
  user: 'User',
  host: 'Client host',
  instance: 'Instance',
};

/** How a group_by reads in the menu and the table heading. */
export function groupByLabel(group: string): string {
  const keyed = keyedGroup(group);
  if (keyed !== undefined) return `${keyed.kind === 'tag' ? 'Tag' : 'Label'} ${keyed.key}`;
  return GROUP_BY_LABELS[group as (typeof GROUP_BYS)[number]] ?? group;
}

/** The group-by menu: the dimensions, then each tag key and label key the filter lists
 * know, and the current choice even when the range has no such key. */
export function groupByOptions(
  keys: { tags?: Record<string, unknown>; labels?: Record<string, unknown> } | undefined,
  current: string,
): { value: string; label: string }[] {
  const values: string[] = [
    ...GROUP_BYS,
    ...Object.keys(keys?.tags ?? {}).map((key) => `tag:${key}`),
    ...Object.keys(keys?.labels ?? {}).map((key) => `label:${key}`),
  ];
  if (!values.includes(current)) values.push(current);
  return values.map((value) => ({ value, label: groupByLabel(value) }));
}

/** A `key:value` pair added to the pairs, or taken out if it is there. */
export function togglePair(pairs: readonly string[] | undefined, pair: string): string[] {
  const current = pairs ?? [];
  return current.includes(pair) ? current.filter((p) => p !== pair) : [...current, pair];
}

/** How the overview's stage view orders its queries: by the stage's share of their time, or
 * by the time itself. */
export const STAGE_SORTS = ['share', 'time'] as const;
export type StageSort = (typeof STAGE_SORTS)[number];

export interface OverviewState extends ScopeState {
  /** Rank queries by the share of their time spent in this stage (production profiles). */
  readonly stage?: string;
  /** Leave out queries spending less than this share (percent) in the stage. */
  readonly stageMin?: number;
  readonly stageSort?: StageSort;
  readonly group: GroupBy;
  readonly search: string;
  readonly sort: SortKey;
  readonly order: SortOrder;
  /** 1-based. */
  readonly page: number;
  /** Rows per page. */
  readonly size: PageSize;
}

export const PAGE_SIZES = [25, 50, 100, 500, 1000] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

export const DETAIL_TABS = ['examples', 'explain', 'profile', 'tables', 'suggestions'] as const;
export type DetailTab = (typeof DETAIL_TABS)[number];

export interface DetailState extends ScopeState {
  readonly tab: DetailTab;
}

export const FILTER_DIMENSIONS = ['schema', 'user', 'host'] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

export const DEFAULT_SCOPE: ScopeState = {
  range: { kind: 'preset', preset: DEFAULT_PRESET },
  instances: [],
};

export const DEFAULT_OVERVIEW: OverviewState = {
  ...DEFAULT_SCOPE,
  group: 'query',
  search: '',
  sort: 'load',
  order: 'desc',
  page: 1,
  size: 50,
};

function oneOf<T extends string>(values: readonly T[], value: string | null): T | undefined {
  return values.find((candidate) => candidate === value);
}

function text(params: URLSearchParams, name: string): string | undefined {
  const value = params.get(name)?.trim();
  return value ? value : undefined;
}

function instant(params: URLSearchParams, name: string): string | undefined {
  const value = text(params, name);
  return value !== undefined && !Number.isNaN(Date.parse(value)) ? value : undefined;
}

/** The range in a query string: `range=7d`, or `from`/`to` (ISO 8601) for a custom one. */
export function parseRange(params: URLSearchParams): RangeState {
  const from = instant(params, 'from');
  if (from !== undefined) {
    const to = instant(params, 'to');
    return to !== undefined ? { kind: 'custom', from, to } : { kind: 'custom', from };
  }
  return { kind: 'preset', preset: oneOf(RANGE_PRESETS, params.get('range')) ?? DEFAULT_PRESET };
}

export function parseScope(params: URLSearchParams): ScopeState {
  const instances = [
    ...new Set(
      params
        .getAll('instance')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  const scope: ScopeState = { range: parseRange(params), instances };
  const filters: Partial<Record<FilterDimension, string>> = {};
  for (const dimension of FILTER_DIMENSIONS) {
    const value = text(params, dimension);
    if (value !== undefined) filters[dimension] = value;
  }
  const tags = pairsOf(params, 'tag');
  const labels = pairsOf(params, 'label');
  return {
    ...scope,
    ...filters,
    ...(tags.length > 0 && { tags }),
    ...(labels.length > 0 && { labels }),
    ...(params.get('own') === '1' && { own: true }),
  };
}

/** The distinct `key:value` parameters `name` (others are left out). */
function pairsOf(params: URLSearchParams, name: string): string[] {
  return [...new Set(params.getAll(name).filter((pair) => /^[^:]+:./.test(pair)))];
}

/** Writes a range as parseRange reads it (the default preset left out). */
export function writeRange(params: URLSearchParams, range: RangeState): void {
  if (range.kind === 'custom') {
    params.set('from', range.from);
    if (range.to !== undefined) params.set('to', range.to);
  } else if (range.preset !== DEFAULT_PRESET) {
    params.set('range', range.preset);
  }
}

function writeScope(params: URLSearchParams, scope: ScopeState): void {
  writeRange(params, scope.range);
  for (const name of scope.instances) params.append('instance', name);
  for (const dimension of FILTER_DIMENSIONS) {
    const value = scope[dimension];
    if (value !== undefined && value !== '') params.set(dimension, value);
  }
  for (const pair of scope.tags ?? []) params.append('tag', pair);
  for (const pair of scope.labels ?? []) params.append('label', pair);
  if (scope.own) params.set('own', '1');
}

function positiveInt(value: string | null, fallback: number): number {
  const number = Number(value);
  return Number.isInteger(number) && number >= 1 ? number : fallback;
}

function stageView(params: URLSearchParams): Partial<OverviewState> {
  const stage = text(params, 'stage');
  if (stage === undefined) return {};
  const min = Number(params.get('stage_min'));
  const sort = oneOf(STAGE_SORTS, params.get('stage_sort'));
  return {
    stage,
    ...(Number.isInteger(min) && min > 0 && min <= 100 && { stageMin: min }),
    ...(sort !== undefined && sort !== 'share' && { stageSort: sort }),
  };
}

export function parseOverview(search: string): OverviewState {
  const params = new URLSearchParams(search);
  return {
    ...parseScope(params),
    ...stageView(params),
    group: isGroupBy(params.get('group')) ? params.get('group')! : DEFAULT_OVERVIEW.group,
    search: text(params, 'q') ?? '',
    sort: oneOf(SORT_KEYS, params.get('sort')) ?? DEFAULT_OVERVIEW.sort,
    order: oneOf(SORT_ORDERS, params.get('order')) ?? DEFAULT_OVERVIEW.order,
    page: positiveInt(params.get('page'), 1),
    size: PAGE_SIZES.find((size) => String(size) === params.get('size')) ?? DEFAULT_OVERVIEW.size,
  };
}

/** The query string (without `?`) of an overview state; empty for the default view. */
export function serializeOverview(state: OverviewState): string {
  const params = new URLSearchParams();
  writeScope(params, state);
  if (state.group !== DEFAULT_OVERVIEW.group) params.set('group', state.group);
  if (state.search.trim() !== '') params.set('q', state.search.trim());
  if (state.sort !== DEFAULT_OVERVIEW.sort) params.set('sort', state.sort);
  if (state.order !== DEFAULT_OVERVIEW.order) params.set('order', state.order);
  if (state.page > 1) params.set('page', String(state.page));
  if (state.size !== DEFAULT_OVERVIEW.size) params.set('size', String(state.size));
  if (state.stage !== undefined) {
    params.set('stage', state.stage);
    if (state.stageMin !== undefined) params.set('stage_min', String(state.stageMin));
    if (state.stageSort !== undefined && state.stageSort !== 'share') {
      params.set('stage_sort', state.stageSort);
    }
  }
  return params.toString();
}

/** The /api/v1/stages/queries parameters of an overview state (the stage menu, and with a
 * stage its ranking). */
export function stageParams(state: OverviewState): {
  from?: string;
  to?: string;
  instance?: string[];
  stage?: string;
  min_share?: number;
  sort?: StageSort;
  limit: number;
} {
  const { from, to, instance } = scopeToParams(state);
  return {
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
    ...(instance !== undefined && { instance }),
    ...(state.stage !== undefined && { stage: state.stage }),
    ...(state.stageMin !== undefined && { min_share: state.stageMin / 100 }),
    ...(state.stageSort !== undefined && { sort: state.stageSort }),
    limit: state.size,
  };
}

export function parseDetail(search: string): DetailState {
  const params = new URLSearchParams(search);
  return { ...parseScope(params), tab: oneOf(DETAIL_TABS, params.get('tab')) ?? 'examples' };
}

export function serializeDetail(state: DetailState): string {
  const params = new URLSearchParams();
  writeScope(params, state);
  if (state.tab !== 'examples') params.set('tab', state.tab);
  return params.toString();
}

/** Only the scope fields of a larger state. */
export function scopeOf(state: ScopeState): ScopeState {
  const { range, instances, schema, user, host, tags, labels, own } = state;
  return {
    range,
    instances,
    ...(schema !== undefined && { schema }),
    ...(user !== undefined && { user }),
    ...(host !== undefined && { host }),
    ...(tags !== undefined && tags.length > 0 && { tags }),
    ...(labels !== undefined && labels.length > 0 && { labels }),
    ...(own && { own }),
  };
}

export interface ScopeParams {
  from?: string;
  to?: string;
  instance?: string[];
  schema?: string;
  user?: string;
  host?: string;
  tag?: string[];
  label?: string[];
  include_own?: boolean;
}

/**
 * The API's query parameters for a scope. Presets are sent relative (`now-24h`) so that
 * the server resolves "now" on every refresh.
 */
export function scopeToParams(scope: ScopeState): ScopeParams {
  const { range } = scope;
  const params: ScopeParams =
    range.kind === 'preset'
      ? { from: `now-${range.preset}` }
      : { from: range.from, ...(range.to !== undefined && { to: range.to }) };
  if (scope.instances.length > 0) params.instance = [...scope.instances];
  for (const dimension of FILTER_DIMENSIONS) {
    const value = scope[dimension];
    if (value !== undefined) params[dimension] = value;
  }
  if (scope.tags !== undefined && scope.tags.length > 0) params.tag = [...scope.tags];
  if (scope.labels !== undefined && scope.labels.length > 0) params.label = [...scope.labels];
  if (scope.own) params.include_own = true;
  return params;
}

/** A sort change from a header click: a new column sorts descending, the same one flips. */
export function nextSort(
  state: Pick<OverviewState, 'sort' | 'order'>,
  key: SortKey,
): Pick<OverviewState, 'sort' | 'order'> {
  if (state.sort !== key) return { sort: key, order: 'desc' };
  return { sort: key, order: state.order === 'desc' ? 'asc' : 'desc' };
}

/** How the range reads in a heading. */
export function rangeLabel(range: RangeState): string {
  if (range.kind === 'preset') return RANGE_LABELS[range.preset];
  return 'Custom range';
}

/** The /api/v1/queries parameters of an overview state. */
export function overviewToParams(state: OverviewState): ScopeParams & {
  search?: string;
  sort: SortKey;
  order: SortOrder;
  limit: number;
  offset: number;
  group_by?: Exclude<GroupBy, 'query'>;
} {
  return {
    ...scopeToParams(state),
    ...(state.group !== 'query' && { group_by: state.group }),
    ...(state.search !== '' && { search: state.search }),
    sort: state.sort,
    order: state.order,
    limit: state.size,
    offset: (state.page - 1) * state.size,
  };
}

export interface AnnotationsState {
  readonly range: RangeState;
  readonly tag?: string;
}

export function parseAnnotations(search: string): AnnotationsState {
  const params = new URLSearchParams(search);
  const tag = text(params, 'tag');
  // Annotations are rare: the list looks back 7 days unless told otherwise.
  const range = params.has('range') || params.has('from') ? parseRange(params) : ANNOTATIONS_RANGE;
  return tag === undefined ? { range } : { range, tag };
}

const ANNOTATIONS_RANGE: RangeState = { kind: 'preset', preset: '7d' };

export function serializeAnnotations(state: AnnotationsState): string {
  const params = new URLSearchParams();
  const { range } = state;
  if (range.kind === 'custom') {
    params.set('from', range.from);
    if (range.to !== undefined) params.set('to', range.to);
  } else if (range.preset !== '7d') {
    params.set('range', range.preset);
  }
  if (state.tag) params.set('tag', state.tag);
  return params.toString();
}

export const IMPACT_WINDOWS = ['15m', '30m', '1h', '6h', '1d'] as const;
export type ImpactWindow = (typeof IMPACT_WINDOWS)[number];

export interface ImpactState {
  readonly window: ImpactWindow;
  readonly changedOnly: boolean;
}

export function parseImpact(search: string): ImpactState {
  const params = new URLSearchParams(search);
  return {
    window: oneOf(IMPACT_WINDOWS, params.get('window')) ?? '1h',
    changedOnly: params.get('changed') === '1',
  };
}

export function serializeImpact(state: ImpactState): string {
  const params = new URLSearchParams();
  if (state.window !== '1h') params.set('window', state.window);
  if (state.changedOnly) params.set('changed', '1');
  return params.toString();
}

/**
 * The scope parameters without one dimension's own filter: the filter panel lists every
 * value of a dimension (so another can be picked) under the other dimensions' filters.
 */
export function withoutDimension(
  params: ScopeParams,
  dimension: FilterDimension | 'instance' | 'tag' | 'label',
): ScopeParams {
  const rest = { ...params };
  delete rest[dimension];
  return rest;
}
