import { type UseQueryResult, useQueries, useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { agentSourcesOptions } from '../api/agents';
import { filtersOptions, topQueriesOptions } from '../api/queryClasses';
import { stageQueriesOptions } from '../api/stages';
import { errorMessage } from '../api/errors';
import type { Filters } from '../api/types';
import { FilterPanel } from '../components/Controls/FilterPanel';
import { InstancePicker } from '../components/Controls/InstancePicker';
import { IndexPlanLink } from '../components/IndexPlan/IndexPlanLink';
import { Pager } from '../components/Controls/Pager';
import { RangePicker } from '../components/Controls/RangePicker';
import { SearchBox } from '../components/Controls/SearchBox';
import { ClassCapWarning } from '../components/TopQueries/ClassCapWarning';
import { StageQueriesPanel } from '../components/Stages/StageQueriesPanel';
import { TopQueriesPanel } from '../components/TopQueries/TopQueriesPanel';
import { WorkloadLinks } from '../components/Workload/WorkloadLinks';
import { toRowViews } from '../components/TopQueries/topQueriesView';
import { useScopeAnnotations } from '../hooks/useScopeAnnotations';
import { useUrlState } from '../hooks/useUrlState';
import { agentsAtAGlance } from '../lib/agents';
import { formatTimeRange } from '../lib/format';
import { placeMarkers } from '../lib/markers';
import {
  type FilterDimension,
  type OverviewState,
  type SortKey,
  groupByOptions,
  keyedGroup,
  nextSort,
  overviewToParams,
  parseOverview,
  rangeLabel,
  scopeOf,
  scopeToParams,
  serializeDetail,
  serializeOverview,
  stageParams,
  togglePair,
  withoutDimension,
} from '../lib/viewState';

// Minimum shares (percent) the stage view offers.
const STAGE_MINIMUMS = [0, 10, 25, 50, 75] as const;

// 'keys': tags and labels, listed without their own filters (so a value can be added).
const PANEL_DIMENSIONS = ['instance', 'schema', 'user', 'host', 'keys'] as const;

/** One Filters answer from the per-dimension answers (each dimension from its own). */
function combineFilters(results: UseQueryResult<Filters>[]) {
  const [instance, schema, user, host, keys] = results.map((result) => result.data);
  const data =
    instance && schema && user && host && keys
      ? {
          ...instance,
          instance: instance.instance,
          schema: schema.schema,
          user: user.user,
          host: host.host,
          tags: keys.tags ?? {},
          labels: keys.labels ?? {},
        }
      : undefined;
  const error = results.find((result) => result.isError)?.error ?? null;
  return {
    status: error ? ('error' as const) : data ? ('success' as const) : ('pending' as const),
    data,
    error,
    refetch: () => results.forEach((result) => void result.refetch()),
  };
}

/** Overview: the queries that put the most load on the servers in the time range. */
export function Overview() {
  const [state, setState] = useUrlState(parseOverview, serializeOverview);
  const params = useMemo(() => overviewToParams(state), [state]);
  const query = useQuery(topQueriesOptions(params));
  // The stages of the sampled executions (the menu) and, with one picked, the ranking.
  const stages = useQuery(stageQueriesOptions(stageParams(state)));
  const byStage = state.stage !== undefined;
  const scopeParams = scopeToParams(state);
  // Each dimension's values without its own filter, so a picked value can be swapped for
  // another; TanStack Query dedupes the requests for dimensions without a filter.
  const panel = useQueries({
    queries: PANEL_DIMENSIONS.map((dimension) =>
      filtersOptions(
        dimension === 'keys'
          ? withoutDimension(withoutDimension(scopeParams, 'tag'), 'label')
          : withoutDimension(scopeParams, dimension),
      ),
    ),
    combine: (results) => combineFilters(results),
  });
  const resolved = query.data && { from: query.data.from, to: query.data.to };
  // Only for the empty state: is an agent connected, or did one stop?
  const empty = query.data !== undefined && toRowViews(query.data).length === 0;
  const agents = useQuery({ ...agentSourcesOptions(), enabled: empty });
  const agentsNow = agents.data && agentsAtAGlance(agents.data, agents.dataUpdatedAt);
  const annotations = useScopeAnnotations(resolved, state.instances);

  const markers = useMemo(
    () =>
      query.data && annotations.data
        ? placeMarkers(annotations.data, Date.parse(query.data.from), Date.parse(query.data.to))
        : [],
    [query.data, annotations.data],
  );

  // Any change of what is shown goes back to page 1.
  const update = useCallback(
    (change: Partial<OverviewState>, replace = false) =>
      setState((current) => ({ ...current, page: 1, ...change }), { replace }),
    [setState],
  );
  const onSort = useCallback((key: SortKey) => update(nextSort(state, key)), [update, state]);
  const onSearch = useCallback((search: string) => update({ search }, true), [update]);
  const scopeSearch = serializeDetail({ ...scopeOf(state), tab: 'examples' });
  const detailHref = useCallback(
    (queryId: string) =>
      `/queries/${encodeURIComponent(queryId)}${scopeSearch ? `?${scopeSearch}` : ''}`,
    [scopeSearch],
  );

  // Drilling into a group: filter on its value and list that value's queries.
  const onPickGroup = useCallback(
    (value: string) => {
      if (state.group === 'query') return;
      const keyed = keyedGroup(state.group);
      if (keyed?.kind === 'tag') {
        update({ group: 'query', tags: togglePair(state.tags, `${keyed.key}:${value}`) });
      } else if (keyed?.kind === 'label') {
        update({ group: 'query', labels: togglePair(state.labels, `${keyed.key}:${value}`) });
      } else if (state.group === 'instance') update({ group: 'query', instances: [value] });
      else update({ group: 'query', [state.group]: value });
    },
    [state.group, state.tags, state.labels, update],
  );

  function toggleFilter(
    dimension: FilterDimension | 'instance' | `${'tag' | 'label'}:${string}`,
    value: string,
  ) {
    const keyed = keyedGroup(dimension);
    if (keyed?.kind === 'tag') {
      update({ tags: togglePair(state.tags, `${keyed.key}:${value}`) });
    } else if (keyed?.kind === 'label') {
      update({ labels: togglePair(state.labels, `${keyed.key}:${value}`) });
    } else if (dimension === 'instance') {
      const instances = state.instances.includes(value)
        ? state.instances.filter((name) => name !== value)
        : [...state.instances, value];
      update({ instances });
    } else {
      const plain = dimension as FilterDimension;
      update({ [plain]: state[plain] === value ? undefined : value });
    }
  }

  const rowCount = query.data
    ? state.group === 'query'
      ? query.data.rows.length
      : (query.data.groups?.length ?? 0)
    : 0;

  const filtered =
    state.search !== '' ||
    state.instances.length > 0 ||
    state.schema !== undefined ||
    state.user !== undefined ||
    state.host !== undefined ||
    (state.tags?.length ?? 0) > 0 ||
    (state.labels?.length ?? 0) > 0;

  return (
    <section className="overview" aria-labelledby="overview-title">
      <div className="page-header">
        <div>
          <h1 id="overview-title">Top queries</h1>
          <p className="range" data-testid="time-range">
            {rangeLabel(state.range)}
            {resolved && ` · ${formatTimeRange(resolved.from, resolved.to)}`}
          </p>
          <WorkloadLinks instances={state.instances} range={state.range} />
          <IndexPlanLink instances={state.instances.length > 0 ? state.instances : undefined} />
        </div>
        <div className="toolbar">
          <RangePicker
            range={state.range}
            onChange={(range) => update({ range })}
            {...(resolved && { resolved })}
          />
          <InstancePicker
            selected={state.instances}
            options={panel.data?.instance ?? []}
            onChange={(instances) => update({ instances })}
          />
          <label
            className="check"
            title="Its EXPLAINs, privilege and schema probes, performance_schema polls"
          >
            <input
              type="checkbox"
              checked={state.own ?? false}
              onChange={(event) => update({ own: event.target.checked || undefined })}
              data-testid="show-own"
            />
            Quanta&apos;s own statements
          </label>
          <button
            type="button"
            className="button"
            onClick={() => {
              void query.refetch();
              panel.refetch();
            }}
            disabled={query.isFetching}
          >
            {query.isFetching && !query.isPending ? 'Refreshing…' : 'Refresh'}
          </button>
        </div>
      </div>
      <div className="overview-body">
        <FilterPanel query={panel} selection={state} onToggle={toggleFilter} />
        <div className="overview-main">
          <div className="table-tools">
            <SearchBox value={state.search} onSearch={onSearch} />
            <label className="group-by">
              Group by
              <select
                value={state.group}
                onChange={(event) => update({ group: event.target.value })}
                data-testid="group-by"
              >
                {groupByOptions(panel.data, state.group).map((option) => (
                  <option key={option.value} value={option.value}>
                    {option.label}
                  </option>
                ))}
              </select>
            </label>
            <label className="group-by">
              Time in stage
              <select
                value={state.stage ?? ''}
                onChange={(event) =>
                  update({
                    stage: event.target.value || undefined,
                    stageMin: undefined,
                    stageSort: undefined,
                  })
                }
                data-testid="stage-pick"
              >
                <option value="">(any)</option>
                {state.stage !== undefined &&
                  !stages.data?.stages.some((item) => item.stage === state.stage) && (
                    <option value={state.stage}>{state.stage}</option>
                  )}
                {(stages.data?.stages ?? []).map((item) => (
                  <option key={item.stage} value={item.stage}>
                    {item.stage} ({(item.share * 100).toFixed(1)}%)
                  </option>
                ))}
              </select>
            </label>
            {byStage && (
              <>
                <label className="group-by">
                  At least
                  <select
                    value={state.stageMin ?? 0}
                    onChange={(event) =>
                      update({ stageMin: Number(event.target.value) || undefined })
                    }
                    data-testid="stage-min"
                  >
                    {STAGE_MINIMUMS.map((min) => (
                      <option key={min} value={min}>
                        {min}%
                      </option>
                    ))}
                  </select>
                </label>
                <label className="group-by">
                  Sort by
                  <select
                    value={state.stageSort ?? 'share'}
                    onChange={(event) =>
                      update({ stageSort: event.target.value === 'time' ? 'time' : undefined })
                    }
                    data-testid="stage-sort"
                  >
                    <option value="share">share of its time</option>
                    <option value="time">time in the stage</option>
                  </select>
                </label>
              </>
            )}
            {annotations.isError && (
              <span className="muted" title={errorMessage(annotations.error)}>
                Annotations unavailable
              </span>
            )}
          </div>
          <ClassCapWarning instances={state.instances} />
          <div
            className={query.isPlaceholderData ? 'stale' : undefined}
            aria-busy={query.isFetching}
            // The view state whose data is on screen, once it is: lets tests (and anyone
            // scripting the page) wait for exactly this view instead of guessing.
            data-settled={query.isFetching ? undefined : serializeOverview(state)}
            data-testid="queries-region"
          >
            {byStage ? (
              <StageQueriesPanel query={stages} detailHref={detailHref} />
            ) : (
              <TopQueriesPanel
                query={query}
                offset={params.offset}
                filtered={filtered}
                {...(agentsNow && { agents: agentsNow })}
                sort={state.sort}
                order={state.order}
                onSort={onSort}
                markers={markers}
                detailHref={detailHref}
                onPickGroup={onPickGroup}
              />
            )}
          </div>
          {!byStage && query.data && (rowCount > 0 || state.page > 1) && (
            <Pager
              page={state.page}
              size={state.size}
              // Grouped answers do not say how many values there are: a full page has more.
              total={state.group === 'query' ? query.data.totals.queries : undefined}
              hasNext={rowCount === state.size}
              onPage={(page) => setState({ page })}
              onSize={(size) => update({ size })}
            />
          )}
        </div>
      </div>
    </section>
  );
}
