// Shaping an instance's workload index plan for its page: pure functions over the API's
// response, tested on their own (see indexPlan.test.ts).
import type { IndexPlanList, PlannedIndex, ServedQuery, TablePlan } from '../api/types';
import { formatBytes, formatCount, formatRate, formatShare } from './format';
import { DEFAULT_SCOPE, serializeDetail } from './viewState';

export type Tone = 'ok' | 'not-ok' | 'muted';

export interface ServedView {
  queryId: string;
  fingerprint: string;
  share: string;
  calls: string;
  /** Measured rows examined per call over the window (slow log / performance_schema). */
  measured: string;
  /** Rows examined per call now and with the plan: the measured rows (cut by the estimated
   * saving) when the query's were measured, else the estimates. */
  before: string;
  after: string;
  basis: 'measured' | 'estimated';
  /** The advisor's estimates, shown beside measured figures: "100,000 → 2". */
  estimate: string | null;
  reduction: string | null;
  /** The sandbox's EXPLAIN comparison, or why this query was not checked. */
  sandbox: string | null;
  sandboxTone: Tone;
  fromExample: boolean;
}

export interface IndexView {
  name: string;
  definition: string;
  columns: string;
  share: string;
  width: string;
  writes: string;
  verdict: string;
  verdictTone: Tone;
  served: ServedView[];
}

export interface LeftOutView {
  name: string;
  columns: string;
  reason: string;
  /** The queries it was suggested for, each linked to its Suggestions tab, and whether chat
   * already received it for that query. */
  queries: { queryId: string; link: string; inChat: boolean }[];
}

export interface TableView {
  id: number;
  table: string;
  ddl: string;
  share: string;
  rows: string;
  reduction: string | null;
  writes: string;
  sandbox: string;
  sandboxTone: Tone;
  adds: IndexView[];
  drops: { name: string; reason: string }[];
  rejected: { name: string; definition: string; reason: string }[];
  unserved: ServedView[];
  leftOut: LeftOutView[];
  /** The plan's other notes (the left-out ones are ``leftOut``, with their links). */
  notes: string[];
}

export interface PlanTotals {
  tables: number;
  tablesToChange: number;
  newIndexes: number;
  drops: number;
  confirmed: number;
}

/** "93% fewer" from rows examined before and after; null when either is unknown. */
export function reductionText(before: number | null | undefined, after: number | null | undefined) {
  if (before === null || before === undefined || after === null || after === undefined) {
    return null;
  }
  if (before <= 0 || after >= before) return after > before ? 'more rows' : 'no fewer';
  const percent = (1 - after / before) * 100;
  return `${percent >= 99.5 ? '>99' : Math.round(percent)}% fewer`;
}

function rows(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : formatRate(value);
}

/** The Suggestions tab of a query on an instance. */
export function suggestionsPath(queryId: string, instance: string): string {
  const state = serializeDetail({ ...DEFAULT_SCOPE, instances: [instance], tab: 'suggestions' });
  return `/queries/${encodeURIComponent(queryId)}?${state}`;
}

/** The workload index plan page of an instance. */
export function planPath(instanceId: number): string {
  return `/instances/${instanceId}/index-plan`;
}

function servedView(query: ServedQuery): ServedView {
  const check = query.sandbox;
  let sandbox: string | null = null;
  let tone: Tone = 'muted';
  if (check?.error) sandbox = `Not checked: ${check.error}`;
  else if (check?.summary) {
    sandbox = check.summary;
    tone = check.improved ? 'ok' : check.worse ? 'not-ok' : 'muted';
  }
  return {
    queryId: query.query_id,
    fingerprint: query.fingerprint,
    share: formatShare(query.load_share),
    calls: formatCount(query.calls),
    measured: rows(query.rows_examined_per_call),
    before: rows(query.rows_before),
    after: rows(query.rows_after),
    basis: query.measured ? 'measured' : 'estimated',
    estimate: query.measured
      ? `${rows(query.estimated_before)} → ${rows(query.estimated_after)}`
      : null,
    reduction: reductionText(query.rows_before, query.rows_after),
    sandbox,
    sandboxTone: tone,
    fromExample: query.from_example,
  };
}

