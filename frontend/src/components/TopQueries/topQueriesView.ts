// Shapes the /queries response into what the table and its sparklines draw.
import type { GroupRow, QueryTotals, SparkPoint, TopQueries, TopQueryRow } from '../../api/types';
import { type ExaminedRatio, examinedPerSent } from '../../lib/format';

export interface SparklineDatum {
  /** Epoch milliseconds. */
  readonly t: number;
  readonly load: number;
}

export interface QueryFlag {
  readonly key: string;
  readonly label: string;
  readonly title: string;
}

export interface TopQueryView {
  readonly rank: number;
  readonly queryId: string;
  readonly fingerprint: string;
  readonly tables: readonly string[];
  readonly count: number;
  readonly qps: number;
  readonly queryTime: number;
  readonly avgTime: number | null;
  readonly p95Time: number | null;
  readonly examinedPerSent: ExaminedRatio | null;
  readonly load: number;
  readonly share: number;
  readonly flags: readonly QueryFlag[];
  readonly sparkline: readonly SparklineDatum[];
}

export interface TotalsView {
  readonly count: number;
  readonly qps: number;
  readonly queryTime: number;
  readonly avgTime: number | null;
  readonly examinedPerSent: ExaminedRatio | null;
  readonly load: number;
  readonly queries: number;
}

/** Mean time per call in seconds; null when there were no calls. */
export function averageTime(queryTime: number, count: number): number | null {
  return count > 0 && Number.isFinite(queryTime) ? queryTime / count : null;
}

/**
 * Sparkline points: numeric time, sorted, without unparseable timestamps; a missing or
 * negative load draws as 0 (the API fills gaps with 0 too).
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

/**
 * SVG path data of a sparkline in a width x height box over the time domain
 * [fromMs, toMs]: the line ("M..L..") and the area under it (closed on the floor).
 * Empty strings for fewer than two points.
 */
export function sparklinePaths(
  data: readonly SparklineDatum[],
  domain: { fromMs: number; toMs: number },
  box: { width: number; height: number },
): { line: string; area: string } {
  if (data.length < 2) return { line: '', area: '' };
  const [, max] = sparklineDomain(data);
  const span = domain.toMs - domain.fromMs || 1;
  const x = (t: number) => round(((t - domain.fromMs) / span) * box.width);
  const y = (load: number) => round(box.height - (load / max) * box.height);
  const points = data.map((datum) => `${x(datum.t)},${y(datum.load)}`);
  const line = `M${points.join('L')}`;
  const first = data[0] as SparklineDatum;
  const last = data[data.length - 1] as SparklineDatum;
  const area = `${line}L${x(last.t)},${box.height}L${x(first.t)},${box.height}Z`;
  return { line, area };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

const FLAG_LABELS: [keyof NonNullable<TopQueryRow['flags']>, string, string][] = [
  ['full_scan', 'full scan', 'Some executions read whole tables'],
  ['no_index_used', 'no index', 'Some executions used no index'],
  ['filesort', 'filesort', 'Some executions sorted rows outside an index'],
  ['tmp_disk_tables', 'tmp on disk', 'Some executions created temporary tables on disk'],
];

/** The flags that are set, in a fixed order; unknown (null) ones are left out. */
export function toFlags(flags: TopQueryRow['flags']): QueryFlag[] {
  if (!flags) return [];
  return FLAG_LABELS.filter(([key]) => flags[key] === true).map(([key, label, title]) => ({
    key,
    label,
    title,
  }));
}

/** Table rows ranked from `offset + 1` in the order the API sorted them. */
export function toTopQueryViews(rows: readonly TopQueryRow[], offset = 0): TopQueryView[] {
  return rows.map((row, index) => ({
    rank: offset + index + 1,
    queryId: row.query_id,
    fingerprint: row.fingerprint,
    tables: row.tables ?? [],
    count: row.count,
    qps: row.qps,
    queryTime: row.query_time,
    avgTime: row.query_time_avg ?? averageTime(row.query_time, row.count),
    p95Time: row.query_time_p95 ?? null,
    examinedPerSent: examinedPerSent(row.rows_examined, row.rows_sent, row.count),
    load: row.load,
    share: row.share,
    flags: toFlags(row.flags),
    sparkline: toSparklineData(row.sparkline),
  }));
}

export function toTotalsView(totals: QueryTotals): TotalsView {
  return {
    count: totals.count,
    qps: totals.qps,
    queryTime: totals.query_time,
    avgTime: totals.query_time_avg ?? averageTime(totals.query_time, totals.count),
    examinedPerSent: examinedPerSent(totals.rows_examined, totals.rows_sent, totals.count),
    load: totals.load,
    queries: totals.queries,
  };
}

/**
 * Rows of a grouped overview (one per schema, user, host or instance) in the same shape:
 * the value stands in for the fingerprint and is the row key.
 */
export function toGroupViews(groups: readonly GroupRow[], offset = 0): TopQueryView[] {
  return groups.map((group, index) => ({
    rank: offset + index + 1,
    queryId: group.value,
    fingerprint: group.value,
    tables: [],
    count: group.count,
    qps: group.qps,
    queryTime: group.query_time,
    avgTime: group.query_time_avg ?? averageTime(group.query_time, group.count),
    p95Time: group.query_time_p95 ?? null,
    examinedPerSent: examinedPerSent(group.rows_examined, group.rows_sent, group.count),
    load: group.load,
    share: group.share,
    flags: [],
    sparkline: toSparklineData(group.sparkline),
  }));
}

/** Whether the answer is grouped by a dimension rather than by query. */
export function isGrouped(data: Pick<TopQueries, 'group_by'>): boolean {
  return data.group_by !== undefined && data.group_by !== 'query';
}

/** The rows of an answer, grouped or not, ranked from `offset + 1`. */
export function toRowViews(data: TopQueries, offset = 0): TopQueryView[] {
  return isGrouped(data)
    ? toGroupViews(data.groups ?? [], offset)
    : toTopQueryViews(data.rows, offset);
}
