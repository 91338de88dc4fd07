import { describe, expect, it } from 'vitest';
import {
  stageParams,
  DEFAULT_OVERVIEW,
  type OverviewState,
  nextSort,
  overviewToParams,
  parseAnnotations,
  parseDetail,
  parseImpact,
  parseOverview,
  serializeAnnotations,
  serializeDetail,
  serializeImpact,
  serializeOverview,
  withoutDimension,
  groupByLabel,
  groupByOptions,
  scopeToParams,
  togglePair,
} from './viewState';

describe('tags and labels', () => {
  it('round-trips tag and label filters and a tag group through the URL', () => {
    const search = 'tag=team%3Apayments&tag=route%3A%2Fcart&label=env%3Aprod&group=tag%3Ateam';
    const state = parseOverview(search);
    expect(state.tags).toEqual(['team:payments', 'route:/cart']);
    expect(state.labels).toEqual(['env:prod']);
    expect(state.group).toBe('tag:team');
    expect(serializeOverview(state)).toBe(search);
    expect(overviewToParams(state)).toMatchObject({
      tag: ['team:payments', 'route:/cart'],
      label: ['env:prod'],
      group_by: 'tag:team',
    });
  });

  it('drops malformed pairs and unknown groups', () => {
    const state = parseOverview('tag=team&tag=%3Ax&group=tag%3ATeam%20X');
    expect(state.tags).toBeUndefined();
    expect(state.group).toBe('query');
    expect(scopeToParams(state).tag).toBeUndefined();
  });

  it('offers each tag and label key in the group-by menu', () => {
    const options = groupByOptions({ tags: { team: [] }, labels: { env: [] } }, 'tag:gone');
    expect(options.map((o) => o.value)).toEqual([
      'query',
      'schema',
      'user',
      'host',
      'instance',
      'tag:team',
      'label:env',
      'tag:gone',
    ]);
    expect(groupByLabel('label:env')).toBe('Label env');
    expect(groupByLabel('host')).toBe('Client host');
  });

  it('toggles a pair', () => {
    expect(togglePair(undefined, 'team:a')).toEqual(['team:a']);
    expect(togglePair(['team:a', 'team:b'], 'team:a')).toEqual(['team:b']);
  });
});

describe('overview URL state', () => {
  it('is empty for the default view and parses back to it', () => {
    expect(serializeOverview(DEFAULT_OVERVIEW)).toBe('');
    expect(parseOverview('')).toEqual(DEFAULT_OVERVIEW);
  });

  const full: OverviewState = {
    range: { kind: 'preset', preset: '7d' },
    instances: ['db-1', 'db 2'],
    schema: 'shop',
    user: 'app',
    host: '10.0.0.5',
    group: 'schema',
    search: 'orders',
    sort: 'query_time_p95',
    order: 'asc',
    page: 3,
    size: 100,
  };

  it('round-trips every field', () => {
    const search = serializeOverview(full);
    expect(search).toBe(
      'range=7d&instance=db-1&instance=db+2&schema=shop&user=app&host=10.0.0.5&group=schema&q=orders' +
        '&sort=query_time_p95&order=asc&page=3&size=100',
    );
    expect(parseOverview(`?${search}`)).toEqual(full);
  });

  it("shows Quanta's own statements only when asked, and asks the API for them", () => {
    const state: OverviewState = { ...DEFAULT_OVERVIEW, own: true };
    expect(serializeOverview(state)).toBe('own=1');
    expect(parseOverview('?own=1')).toEqual(state);
    expect(parseOverview('?own=yes')).toEqual(DEFAULT_OVERVIEW);
    expect(overviewToParams(state).include_own).toBe(true);
    expect(overviewToParams(DEFAULT_OVERVIEW).include_own).toBeUndefined();
    expect(parseDetail(`?${serializeDetail({ ...state, tab: 'examples' })}`).own).toBe(true);
  });

  it('round-trips a custom range', () => {
    const state: OverviewState = {
      ...DEFAULT_OVERVIEW,
      range: { kind: 'custom', from: '2026-11-20T10:00:00Z', to: '2026-11-20T12:00:00Z' },
    };
    const search = serializeOverview(state);
    expect(search).toBe('from=2026-11-20T10%3A00%3A00Z&to=2026-11-20T12%3A00%3A00Z');
    expect(parseOverview(search)).toEqual(state);
  });

  it('ignores what it does not understand instead of failing', () => {
    expect(
      parseOverview(
        '?range=2y&sort=drop_table&order=sideways&page=-4&size=7&from=yesterday&group=table',
      ),
    ).toEqual(DEFAULT_OVERVIEW);
    expect(parseOverview('?instance=&instance=a&instance=a&q=%20%20')).toEqual({
      ...DEFAULT_OVERVIEW,
      instances: ['a'],
    });
  });

  it('turns state into API parameters: relative presets, offset from page and size', () => {
    expect(overviewToParams(full)).toEqual({
      from: 'now-7d',
      instance: ['db-1', 'db 2'],
      schema: 'shop',
      user: 'app',
      host: '10.0.0.5',
      group_by: 'schema',
      search: 'orders',
      sort: 'query_time_p95',
      order: 'asc',
      limit: 100,
      offset: 200,
    });
    expect(overviewToParams(DEFAULT_OVERVIEW)).toEqual({
      from: 'now-24h',
      sort: 'load',
      order: 'desc',
      limit: 50,
      offset: 0,
    });
  });
});

