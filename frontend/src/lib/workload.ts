// The workload pages (Tables, a table, Users, Index review): their view state in the URL
// (range, sort column, order) and the pure shaping of the API's answers for them.

import type {
  IndexFinding,
  IndexReview,
  IndexUsage,
  StatisticsCoverage,
  WorkloadRange,
} from '../api/types';
import { formatDuration, formatInstant } from './format';
import {
  DEFAULT_OVERVIEW,
  DEFAULT_SCOPE,
  type RangeState,
  type SortOrder,
  parseRange,
  serializeDetail,
  serializeOverview,
  writeRange,
} from './viewState';

export interface WorkloadState {
  readonly range: RangeState;
  /** A column id of the page's table. */
  readonly sort: string;
  readonly order: SortOrder;
}

/** The state in a query string; an unknown sort column falls back to the page's default. */
export function parseWorkload(
  search: string,
  columns: readonly string[],
  defaultSort: string,
): WorkloadState {
  const params = new URLSearchParams(search);
  const sort = params.get('sort');
  return {
    range: parseRange(params),
    sort: sort !== null && columns.includes(sort) ? sort : defaultSort,
    order: params.get('order') === 'asc' ? 'asc' : 'desc',
  };
}

/** The query string (without `?`) of a state; defaults left out, so equal states give equal URLs. */
export function serializeWorkload(state: WorkloadState, defaultSort: string): string {
  const params = new URLSearchParams();
  writeRange(params, state.range);
  if (state.sort !== defaultSort) params.set('sort', state.sort);
  if (state.order !== 'desc') params.set('order', state.order);
  return params.toString();
}

/** A header click: a new column sorts descending (largest first), the same one flips. */
export function nextWorkloadSort(state: WorkloadState, column: string): Partial<WorkloadState> {
  if (state.sort !== column) return { sort: column, order: 'desc' };
  return { order: state.order === 'desc' ? 'asc' : 'desc' };
}

/** The API's from/to of a range: presets relative to now, so a refresh reads "now" again. */
export function rangeParams(range: RangeState): WorkloadRange {
  if (range.kind === 'preset') return { from: `now-${range.preset}` };
  return range.to === undefined ? { from: range.from } : { from: range.from, to: range.to };
}

/** A table's page. */
export function tableHref(instanceId: number, table: string, search = ''): string {
  const path = `/instances/${instanceId}/tables/${encodeURIComponent(table)}`;
  return search ? `${path}?${search}` : path;
}

/** A query's detail on one instance (in one schema: where it names tables without one). */
export function queryHref(queryId: string, instance: string, schema?: string | null): string {
  const search = serializeDetail({
    ...DEFAULT_SCOPE,
    instances: [instance],
    ...(schema ? { schema } : {}),
    tab: 'examples',
  });
  return `/queries/${encodeURIComponent(queryId)}${search ? `?${search}` : ''}`;
}

/** The overview filtered to one account on one instance: its top queries. */
export function userQueriesHref(instance: string, user: string): string {
  return `/?${serializeOverview({ ...DEFAULT_OVERVIEW, instances: [instance], user })}`;
}

const SOURCES: Record<string, string> = {
  userstat: 'userstat (TABLE_STATISTICS, INDEX_STATISTICS, USER_STATISTICS)',
  perfschema: 'performance_schema table I/O',
};

/**
 * Where the figures come from and since when, in a sentence, with the last break of the
 * window unless `withBreak` is false; null without statistics.
 */
export function coverageLine(
  coverage: StatisticsCoverage | null | undefined,
  withBreak = true,
): string | null {
  if (!coverage) return null;
  const source = SOURCES[coverage.source] ?? coverage.source;
  let line = `From ${source}, received since ${formatInstant(coverage.first_seen)} UTC, last ${formatInstant(coverage.until)} UTC.`;
  if (coverage.broken_at && withBreak) {
    line += ` Unbroken since ${formatInstant(coverage.since)} UTC: ${coverage.break_reason ?? 'the window restarted'}.`;
  }
  return line;
}

/** How far the unused check has got: the window it needs and what is covered so far. */
export function unusedCheckLine(review: IndexReview): string {
  const needed = formatDuration(review.unused_after_minutes * 60);
  const checked = review.tables.filter((table) => table.unused_checked).length;
  const coverage = review.coverage;
  if (!coverage) {
    return `No statistics yet: an index is called unused after ${needed} of unbroken statistics.`;
  }
  const covered = (Date.parse(coverage.until) - Date.parse(coverage.since)) / 1000;
  return (
    `An index is called unused after ${needed} of unbroken statistics; ` +
    `${formatDuration(Math.max(covered, 0))} covered so far, ` +
    `${checked} of ${review.tables.length} tables checked.`
  );
}

export const FINDING_LABELS: Record<IndexFinding['kind'], string> = {
  duplicate: 'Duplicate',
  redundant: 'Redundant',
  primary_key_suffix: 'Primary key suffix',
  unused: 'Unused',
};

/** One index of a table as its page lists it: reads in the range and what the review says. */
export interface IndexView {
  readonly name: string;
  readonly label: string;
  readonly columns: string;
  readonly unique: boolean;
  readonly reads: number | null;
  readonly lastReadAt: string | null;
  readonly finding: IndexFinding | null;
}

/**
 * A table's indexes (primary key first, then as the snapshot lists them, then the reads that
 * used no index), each with its finding. The table name is matched case-insensitively: the
 * review names tables in lower case.
 */
export function tableIndexes(review: IndexReview, table: string): IndexView[] {
  const name = table.toLowerCase();
  const findings = new Map(
    review.findings.filter((f) => f.table === name).map((f) => [f.index, f] as const),
  );
  return (review.indexes ?? [])
    .filter((index: IndexUsage) => index.table === name)
    .map((index) => ({
      name: index.index,
      label: index.index === '' ? '(no index: table scans)' : index.index,
      columns: index.columns.join(', '),
      unique: index.unique,
      reads: index.reads ?? null,
      lastReadAt: index.last_read_at ?? null,
      finding: findings.get(index.index) ?? null,
    }));
}

/** The review's view of one table: is its unused check done, and since when it counts. */
export function reviewedTable(review: IndexReview, table: string) {
  return review.tables.find((t) => t.table === table.toLowerCase()) ?? null;
}
