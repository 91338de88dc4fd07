import { describe, expect, it } from 'vitest';
import { isolatedPoints, toChartPoints, visibleMetrics } from './detailView';

describe('toChartPoints', () => {
  it('sorts by time and keeps missing percentiles as null', () => {
    expect(
      toChartPoints([
        {
          ts: '2026-11-22T01:00:00Z',
          load: 2,
          count: 3,
          rows_examined: 0,
          p50: 0.1,
          p95: null,
          p99: null,
        },
        { ts: 'bad', load: 1, count: 1, rows_examined: 0, p50: null, p95: null, p99: null },
        {
          ts: '2026-11-22T00:00:00Z',
          load: 1,
          count: 1,
          rows_examined: 0,
          p50: null,
          p95: null,
          p99: null,
        },
      ]),
    ).toEqual([
      { t: Date.parse('2026-11-22T00:00:00Z'), load: 1, count: 1, p50: null, p95: null, p99: null },
      { t: Date.parse('2026-11-22T01:00:00Z'), load: 2, count: 3, p50: 0.1, p95: null, p99: null },
    ]);
  });
});

describe('isolatedPoints', () => {
  it('finds values with no neighbour to draw a line to', () => {
    const data = [{ v: 1 }, { v: null }, { v: 2 }, { v: 3 }, { v: null }, { v: 4 }];
    expect([...isolatedPoints(data, 'v')]).toEqual([0, 5]);
    expect([...isolatedPoints([{ v: null }], 'v')]).toEqual([]);
  });
});

describe('visibleMetrics', () => {
  const stat = (name: string, sum: number | null) => ({
    name,
    sum,
    rate: null,
    share: null,
    avg: null,
    min: null,
    max: null,
    p50: null,
    p95: null,
    p99: null,
  });
  it('puts calls and query time first and drops empty metrics', () => {
    const shown = visibleMetrics([
      stat('rows_sent', 4),
      stat('query_time', 1),
      stat('errors', 0),
      stat('tmp_tables', null),
      stat('count', 4),
    ]);
    expect(shown.map((metric) => metric.name)).toEqual(['count', 'query_time', 'rows_sent']);
  });
});
