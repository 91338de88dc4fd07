// Shapes the /queries response into what the table and its sparklines draw.
import type { QueryTotals, SparkPoint, TopQueryRow } from '../../api/types';

export interface SparklineDatum {
  /** Epoch milliseconds. */
  readonly t: number;
  readonly load: number;
}

export interface TopQueryView {
  readonly rank: number;
  readonly queryId: string;
  readonly fingerprint: string;
  readonly count: number;
  readonly queryTime: number;
  readonly avgTime: number | null;
  readonly load: number;
  readonly share: number;
  readonly sparkline: readonly SparklineDatum[];
}

export interface TotalsView {
  readonly count: number;
  readonly queryTime: number;
  readonly avgTime: number | null;
  readonly load: number;
}

/** Mean time per call in seconds; null when there were no calls. */
export function averageTime(queryTime: number, count: number): number | null {
  return count > 0 && Number.isFinite(queryTime) ? queryTime / count : null;
}

/**
 * Sparkline points for Recharts: numeric time, sorted, without unparseable timestamps;
 * a missing or negative load draws as 0 (the API fills gaps with 0 too).
 */
export function toSparklineData(points: readonly SparkPoint[]): SparklineDatum[] {
  return points
    .map((point) => ({
      t: Date.parse(point.ts),
      load: Number.isFinite(point.load) && point.load > 0 ? point.load : 0,
    }))
    .filter((datum) => !Number.isNaN(datum.t))
    .sort((a, b) => a.t - b.t);
}

/**
 * Y domain of a sparkline: from 0, so a steady load is a high flat line rather than a
 * line through the middle; [0, 1] when everything is 0 so the line lies on the floor.
 */
export function sparklineDomain(data: readonly SparklineDatum[]): [number, number] {
  const max = data.reduce((acc, datum) => Math.max(acc, datum.load), 0);
  return [0, max > 0 ? max : 1];
}

/** The busiest point, the first one on ties. */
export function sparklinePeak(data: readonly SparklineDatum[]): SparklineDatum | undefined {
  return data.reduce<SparklineDatum | undefined>(
    (peak, datum) => (peak === undefined || datum.load > peak.load ? datum : peak),
    undefined,
  );
}

/** Table rows ranked from `offset + 1` in the order the API sorted them. */
export function toTopQueryViews(rows: readonly TopQueryRow[], offset = 0): TopQueryView[] {
  return rows.map((row, index) => ({
    rank: offset + index + 1,
    queryId: row.query_id,
    fingerprint: row.fingerprint,
    count: row.count,
    queryTime: row.query_time,
    avgTime: averageTime(row.query_time, row.count),
    load: row.load,
    share: row.share,
    sparkline: toSparklineData(row.sparkline),
  }));
}

export function toTotalsView(totals: QueryTotals): TotalsView {
  return {
    count: totals.count,
    queryTime: totals.query_time,
    avgTime: averageTime(totals.query_time, totals.count),
    load: totals.load,
  };
}
