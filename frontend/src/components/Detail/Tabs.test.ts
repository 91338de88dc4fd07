import { describe, expect, it } from 'vitest';
import { qualifyTable, splitDocument } from './Tabs';

describe('qualifyTable', () => {
  it('adds the schema to a bare table name only', () => {
    expect(qualifyTable('orders', 'shop')).toBe('shop.orders');
    expect(qualifyTable('other.orders', 'shop')).toBe('other.orders');
    expect(qualifyTable('orders', undefined)).toBeUndefined();
  });
});

describe('splitDocument', () => {
  it('separates plain facts from lists and turns a keyed map into rows', () => {
    const { facts, lists } = splitDocument({
      engine: 'InnoDB',
      rows: 100,
      columns: { id: { type: 'int' }, amount: { type: 'int', nullable: true } },
      indexes: [{ name: 'PRIMARY', columns: ['id'] }],
    });
    expect(facts).toEqual([
      ['engine', 'InnoDB'],
      ['rows', 100],
    ]);
    expect(lists).toEqual([
      [
        'columns',
        [
          { name: 'id', type: 'int' },
          { name: 'amount', type: 'int', nullable: true },
        ],
      ],
      ['indexes', [{ name: 'PRIMARY', columns: ['id'] }]],
    ]);
  });
});
