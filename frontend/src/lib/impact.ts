// Shaping the impact of an annotation for its table.
import type { ImpactMetric, ImpactQuery, ImpactVerdict } from '../api/types';

/** The size of a query's load change, for sorting; a missing one counts as no change. */
export function loadChange(query: ImpactQuery): number {
  const load = query.metrics.load;
  if (!load) return 0;
  if (load.change !== null && Number.isFinite(load.change)) return Math.abs(load.change);
  const before = load.before ?? 0;
  const after = load.after ?? 0;
  return Math.abs(after - before);
}

const VERDICT_ORDER: Record<ImpactVerdict, number> = {
  regressed: 0,
  new: 1,
  improved: 2,
  gone: 3,
  unchanged: 4,
  not_enough_data: 5,
};

/**
 * Queries by absolute load change, largest first; ties by verdict (regressions first),
 * then query_id so the order is stable. With `changedOnly`, unchanged ones are left out.
 */
export function sortImpact(
  queries: readonly ImpactQuery[],
  { changedOnly = false }: { changedOnly?: boolean } = {},
): ImpactQuery[] {
  return queries
    .filter(
      (query) =>
        !changedOnly || (query.verdict !== 'unchanged' && query.verdict !== 'not_enough_data'),
    )
    .sort(
      (a, b) =>
        loadChange(b) - loadChange(a) ||
        VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] ||
        a.query_id.localeCompare(b.query_id),
    );
}

/** Counts per verdict, for the summary line. */
export function verdictCounts(queries: readonly ImpactQuery[]): Record<ImpactVerdict, number> {
  const counts: Record<ImpactVerdict, number> = {
    improved: 0,
    regressed: 0,
    unchanged: 0,
    new: 0,
    gone: 0,
    not_enough_data: 0,
  };
  for (const query of queries) counts[query.verdict] += 1;
  return counts;
}

/**
 * A relative change as text: "−42%", "+3.1%", "new" when there was nothing before.
 * `change_pct` is a fraction of the value before (-0.42 means 42 % lower).
 */
export function formatChange(metric: ImpactMetric | undefined): string {
  if (!metric) return '–';
  const pct = metric.change_pct;
  if (pct === null || !Number.isFinite(pct)) {
    if ((metric.before ?? 0) === 0 && (metric.after ?? 0) > 0) return 'new';
    return '–';
  }
  if (pct === 0) return '0%';
  const magnitude = Math.abs(pct * 100);
  const digits = magnitude >= 10 ? 0 : 1;
  return `${pct > 0 ? '+' : '−'}${magnitude.toFixed(digits)}%`;
}

/**
 * Metrics shown as context, never coloured as better or worse: a change that makes a query
 * faster lets closed-loop clients call it more often, so its load and calls rise while its
 * cost per call (what the verdict is made of) falls.
 */
const CONTEXT_METRICS: readonly string[] = ['load', 'count'];

export function isContextMetric(name: string): boolean {
  return CONTEXT_METRICS.includes(name);
}

/**
 * The windows the impact really compared, as a person reads them: "15 minutes" (what was
 * elapsed after the change), with the window asked for when it was cut.
 */
export function windowUsed(windowSeconds: number, asked: string): string {
  const minutes = Math.round(windowSeconds / 60);
  const used =
    minutes % 1440 === 0
      ? `${minutes / 1440} ${minutes === 1440 ? 'day' : 'days'}`
      : minutes % 60 === 0
        ? `${minutes / 60} ${minutes === 60 ? 'hour' : 'hours'}`
        : `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
  const askedSeconds = parseWindowSeconds(asked);
  return askedSeconds !== null && askedSeconds > windowSeconds
    ? `${used} each side (${asked} asked; the window after has not fully elapsed)`
    : `${used} each side`;
}

function parseWindowSeconds(window: string): number | null {
  const match = /^(\d+)([mhdw])$/.exec(window.trim());
  if (!match) return null;
  const unit = { m: 60, h: 3600, d: 86400, w: 604800 }[match[2] as 'm' | 'h' | 'd' | 'w'];
  return Number(match[1]) * unit;
}
