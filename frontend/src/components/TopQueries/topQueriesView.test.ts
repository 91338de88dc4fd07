import { describe, expect, it } from 'vitest';
import {
  averageTime,
  sparklineDomain,
  sparklinePaths,
  sparklinePeak,
  toSparklineData,
  toTopQueryViews,
  toTotalsView,
} from './topQueriesView';
import { queryRow } from './testRows';

const T0 = Date.parse('2026-11-21T00:00:00Z');
const T1 = Date.parse('2026-11-21T00:24:00Z');

describe('averageTime', () => {
  it.each<[number, number, number | null]>([
    [12.5, 100, 0.125],
    [56.7, 1234, 56.7 / 1234],
    [0, 0, null],
    [1, 0, null],
    [Number.NaN, 3, null],
  ])('averageTime(%s, %s) = %s', (queryTime, count, expected) => {
    expect(averageTime(queryTime, count)).toBe(expected);
  });
});

describe('toSparklineData', () => {
  it('converts timestamps to epoch ms and sorts', () => {
    expect(
      toSparklineData([
        { ts: '2026-11-21T00:24:00Z', load: 0.5 },
        { ts: '2026-11-21T00:00:00Z', load: 0.25 },
      ]),
    ).toEqual([
      { t: T0, load: 0.25 },
      { t: T1, load: 0.5 },
    ]);
  });

  it('drops unparseable timestamps and floors bad loads at 0', () => {
    expect(
      toSparklineData([
        { ts: 'not a time', load: 1 },
        { ts: '2026-11-21T00:00:00Z', load: -0.1 },
        { ts: '2026-11-21T00:24:00Z', load: Number.NaN },
      ]),
    ).toEqual([
      { t: T0, load: 0 },
      { t: T1, load: 0 },
    ]);
  });

  it('handles an empty series', () => {
    expect(toSparklineData([])).toEqual([]);
  });
});

describe('sparklineDomain / sparklinePeak', () => {
  const data = [
    { t: T0, load: 0.2 },
    { t: T1, load: 0.7 },
    { t: T1 + 1, load: 0.7 },
  ];

  it('starts at 0 and ends at the max', () => {
    expect(sparklineDomain(data)).toEqual([0, 0.7]);
  });

  it('uses [0, 1] for an all-zero or empty series', () => {
    expect(sparklineDomain([{ t: T0, load: 0 }])).toEqual([0, 1]);
    expect(sparklineDomain([])).toEqual([0, 1]);
  });

  it('finds the first highest point', () => {
    expect(sparklinePeak(data)).toEqual({ t: T1, load: 0.7 });
    expect(sparklinePeak([])).toBeUndefined();
  });
});

describe('toTopQueryViews', () => {
  const row = queryRow({
    query_id: '3A1F0C9E2B7D4C11',
    fingerprint: 'select * from t where id=?',
    count: 100,
    query_time: 12.5,
    load: 0.00014,
    share: 0.22,
    qps: 0.0012,
    sparkline: [{ ts: '2026-11-21T00:00:00Z', load: 0.0003 }],
  });

  it('ranks from the offset and computes the average', () => {
    const views = toTopQueryViews([row, { ...row, query_id: 'B', count: 0 }], 50);
    expect(views.map((view) => view.rank)).toEqual([51, 52]);
    expect(views[0]).toEqual({
      rank: 51,
      queryId: '3A1F0C9E2B7D4C11',
      fingerprint: 'select * from t where id=?',
      tables: [],
      count: 100,
      qps: 0.0012,
      queryTime: 12.5,
      avgTime: 0.125,
      p95Time: null,
      examinedPerSent: null,
      load: 0.00014,
      share: 0.22,
      flags: [],
      sparkline: [{ t: T0, load: 0.0003 }],
    });
    expect(views[1]?.avgTime).toBeNull();
  });

  it('prefers the API latency figures and derives rows examined per row sent', () => {
    const [view] = toTopQueryViews([
      {
        ...row,
        tables: ['shop.orders'],
        query_time_avg: 0.2,
        query_time_p95: 0.9,
        rows_examined: 5000,
        rows_sent: 50,
        flags: { full_scan: true, no_index_used: null, filesort: false, tmp_disk_tables: true },
      },
    ]);
    expect(view?.avgTime).toBe(0.2);
    expect(view?.p95Time).toBe(0.9);
    expect(view?.examinedPerSent).toEqual({ value: 100, per: 'row' });
    expect(view?.tables).toEqual(['shop.orders']);
    expect(view?.flags.map((flag) => flag.label)).toEqual(['full scan', 'tmp on disk']);
  });

  it('gives rows examined per call for a statement that sends no rows', () => {
    const [update] = toTopQueryViews([{ ...row, count: 4, rows_examined: 2000, rows_sent: 0 }]);
    expect(update?.examinedPerSent).toEqual({ value: 500, per: 'call' });
  });

  it('shapes the totals', () => {
    expect(
      toTotalsView({ count: 1234, query_time: 61.7, load: 0.00066, qps: 0.014, queries: 2 }),
    ).toEqual({
      count: 1234,
      qps: 0.014,
      queryTime: 61.7,
      avgTime: 0.05,
      examinedPerSent: null,
      load: 0.00066,
      queries: 2,
    });
  });
});

describe('sparklinePaths', () => {
  const domain = { fromMs: T0, toMs: T0 + 1000 };
  const box = { width: 100, height: 20 };

  it('scales time to the width and load to the height, floor at the bottom', () => {
    const { line, area } = sparklinePaths(
      [
        { t: T0, load: 0 },
        { t: T0 + 500, load: 2 },
        { t: T0 + 1000, load: 1 },
      ],
      domain,
      box,
    );
    expect(line).toBe('M0,20L50,0L100,10');
    expect(area).toBe('M0,20L50,0L100,10L100,20L0,20Z');
  });

  it('draws nothing for fewer than two points', () => {
    expect(sparklinePaths([{ t: T0, load: 1 }], domain, box)).toEqual({ line: '', area: '' });
  });
});
