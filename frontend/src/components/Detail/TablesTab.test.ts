import { describe, expect, it } from 'vitest';
import { qualifyTable } from './TablesTab';

describe('qualifyTable', () => {
  it('adds the schema to a bare table name only', () => {
    expect(qualifyTable('orders', 'shop')).toBe('shop.orders');
    expect(qualifyTable('other.orders', 'shop')).toBe('other.orders');
    expect(qualifyTable('orders', undefined)).toBeUndefined();
  });
});
