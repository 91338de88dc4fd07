// The index plan page's layout: the tables to change in full, the others on one line (a
// real workload weighs dozens of tables, most needing nothing; each listed in full made the
// page thousands of pixels tall).
import type { TableView } from './indexPlan';

export interface PlanLayout {
  /** Tables with an ALTER TABLE: shown in full, in the API's order. */
  readonly changed: TableView[];
  /** Tables that need nothing: folded into one line (their reasons one click away). */
  readonly unchanged: TableView[];
}

/** The tables to change, and those that need nothing, each in the API's order. */
export function planLayout(views: readonly TableView[]): PlanLayout {
  return {
    changed: views.filter((view) => view.ddl !== ''),
    unchanged: views.filter((view) => view.ddl === ''),
  };
}

/** Names shown on the folded line before "and N more". */
export const UNCHANGED_NAMES_SHOWN = 6;

/**
 * The folded line: "No change for 12 tables: shop.orders, shop.items, … and 6 more".
 */
export function unchangedLine(unchanged: readonly TableView[]): string {
  const names = unchanged.slice(0, UNCHANGED_NAMES_SHOWN).map((view) => view.table);
  const more = unchanged.length - names.length;
  const count = `${unchanged.length} table${unchanged.length === 1 ? '' : 's'}`;
  return `No change for ${count}: ${names.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
