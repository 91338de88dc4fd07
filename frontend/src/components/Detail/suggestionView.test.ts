import { describe, expect, it } from 'vitest';
import type { Suggestion } from '../../api/types';
import { planPath, suggestionsPath } from '../../lib/indexPlan';
import { suggestionView } from './suggestionView';

function suggestion(changes: Partial<Suggestion> = {}): Suggestion {
  return {
    id: 7,
    query_id: 'AAAA000000000001',
    instance: 'db1',
    instance_id: 3,
    table: 'shop.orders',
    action: 'add',
    columns: [{ name: 'status', desc: false, rule: 'equality' }],
    ddl: 'ALTER TABLE shop.orders ADD INDEX idx_orders_status (status)',
    reason: 'The index finds the rows by status.',
    notes: [],
    redundant: [],
    status: 'new',
    content_hash: 'h',
    validation: null,
    merged_into: null,
    plan: null,
    created_at: '2026-11-26T10:00:00Z',
    updated_at: '2026-11-26T10:00:00Z',
    ...changes,
  };
}

describe('suggestionView', () => {
  it('shows an open index suggestion with its SQL, Dismiss and where its plan is', () => {
    const view = suggestionView(suggestion());
    expect(view.showsSql).toBe(true);
    expect(view.action).toBe('dismiss');
    expect(view.actionLabel).toBe('add');
    expect(view.planLink).toBe('/instances/3/index-plan');
    expect(view.plan).toBe(
      'Not in an index plan yet: the daily run (or “Compute again” on the plan) weighs it.',
    );
  });

  it('never shows an empty SQL box with Dismiss: advice of no index has neither', () => {
    for (const status of ['new', 'superseded']) {
      const view = suggestionView(
        suggestion({ action: 'none', ddl: '', columns: [], status, reason: 'Served.' }),
      );
      expect([view.showsSql, view.action, view.actionLabel, view.plan]).toEqual([
        false,
        null,
        'no index',
        '',
      ]);
    }
  });

  it('says what a superseded suggestion was merged into, with no SQL and no button', () => {
    const view = suggestionView(
      suggestion({
        status: 'superseded',
        merged_into: {
          id: 9,
          query_id: 'BBBB000000000002',
          ddl: 'ALTER TABLE shop.orders ADD INDEX idx_orders_status_created_at (status, created_at)',
        },
      }),
    );
    expect([view.showsSql, view.action]).toEqual([false, null]);
    expect(view.mergedInto?.queryId).toBe('BBBB000000000002');
    expect(view.mergedInto?.link).toBe(suggestionsPath('BBBB000000000002', 'db1'));
    expect(view.plan).toBe('The index plan weighs the suggestion it was merged into.');
  });

  it('gives the plan verdict of a suggestion chat already received, and a dismissed one Restore', () => {
    const sentence =
      'The index plan for shop.orders left this index out: it would save 0.02 rows examined/s.';
    const view = suggestionView(
      suggestion({
        status: 'dismissed',
        plan: {
          plan_id: 4,
          verdict: 'left_out',
          index: null,
          sentence,
          computed_at: '2026-11-26T11:00:00Z',
        },
      }),
    );
    expect([view.action, view.plan, view.planLink]).toEqual(['restore', sentence, planPath(3)]);
  });

  it('links a query Suggestions tab on its instance', () => {
    expect(suggestionsPath('AB CD', 'db1')).toMatch(/^\/queries\/AB%20CD\?/);
    expect(suggestionsPath('AB', 'db1')).toContain('tab=suggestions');
  });
});
