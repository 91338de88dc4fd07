import { describe, expect, it } from 'vitest';
import type { ImpactMetric, ImpactQuery, ImpactVerdict } from '../api/types';
import {
  formatChange,
  isContextMetric,
  loadChange,
  sortImpact,
  verdictCounts,
  windowUsed,
} from './impact';

function metric(before: number | null, after: number | null, significant = false): ImpactMetric {
  const change = before === null || after === null ? null : after - before;
  return {
    before,
    after,
    change,
    change_pct: change === null || !before ? null : change / before,
    p_value: significant ? 0.001 : 0.6,
    significant,
  };
}

function query(id: string, verdict: ImpactVerdict, load: ImpactMetric): ImpactQuery {
  return {
    query_id: id,
    fingerprint: `select ${id}`,
    instance: null,
    status: verdict === 'improved' || verdict === 'regressed' ? 'changed' : verdict,
    verdict,
    metrics: { load },
  };
}

describe('sortImpact', () => {
  const queries = [
    query('A', 'unchanged', metric(0.1, 0.1)),
    query('B', 'improved', metric(0.9, 0.1, true)),
    query('C', 'regressed', metric(0.2, 0.5, true)),
    query('D', 'new', metric(null, 0.3)),
    query('E', 'gone', metric(0.3, null)),
  ];

  it('orders by absolute load change, regressions first on ties', () => {
    expect(sortImpact(queries).map((q) => q.query_id)).toEqual(['B', 'C', 'D', 'E', 'A']);
  });

  it('can leave the unchanged out', () => {
    expect(sortImpact(queries, { changedOnly: true }).map((q) => q.query_id)).toEqual([
      'B',
      'C',
      'D',
      'E',
    ]);
  });

  it('does not reorder its input', () => {
    sortImpact(queries);
    expect(queries[0]?.query_id).toBe('A');
  });

  it('uses the before/after difference when change is missing', () => {
    expect(loadChange(query('F', 'new', { ...metric(null, 0.3), change: null }))).toBeCloseTo(0.3);
    expect(loadChange({ ...query('G', 'unchanged', metric(1, 1)), metrics: {} })).toBe(0);
  });
});

describe('verdictCounts', () => {
  it('counts each verdict', () => {
    expect(
      verdictCounts([
        query('A', 'improved', metric(1, 0)),
        query('B', 'improved', metric(1, 0)),
        query('C', 'new', metric(null, 1)),
      ]),
    ).toEqual({ improved: 2, regressed: 0, unchanged: 0, new: 1, gone: 0, not_enough_data: 0 });
  });
});

describe('formatChange', () => {
  it.each<[ImpactMetric | undefined, string]>([
    [metric(100, 58), '−42%'],
    [metric(1, 1.031), '+3.1%'],
    [metric(1, 1), '0%'],
    [metric(0, 5), 'new'],
    [metric(null, null), '–'],
    [undefined, '–'],
  ])('formatChange(%j) = %s', (value, expected) => {
    expect(formatChange(value)).toBe(expected);
  });
});

describe('isContextMetric', () => {
  it('treats load and calls as context and per-call costs as the verdict', () => {
    expect(['load', 'count'].map(isContextMetric)).toEqual([true, true]);
    expect(['avg_latency', 'p95_latency', 'rows_examined_per_call'].map(isContextMetric)).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('windowUsed', () => {
  it.each<[number, string, string]>([
    [3600, '1h', '1 hour each side'],
    [180, '1h', '3 minutes each side (1h asked; the window after has not fully elapsed)'],
    [86400 * 7, '7d', '7 days each side'],
    [900, '15m', '15 minutes each side'],
  ])('%d s of %s: %s', (seconds, asked, text) => {
    expect(windowUsed(seconds, asked)).toBe(text);
  });
});
