// Shaping a query's detail for its metrics table and charts.
import type { MetricStat, SeriesPoint } from '../../api/types';

export interface ChartPoint {
  readonly t: number;
  readonly load: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly count: number;
  [key: string]: number | null;
}

/** Series points with numeric time, sorted; unparseable timestamps dropped. */
export function toChartPoints(series: readonly SeriesPoint[]): ChartPoint[] {
  return series
    .map((point) => ({
      t: Date.parse(point.ts),
      load: point.load,
      p50: point.p50 ?? null,
      p95: point.p95 ?? null,
      p99: point.p99 ?? null,
      count: point.count,
    }))
    .filter((point) => !Number.isNaN(point.t))
    .sort((a, b) => a.t - b.t);
}

const METRIC_LABELS: Record<string, string> = {
  count: 'Calls',
  query_time: 'Query time',
  lock_time: 'Lock time',
  rows_sent: 'Rows sent',
  rows_examined: 'Rows examined',
  rows_affected: 'Rows affected',
  bytes_sent: 'Bytes sent',
  tmp_tables: 'Temporary tables',
  tmp_disk_tables: 'Temporary tables on disk',
  filesort: 'Filesorts',
  filesort_on_disk: 'Filesorts on disk',
  full_scan: 'Full scans',
  full_join: 'Full joins',
  merge_passes: 'Merge passes',
  no_index_used: 'No index used',
  no_good_index_used: 'No good index used',
  errors: 'Errors',
  warnings: 'Warnings',
};

export function metricLabel(name: string): string {
  return METRIC_LABELS[name] ?? name.replace(/_/g, ' ');
}

/** The metrics worth a row: calls and query time first, then those with any value. */
export function visibleMetrics(metrics: readonly MetricStat[]): MetricStat[] {
  const first = ['count', 'query_time'];
  const head = first
    .map((name) => metrics.find((metric) => metric.name === name))
    .filter((metric): metric is MetricStat => metric !== undefined);
  const rest = metrics.filter(
    (metric) => !first.includes(metric.name) && metric.sum !== null && metric.sum !== 0,
  );
  return [...head, ...rest];
}

/**
 * Indices of points whose value has no non-null neighbour: a line cannot draw them, so
 * the chart marks them with a dot (one busy minute in a quiet day would be invisible).
 */
export function isolatedPoints(
  data: readonly Record<string, number | null>[],
  key: string,
): Set<number> {
  const present = (index: number) => {
    const value = data[index]?.[key];
    return value !== null && value !== undefined;
  };
  const isolated = new Set<number>();
  data.forEach((_, index) => {
    if (present(index) && !present(index - 1) && !present(index + 1)) isolated.add(index);
  });
  return isolated;
}
