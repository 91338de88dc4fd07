import { describe, expect, it } from 'vitest';
import type { IndexPlanList } from '../api/types';
import { tableViews } from './indexPlan';
import { ORDERS_PLAN } from './indexPlan.fixture';
import { planLayout, unchangedLine } from './indexPlanLayout';

function list(count: number): IndexPlanList {
  const unchanged = Array.from({ length: count }, (_, n) => ({
    ...ORDERS_PLAN,
    id: 100 + n,
    table: `shop.t${n}`,
    ddl: '',
    adds: [],
    drops: [],
  }));
  return {
    instance_id: 1,
    instance: 'db1',
    window_start: null,
    window_end: null,
    computed_at: '2026-11-25T22:00:00Z',
    plans: [unchanged[0]!, ORDERS_PLAN, ...unchanged.slice(1)],
  };
}

describe('planLayout', () => {
  it('keeps the tables to change in full and folds the others, each in order', () => {
    const layout = planLayout(tableViews(list(3)));
    expect(layout.changed.map((view) => view.table)).toEqual(['shop.orders']);
    expect(layout.unchanged.map((view) => view.table)).toEqual(['shop.t0', 'shop.t1', 'shop.t2']);
  });

  it('says the folded tables on one line, the first few by name', () => {
    expect(unchangedLine(planLayout(tableViews(list(1))).unchanged)).toBe(
      'No change for 1 table: shop.t0',
    );
    expect(unchangedLine(planLayout(tableViews(list(9))).unchanged)).toBe(
      'No change for 9 tables: shop.t0, shop.t1, shop.t2, shop.t3, shop.t4, shop.t5 and 3 more',
    );
  });
});