/** What the sandbox run said for the whole table: where it ran, or why it did not. */
export function sandboxText(plan: TablePlan): { text: string; tone: Tone } {
  const validation = plan.validation;
  if (!plan.ddl) return { text: 'Nothing to check: the table needs no change.', tone: 'muted' };
  if (!validation) {
    return { text: 'Not checked: the instance has no sandbox.', tone: 'muted' };
  }
  if (typeof validation.error === 'string') {
    return { text: `Not checked: ${validation.error}`, tone: 'not-ok' };
  }
  const samples = validation.sample_rows as Record<string, number> | undefined;
  const copied = samples ? Object.values(samples).reduce((a, b) => a + b, 0) : null;
  return {
    text:
      `Checked on the sandbox ${String(validation.sandbox)}` +
      (copied !== null ? ` (${formatCount(copied)} sample rows copied)` : ''),
    tone: 'ok',
  };
}

function verdict(index: PlannedIndex, plan: TablePlan): { text: string; tone: Tone } {
  if (index.validation === 'confirmed') {
    return { text: 'Confirmed: a served query’s plan uses it and got better', tone: 'ok' };
  }
  const validation = plan.validation;
  if (!validation) return { text: 'Not checked (no sandbox)', tone: 'muted' };
  if (typeof validation.error === 'string')
    return { text: 'Not checked (sandbox failed)', tone: 'muted' };
  return { text: 'Not checked (its queries have no usable example)', tone: 'muted' };
}

/** The share of load an index serves: each served query counted once. */
export function indexShare(index: PlannedIndex): number {
  const seen = new Map<string, number>();
  for (const query of index.served) seen.set(query.query_id, query.load_share);
  return Math.min(
    1,
    [...seen.values()].reduce((a, b) => a + b, 0),
  );
}

function indexView(index: PlannedIndex, plan: TablePlan): IndexView {
  const { text, tone } = verdict(index, plan);
  return {
    name: index.name,
    definition: index.definition,
    columns: index.columns.map((c) => c.name + (c.desc ? ' DESC' : '')).join(', '),
    share: formatShare(indexShare(index)),
    width: `${formatBytes(index.width_bytes)} per row`,
    writes: `${formatRate(index.entries_per_s)} entries/s`,
    verdict: text,
    verdictTone: tone,
    served: [...index.served]
      .sort((a, b) => b.load_share - a.load_share || a.query_id.localeCompare(b.query_id))
      .map(servedView),
  };
}

/** The suggestions the plan left out, each with the queries it was suggested for. */
function leftOutViews(plan: TablePlan, instance: string): LeftOutView[] {
  return plan.left_out.map((item) => ({
    name: item.name,
    columns: item.columns.join(', '),
    reason: item.reason,
    queries: item.query_ids.map((queryId) => ({
      queryId,
      link: suggestionsPath(queryId, instance),
      inChat: item.in_chat.includes(queryId),
    })),
  }));
}

/** One view per table, in the API's order (heaviest read cost first). */
export function tableViews(list: IndexPlanList): TableView[] {
  return list.plans.map((plan) => {
    const sandbox = sandboxText(plan);
    const leftOut = new Set(plan.left_out.map((item) => `Left out ${item.name} (`));
    return {
      id: plan.id,
      table: plan.table,
      ddl: plan.ddl,
      share: formatShare(plan.load_share),
      rows: `${formatRate(plan.rows_before_per_s)}/s → ${formatRate(plan.rows_after_per_s)}/s`,
      reduction: reductionText(plan.rows_before_per_s, plan.rows_after_per_s),
      writes: `+${formatRate(plan.write_entries_per_s)} index entries/s`,
      sandbox: sandbox.text,
      sandboxTone: sandbox.tone,
      adds: plan.adds.map((index) => indexView(index, plan)),
      drops: plan.drops.map((d) => ({ name: d.name, reason: d.reason })),
      rejected: plan.rejected,
      unserved: plan.unserved.map(servedView),
      leftOut: leftOutViews(plan, list.instance),
      notes: plan.notes.filter((note) => ![...leftOut].some((start) => note.startsWith(start))),
    };
  });
}

/** Counts for the page's summary line. */
export function planTotals(list: IndexPlanList): PlanTotals {
  const adds = list.plans.flatMap((p) => p.adds);
  return {
    tables: list.plans.length,
    tablesToChange: list.plans.filter((p) => p.ddl !== '').length,
    newIndexes: adds.length,
    drops: list.plans.reduce((n, p) => n + p.drops.length, 0),
    confirmed: adds.filter((a) => a.validation === 'confirmed').length,
  };
}

/** Whether a plan computed at ``computedAt`` is newer than the one shown when a run was asked. */
export function isNewerPlan(computedAt: string | null | undefined, since: string | null): boolean {
  if (!computedAt) return false;
  return since === null || Date.parse(computedAt) > Date.parse(since);
}
