import { describe, expect, it } from 'vitest';
import type { IndexReview } from '../api/types';
import {
  coverageLine,
  nextWorkloadSort,
  parseWorkload,
  queryHref,
  rangeParams,
  serializeWorkload,
  tableHref,
  tableIndexes,
  unusedCheckLine,
  userQueriesHref,
} from './workload';

const COLUMNS = ['table', 'rows_read', 'rows_changed'];

const REVIEW: IndexReview = {
  instance: 'db1',
  findings: [
    {
      table: 'shop.orders',
      index: 'idx_c',
      kind: 'unused',
      covered_by: null,
      ddl: 'ALTER TABLE shop.orders DROP INDEX idx_c',
      reason: 'idx_c was not read in 90 minutes of unbroken statistics.',
    },
  ],
  tables: [
    { table: 'shop.orders', statistics_since: '2026-11-28T10:00:00Z', unused_checked: true },
    { table: 'shop.items', statistics_since: null, unused_checked: false },
  ],
  indexes: [
    {
      table: 'shop.orders',
      index: 'primary',
      columns: ['id'],
      unique: true,
      reads: 3,
      last_read_at: '2026-11-28T11:00:00Z',
    },
    {
      table: 'shop.orders',
      index: 'idx_c',
      columns: ['c', 'd'],
      unique: false,
      reads: 0,
      last_read_at: null,
    },
    { table: 'shop.orders', index: '', columns: [], unique: false, reads: 40, last_read_at: null },
    {
      table: 'shop.items',
      index: 'primary',
      columns: ['sku'],
      unique: true,
      reads: null,
      last_read_at: null,
    },
  ],
  coverage: {
    source: 'userstat',
    first_seen: '2026-11-28T09:00:00Z',
    since: '2026-11-28T10:00:00Z',
    until: '2026-11-28T11:30:00Z',
    broken_at: '2026-11-28T10:00:00Z',
    break_reason: 'the server restarted, which reset its counters',
  },
  unused_after_minutes: 60,
};

describe('workload view state', () => {
  it('round-trips through the URL, defaults left out', () => {
    const state = parseWorkload('range=7d&sort=rows_changed&order=asc', COLUMNS, 'rows_read');
    expect(state).toEqual({
      range: { kind: 'preset', preset: '7d' },
      sort: 'rows_changed',
      order: 'asc',
    });
    expect(serializeWorkload(state, 'rows_read')).toBe('range=7d&sort=rows_changed&order=asc');
    const fallback = parseWorkload('sort=nope', COLUMNS, 'rows_read');
    expect(fallback.sort).toBe('rows_read');
    expect(serializeWorkload(fallback, 'rows_read')).toBe('');
  });

  it('sorts a new column largest first and flips the same one', () => {
    const state = parseWorkload('', COLUMNS, 'rows_read');
    expect(nextWorkloadSort(state, 'table')).toEqual({ sort: 'table', order: 'desc' });
    expect(nextWorkloadSort(state, 'rows_read')).toEqual({ order: 'asc' });
  });

  it('sends presets relative to now and custom ranges as given', () => {
    expect(rangeParams({ kind: 'preset', preset: '1h' })).toEqual({ from: 'now-1h' });
    expect(
      rangeParams({ kind: 'custom', from: '2026-11-28T10:00Z', to: '2026-11-28T11:00Z' }),
    ).toEqual({
      from: '2026-11-28T10:00Z',
      to: '2026-11-28T11:00Z',
    });
  });

  it("links tables, queries and an account's top queries", () => {
    expect(tableHref(3, 'shop.orders', 'range=7d')).toBe(
      '/instances/3/tables/shop.orders?range=7d',
    );
    expect(queryHref('ABC', 'db 1')).toBe('/queries/ABC?instance=db+1');
    expect(queryHref('ABC', 'db1', 'shop')).toBe('/queries/ABC?instance=db1&schema=shop');
    expect(userQueriesHref('db1', 'app')).toBe('/?instance=db1&user=app');
  });
});

describe('index review shaping', () => {
  it("lists a table's indexes with their reads and findings", () => {
    const views = tableIndexes(REVIEW, 'Shop.Orders');
    expect(views.map((v) => [v.label, v.columns, v.reads, v.finding?.kind ?? null])).toEqual([
      ['primary', 'id', 3, null],
      ['idx_c', 'c, d', 0, 'unused'],
      ['(no index: table scans)', '', 40, null],
    ]);
  });

  it('says how far the unused check has got and why the window restarted', () => {
    expect(unusedCheckLine(REVIEW)).toBe(
      'An index is called unused after 1 h of unbroken statistics; 1 h 30 min covered so far, 1 of 2 tables checked.',
    );
    expect(coverageLine(REVIEW.coverage)).toBe(
      'From userstat (TABLE_STATISTICS, INDEX_STATISTICS, USER_STATISTICS), received since ' +
        '2026-11-28 09:00 UTC, last 2026-11-28 11:30 UTC. Unbroken since 2026-11-28 10:00 UTC: ' +
        'the server restarted, which reset its counters.',
    );
    expect(coverageLine(null)).toBeNull();
    expect(unusedCheckLine({ ...REVIEW, coverage: null })).toBe(
      'No statistics yet: an index is called unused after 1 h of unbroken statistics.',
    );
  });
});
