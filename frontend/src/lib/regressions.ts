// Shaping regressions for the Regressions page and the query's charts.
import type { Regression } from '../api/types';
import { formatDuration, formatLoad } from './format';
import type { Marker } from './markers';
import { serializeDetail, type DetailTab } from './viewState';

/** What the page lists: open (pending or open), resolved, or all. */
export type RegressionView = 'open' | 'resolved' | 'all';

/** The API's status filter for a view (undefined: every status). */
export function regressionStatusOf(
  view: RegressionView,
): ('pending' | 'open' | 'resolved')[] | undefined {
  if (view === 'open') return ['pending', 'open'];
  if (view === 'resolved') return ['resolved'];
  return undefined;
}

const METRIC_NAMES: Record<string, string> = {
  avg_latency: 'average latency',
  p95_latency: 'p95 latency',
  rows_examined_per_call: 'rows examined per call',
  load: 'load',
};

/** A metric's value as a person reads it: durations, rows, active sessions. */
export function metricValue(metric: string, value: number | null): string {
  if (value === null) return '–';
  if (metric === 'avg_latency' || metric === 'p95_latency') return formatDuration(value);
  if (metric === 'load') return `${formatLoad(value)} sessions`;
  return `${Math.round(value).toLocaleString('en-US')} rows`;
}

/** "average latency 0.2 ms → 35.1 ms (×175)": what got dearer, and how much. */
export function describeChange(
  metric: string,
  before: number | null,
  after: number | null,
): string {
  const name = METRIC_NAMES[metric] ?? metric;
  const ratio =
    before !== null && after !== null && before > 0 ? ` (×${formatRatio(after / before)})` : '';
  return `${name} ${metricValue(metric, before)} → ${metricValue(metric, after)}${ratio}`;
}

function formatRatio(ratio: number): string {
  return ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1);
}

/** The query's page on the regression's instance, over its baseline and what followed. */
export function queryLink(regression: Regression, tab: DetailTab = 'examples'): string {
  const to = regression.resolved_at ?? regression.window_end;
  const from = new Date(Date.parse(regression.since) - 3_600_000).toISOString();
  const search = serializeDetail({
    range: { kind: 'custom', from, to: new Date(Date.parse(to) + 3_600_000).toISOString() },
    instances: [regression.instance],
    tab,
  });
  return `/queries/${encodeURIComponent(regression.query_id)}?${search}`;
}

/** The annotations the cause was chosen from, as (id, text). */
export function causeAnnotations(regression: Regression): { id: number; text: string }[] {
  const found = regression.evidence.annotations;
  if (!Array.isArray(found)) return [];
  return found.flatMap((item: unknown) => {
    const { id, text } = (item ?? {}) as { id?: unknown; text?: unknown };
    return typeof id === 'number' && typeof text === 'string' ? [{ id, text }] : [];
  });
}

/** Each metric compared when it was found: before, after, p-value, slow minutes. */
export interface EvidenceRow {
  readonly metric: string;
  readonly change: string;
  readonly pValue: number | null;
  readonly slowMinutes: string;
  readonly regressed: boolean;
}

export function evidenceRows(regression: Regression): EvidenceRow[] {
  const metrics = regression.evidence.metrics;
  if (metrics === null || typeof metrics !== 'object') return [];
  return Object.entries(metrics as Record<string, Record<string, unknown>>).map(([name, m]) => {
    const num = (key: string) => (typeof m[key] === 'number' ? m[key] : null);
    return {
      metric: name,
      change: describeChange(name, num('before'), num('after')),
      pValue: num('p_value'),
      slowMinutes: `${num('slow_minutes') ?? 0} of ${num('minutes') ?? 0}`,
      regressed: m.large === true && m.significant === true && m.sustained === true,
    };
  });
}

/**
 * Markers where the regressions of a query started (a line at `since`), for the charts'
 * marker strip; those outside [fromMs, toMs] are left out. They open the Regressions page.
 */
export function regressionMarkers(
  regressions: readonly Regression[],
  fromMs: number,
  toMs: number,
): Marker[] {
  const span = toMs - fromMs;
  if (!(span > 0)) return [];
  return regressions.flatMap((regression) => {
    const start = Date.parse(regression.since);
    if (Number.isNaN(start) || start < fromMs || start > toMs) return [];
    const text = `Regression: ${describeChange(regression.metric, regression.before, regression.after)}`;
    return [
      {
        id: regression.id,
        kind: 'regression' as const,
        link: `/regressions?instance=${encodeURIComponent(regression.instance)}#regression-${regression.id}`,
        text,
        tags: [regression.status],
        start,
        end: null,
        left: ((start - fromMs) / span) * 100,
        width: 0,
        time: regression.since,
        endTime: null,
      },
    ];
  });
}
