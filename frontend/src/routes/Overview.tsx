import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { filtersQueryOptions, topQueriesQueryOptions } from '../api/queries';
import { errorMessage } from '../api/errors';
import { FilterPanel } from '../components/Controls/FilterPanel';
import { InstancePicker } from '../components/Controls/InstancePicker';
import { Pager } from '../components/Controls/Pager';
import { RangePicker } from '../components/Controls/RangePicker';
import { SearchBox } from '../components/Controls/SearchBox';
import { TopQueriesPanel } from '../components/TopQueries/TopQueriesPanel';
import { useScopeAnnotations } from '../hooks/useScopeAnnotations';
import { useUrlState } from '../hooks/useUrlState';
import { formatTimeRange } from '../lib/format';
import { placeMarkers } from '../lib/markers';
import {
  type FilterDimension,
  type OverviewState,
  type SortKey,
  nextSort,
  overviewToParams,
  parseOverview,
  rangeLabel,
  scopeOf,
  scopeToParams,
  serializeDetail,
  serializeOverview,
} from '../lib/viewState';

/** Overview: the queries that put the most load on the servers in the time range. */
export function Overview() {
  const [state, setState] = useUrlState(parseOverview, serializeOverview);
  const params = useMemo(() => overviewToParams(state), [state]);
  const query = useQuery(topQueriesQueryOptions(params));
  const filters = useQuery(filtersQueryOptions(scopeToParams(state)));
  const resolved = query.data && { from: query.data.from, to: query.data.to };
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
  const onSort = useCallback(
    (key: SortKey) => update(nextSort(state, key)),
    [update, state],
  );
  const onSearch = useCallback((search: string) => update({ search }, true), [update]);
  const scopeSearch = serializeDetail({ ...scopeOf(state), tab: 'examples' });
  const detailHref = useCallback(
    (queryId: string) =>
      `/queries/${encodeURIComponent(queryId)}${scopeSearch ? `?${scopeSearch}` : ''}`,
    [scopeSearch],
  );

  function toggleFilter(dimension: FilterDimension | 'instance', value: string) {
    if (dimension === 'instance') {
      const instances = state.instances.includes(value)
        ? state.instances.filter((name) => name !== value)
        : [...state.instances, value];
      update({ instances });
    } else {
      update({ [dimension]: state[dimension] === value ? undefined : value });
    }
  }

  const filtered =
    state.search !== '' ||
    state.instances.length > 0 ||
    state.schema !== undefined ||
    state.user !== undefined ||
    state.host !== undefined;

  return (
    <section className="overview" aria-labelledby="overview-title">
      <div className="page-header">
        <div>
          <h1 id="overview-title">Top queries</h1>
          <p className="range" data-testid="time-range">
            {rangeLabel(state.range)}
            {resolved && ` · ${formatTimeRange(resolved.from, resolved.to)}`}
          </p>
        </div>
        <div className="toolbar">
          <RangePicker
            range={state.range}
            onChange={(range) => update({ range })}
            {...(resolved && { resolved })}
          />
          <InstancePicker
            selected={state.instances}
            options={filters.data?.instance ?? []}
            onChange={(instances) => update({ instances })}
          />
          <button
            type="button"
            className="button"
            onClick={() => {
              void query.refetch();
              void filters.refetch();
            }}
            disabled={query.isFetching}
          >
            {query.isFetching && !query.isPending ? 'Refreshing…' : 'Refresh'}
          </button>
        </div>
      </div>
      <div className="overview-body">
        <FilterPanel query={filters} selection={state} onToggle={toggleFilter} />
        <div className="overview-main">
          <div className="table-tools">
            <SearchBox value={state.search} onSearch={onSearch} />
            {annotations.isError && (
              <span className="muted" title={errorMessage(annotations.error)}>
                Annotations unavailable
              </span>
            )}
          </div>
          <div className={query.isPlaceholderData ? 'stale' : undefined}>
            <TopQueriesPanel
              query={query}
              offset={params.offset}
              filtered={filtered}
              sort={state.sort}
              order={state.order}
              onSort={onSort}
              markers={markers}
              detailHref={detailHref}
            />
          </div>
          {query.data && (query.data.rows.length > 0 || state.page > 1) && (
            <Pager
              page={state.page}
              size={state.size}
              total={query.data.totals.queries}
              onPage={(page) => setState({ page })}
              onSize={(size) => update({ size })}
            />
          )}
        </div>
      </div>
    </section>
  );
}
