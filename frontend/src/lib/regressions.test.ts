import { describe, expect, it } from 'vitest';
import type { Regression } from '../api/types';
import {
  causeAnnotations,
  describeChange,
  evidenceRows,
  queryLink,
  regressionMarkers,
  regressionStatusOf,
} from './regressions';

function regression(overrides: Partial<Regression> = {}): Regression {
  return {
    id: 7,
    instance: 'shop',
    query_id: 'C377A9B68536096A',
    fingerprint: 'select id, amount from orders where phone=?',
    kind: 'regression',
    metric: 'avg_latency',
    before: 0.0002,
    after: 0.035,
    since: '2026-11-28T13:46:00Z',
    detected_at: '2026-11-28T13:47:05Z',
    window_start: '2026-11-28T13:46:00Z',
    window_end: '2026-11-28T13:47:00Z',
    baseline_start: '2026-11-28T11:46:00Z',
    baseline_end: '2026-11-28T13:46:00Z',
    seasonal: false,
    load: 0.3,
    load_share: 0.9,
    cause: '“drop index idx_phone on orders” ran at 13:46:01 UTC on a table it reads.',
    status: 'open',
    announced_at: '2026-11-28T13:47:10Z',
    resolved_at: null,
    explain_run_id: 3,
    evidence: {
      metrics: {
        avg_latency: {
          before: 0.0002,
          after: 0.035,
          p_value: 0.008,
          slow_minutes: 1,
          minutes: 1,
          large: true,
          significant: true,
          sustained: true,
        },
      },
      annotations: [{ id: 4, text: 'deploy v42', time: '2026-11-28T13:40:00Z' }, { bad: 1 }],
    },
    resolution: null,
    ...overrides,
  };
}

describe('describeChange', () => {
  it.each<[string, number | null, number | null, string]>([
    ['avg_latency', 0.0002, 0.035, 'average latency 200 µs → 35 ms (×175)'],
    ['rows_examined_per_call', 3, 187638, 'rows examined per call 3 rows → 187,638 rows (×62546)'],
    ['p95_latency', null, 0.5, 'p95 latency – → 500 ms'],
  ])('%s %s → %s', (metric, before, after, text) => {
    expect(describeChange(metric, before, after)).toBe(text);
  });
});

describe('regressions', () => {
  it('maps views to statuses', () => {
    expect(regressionStatusOf('open')).toEqual(['pending', 'open']);
    expect(regressionStatusOf('resolved')).toEqual(['resolved']);
    expect(regressionStatusOf('all')).toBeUndefined();
  });

  it('links to the query on its instance around the regression', () => {
    const link = queryLink(regression(), 'explain');
    expect(link.startsWith('/queries/C377A9B68536096A?')).toBe(true);
    const params = new URLSearchParams(link.split('?')[1]);
    expect(params.get('instance')).toBe('shop');
    expect(params.get('tab')).toBe('explain');
  });

  it('reads the annotations and the evidence it stored, skipping what it cannot read', () => {
    expect(causeAnnotations(regression())).toEqual([{ id: 4, text: 'deploy v42' }]);
    expect(evidenceRows(regression())).toEqual([
      {
        metric: 'avg_latency',
        change: 'average latency 200 µs → 35 ms (×175)',
        pValue: 0.008,
        slowMinutes: '1 of 1',
        regressed: true,
      },
    ]);
  });

  it('marks where each regression started, inside the chart only', () => {
    const from = Date.parse('2026-11-28T13:00:00Z');
    const to = Date.parse('2026-11-28T14:00:00Z');
    const [marker] = regressionMarkers([regression()], from, to);
    expect(marker).toMatchObject({
      id: 7,
      kind: 'regression',
      link: '/regressions?instance=shop#regression-7',
      end: null,
      width: 0,
    });
    expect(marker?.left).toBeCloseTo(76.67, 1);
    expect(regressionMarkers([regression()], to, to + 3_600_000)).toEqual([]);
  });
});
