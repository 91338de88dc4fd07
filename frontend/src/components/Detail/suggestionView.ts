// Shaping one index suggestion for the Suggestions tab: what to show (the DDL only when there
// is an index to add), what a person may do (dismiss an open suggestion, restore a dismissed
// one), what it was merged into, and what the instance's workload index plan did with it,
// with a link to that plan (issue 41: one story across the tab, the plan and chat).
import type { Suggestion } from '../../api/types';
import { planPath, suggestionsPath } from '../../lib/indexPlan';

export interface MergedView {
  queryId: string;
  /** The query's Suggestions tab on the same instance. */
  link: string;
  ddl: string;
}

export interface SuggestionView {
  /** The DDL box: only for an index to add that nothing superseded. */
  showsSql: boolean;
  /** Dismiss for an open index suggestion; Restore for a dismissed one; else no button. */
  action: 'dismiss' | 'restore' | null;
  /** "no index" for advice that none helps, else add/replace. */
  actionLabel: string;
  mergedInto: MergedView | null;
  /** The plan's verdict in one sentence, or what to expect before there is a plan. */
  plan: string;
  planLink: string;
}

const INDEXED = new Set(['add', 'replace']);

export function suggestionView(suggestion: Suggestion): SuggestionView {
  const indexed = INDEXED.has(suggestion.action) && suggestion.ddl !== '';
  const open = suggestion.status === 'new';
  let action: SuggestionView['action'] = null;
  if (indexed && open) action = 'dismiss';
  else if (indexed && suggestion.status === 'dismissed') action = 'restore';
  const merged = suggestion.merged_into;
  return {
    showsSql: indexed && suggestion.status !== 'superseded',
    action,
    actionLabel: indexed ? suggestion.action : 'no index',
    mergedInto: merged
      ? {
          queryId: merged.query_id,
          link: suggestionsPath(merged.query_id, suggestion.instance),
          ddl: merged.ddl,
        }
      : null,
    plan: planText(suggestion, indexed),
    planLink: planPath(suggestion.instance_id),
  };
}

function planText(suggestion: Suggestion, indexed: boolean): string {
  if (suggestion.plan) return suggestion.plan.sentence;
  if (suggestion.merged_into) {
    return 'The index plan weighs the suggestion it was merged into.';
  }
  if (!indexed || suggestion.status !== 'new') return '';
  return 'Not in an index plan yet: the daily run (or “Compute again” on the plan) weighs it.';
}
