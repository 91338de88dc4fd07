import { describe, expect, it } from 'vitest';
import type { IndexPlanList } from '../api/types';
import { ORDERS_PLAN } from './indexPlan.fixture';
import {
  indexShare,
  isNewerPlan,
  planTotals,
  reductionText,
  sandboxText,
  suggestionsPath,
  tableViews,
} from './indexPlan';

const LIST: IndexPlanList = {
  instance_id: 1,
  instance: 'db1',
  window_start: '2026-11-24T22:00:00Z',
  window_end: '2026-11-25T22:00:00Z',
  computed_at: '2026-11-25T22:00:00Z',
  plans: [
    ORDERS_PLAN,
    {
      ...ORDERS_PLAN,
      id: 8,
      table: 'shop.customers',
      ddl: '',
      adds: [],
      drops: [],
      validation: null,
    },
  ],
};

/** The item at ``i``, failing the test when there is none. */
function at<T>(items: readonly T[], i: number): T {
  const item = items[i];
  if (item === undefined) throw new Error(`no item ${i}`);
  return item;
}

describe('reductionText', () => {
  it.each([
    [6000, 2, '>99% fewer'],
    [100, 25, '75% fewer'],
    [100, 100, 'no fewer'],
    [100, 150, 'more rows'],
    [null, 2, null],
    [100, null, null],
  ])('%s -> %s', (before, after, expected) => {
    expect(reductionText(before, after)).toBe(expected);
  });
});

describe('tableViews', () => {
  it('shapes each table with its indexes, served queries heaviest first, and evidence', () => {
    const views = tableViews(LIST);
    const orders = at(views, 0);
    const customers = at(views, 1);
    expect(orders.table).toBe('shop.orders');
    expect(orders.share).toBe('60%');
    expect(orders.rows).toBe('120,000/s → 40/s');
    expect(orders.reduction).toBe('>99% fewer');
    expect(orders.writes).toBe('+2.5 index entries/s');
    expect(orders.sandbox).toBe('Checked on the sandbox 127.0.0.1:3307 (1,200 sample rows copied)');
    expect(orders.sandboxTone).toBe('ok');
    const index = at(orders.adds, 0);
    expect(index.columns).toBe('phone, created_at DESC');
    expect(index.share).toBe('60%');
    expect(index.width).toBe('28 bytes per row');
    expect(index.writes).toBe('2.5 entries/s');
    expect(index.verdictTone).toBe('ok');
    expect(index.served.map((s) => s.queryId)).toEqual(['A', 'B']);
    const a = at(index.served, 0);
    const b = at(index.served, 1);
    expect([a.share, a.calls, a.measured, a.before, a.after]).toEqual([
      '40%',
      '1,234',
      '6,000',
      '6,000',
      '2',
    ]);
    // A's figures are the measured rows; B's are the estimates, and say so.
    expect([a.basis, a.estimate, b.basis, b.estimate]).toEqual([
      'measured',
      '100,000 → 33',
      'estimated',
      null,
    ]);
    // The left-out suggestion links its query's Suggestions tab; its note is not repeated.
    const [leftOut] = orders.leftOut;
    expect(leftOut?.columns).toBe('status');
    expect(leftOut?.queries).toEqual([
      { queryId: 'D', link: suggestionsPath('D', 'db1'), inChat: true },
      { queryId: 'E', link: suggestionsPath('E', 'db1'), inChat: false },
    ]);
    expect(orders.notes).toEqual(['solver: optimal']);
    expect(a.sandbox).toBe('orders: ALL, 1,000 rows -> ref idx_orders_phone, 2 rows');
    expect(a.sandboxTone).toBe('ok');
    expect(b.sandbox).toBeNull();
    expect(orders.drops).toEqual([
      { name: 'idx_phone', reason: 'a left-most prefix of idx_orders_phone' },
    ]);
    expect(at(orders.unserved, 0).fromExample).toBe(false);
    expect(at(orders.unserved, 0).before).toBe('–');
    expect(customers.sandbox).toBe('Nothing to check: the table needs no change.');
  });

  it('says why an index was not checked', () => {
    const noSandbox = { ...ORDERS_PLAN, validation: null };
    const unchecked = {
      ...noSandbox,
      adds: noSandbox.adds.map((a) => ({ ...a, validation: 'not_checked' as const })),
    };
    const failed = { ...unchecked, validation: { error: 'cannot connect to the sandbox' } };
    const list = { ...LIST, plans: [unchecked, failed] };
    const views = tableViews(list);
    const none = at(views, 0);
    const broken = at(views, 1);
    expect(at(none.adds, 0).verdict).toBe('Not checked (no sandbox)');
    expect(none.sandbox).toBe('Not checked: the instance has no sandbox.');
    expect(at(broken.adds, 0).verdict).toBe('Not checked (sandbox failed)');
    expect(sandboxText(failed)).toEqual({
      text: 'Not checked: cannot connect to the sandbox',
      tone: 'not-ok',
    });
  });
});

describe('planTotals and indexShare', () => {
  it('counts tables to change, new, confirmed and dropped indexes', () => {
    expect(planTotals(LIST)).toEqual({
      tables: 2,
      tablesToChange: 1,
      newIndexes: 1,
      drops: 1,
      confirmed: 1,
    });
  });

  it('counts a query served twice once', () => {
    const index = at(ORDERS_PLAN.adds, 0);
    const twice = { ...index, served: [...index.served, at(index.served, 0)] };
    expect(indexShare(twice)).toBeCloseTo(0.6);
  });
});

describe('isNewerPlan', () => {
  it('waits for a plan computed after the one shown', () => {
    expect(isNewerPlan('2026-11-25T22:00:00Z', '2026-11-25T22:00:00Z')).toBe(false);
    expect(isNewerPlan('2026-11-25T22:05:00Z', '2026-11-25T22:00:00Z')).toBe(true);
    expect(isNewerPlan('2026-11-25T22:05:00Z', null)).toBe(true);
    expect(isNewerPlan(null, null)).toBe(false);
  });
});