describe('nextSort', () => {
  it('sorts a new column descending and flips the current one', () => {
    expect(nextSort({ sort: 'load', order: 'desc' }, 'count')).toEqual({
      sort: 'count',
      order: 'desc',
    });
    expect(nextSort({ sort: 'count', order: 'desc' }, 'count')).toEqual({
      sort: 'count',
      order: 'asc',
    });
    expect(nextSort({ sort: 'count', order: 'asc' }, 'count')).toEqual({
      sort: 'count',
      order: 'desc',
    });
  });
});

describe('detail URL state', () => {
  it('round-trips scope and tab, defaulting to examples', () => {
    expect(parseDetail('')).toEqual({
      range: { kind: 'preset', preset: '24h' },
      instances: [],
      tab: 'examples',
    });
    const state = parseDetail('?range=1h&instance=db-1&schema=shop&tab=explain');
    expect(state).toEqual({
      range: { kind: 'preset', preset: '1h' },
      instances: ['db-1'],
      schema: 'shop',
      tab: 'explain',
    });
    expect(serializeDetail(state)).toBe('range=1h&instance=db-1&schema=shop&tab=explain');
    expect(parseDetail('?tab=nope').tab).toBe('examples');
  });
});

describe('annotations and impact URL state', () => {
  it('looks back 7 days by default and round-trips a tag', () => {
    expect(parseAnnotations('')).toEqual({ range: { kind: 'preset', preset: '7d' } });
    expect(serializeAnnotations(parseAnnotations(''))).toBe('');
    const state = parseAnnotations('?range=30d&tag=deploy');
    expect(serializeAnnotations(state)).toBe('range=30d&tag=deploy');
  });

  it('round-trips the impact window', () => {
    expect(parseImpact('')).toEqual({ window: '1h', changedOnly: false });
    expect(serializeImpact({ window: '6h', changedOnly: true })).toBe('window=6h&changed=1');
    expect(parseImpact('?window=6h&changed=1')).toEqual({ window: '6h', changedOnly: true });
    expect(parseImpact('?window=1y').window).toBe('1h');
  });
});

describe('withoutDimension', () => {
  it('drops only that dimension', () => {
    const params = { from: 'now-1h', instance: ['a'], schema: 'shop', user: 'app' };
    expect(withoutDimension(params, 'schema')).toEqual({
      from: 'now-1h',
      instance: ['a'],
      user: 'app',
    });
    expect(withoutDimension(params, 'instance')).toEqual({
      from: 'now-1h',
      schema: 'shop',
      user: 'app',
    });
    expect(params.schema).toBe('shop');
  });
});

describe('the overview stage view', () => {
  it('round-trips the stage, its minimum share and sort through the URL', () => {
    const search = 'stage=Creating+sort+index&stage_min=25&stage_sort=time';
    const state = parseOverview(search);
    expect(state.stage).toBe('Creating sort index');
    expect(state.stageMin).toBe(25);
    expect(state.stageSort).toBe('time');
    expect(serializeOverview(state)).toBe(search);
    expect(stageParams(state)).toEqual({
      from: 'now-24h',
      stage: 'Creating sort index',
      min_share: 0.25,
      sort: 'time',
      limit: 50,
    });
  });

  it('ignores a bad minimum share and leaves the defaults out', () => {
    const state = parseOverview('stage=Sending+data&stage_min=300&stage_sort=share');
    expect(state.stageMin).toBeUndefined();
    expect(serializeOverview(state)).toBe('stage=Sending+data');
  });
});
