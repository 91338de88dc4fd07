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
    .filter((query) => !changedOnly || query.verdict !== 'unchanged')
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
