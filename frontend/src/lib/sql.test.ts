import { describe, expect, it } from 'vitest';
import { compactSelectList, tokenizeSql } from './sql';

function kinds(sql: string): string[] {
  return tokenizeSql(sql)
    .filter((token) => token.kind !== 'space')
    .map((token) => `${token.kind}:${token.text}`);
}

describe('tokenizeSql', () => {
  it('classifies a fingerprint', () => {
    expect(kinds('select count(*) from `shop`.orders where id in(?+) and a = ?')).toEqual([
      'keyword:select',
      'function:count',
      'operator:(',
      'operator:*',
      'operator:)',
      'keyword:from',
      'identifier:`shop`',
      'operator:.',
      'identifier:orders',
      'keyword:where',
      'identifier:id',
      'keyword:in',
      'operator:(',
      'placeholder:?',
      'operator:+',
      'operator:)',
      'keyword:and',
      'identifier:a',
      'operator:=',
      'placeholder:?',
    ]);
  });

  it('knows strings, numbers and comments', () => {
    expect(kinds("SELECT 'it''s', 1.5e3, 0x1F -- done")).toEqual([
      'keyword:SELECT',
      "string:'it''s'",
      'operator:,',
      'number:1.5e3',
      'operator:,',
      'number:0x1F',
      'comment:-- done',
    ]);
  });

  it.each([
    'select * from t where a = ?',
    "insert into t values ('unterminated",
    'select /* open comment',
    'SELECT ☃, `x` FROM «t»\n\tWHERE b <=> NULL;',
    '',
  ])('gives back the input exactly: %j', (sql) => {
    expect(
      tokenizeSql(sql)
        .map((token) => token.text)
        .join(''),
    ).toBe(sql);
  });
});

describe('compactSelectList', () => {
  it.each([
    [
      'select id, name, email, created_at, status, amount from shop.customers where email = ?',
      'select … from shop.customers where email = ?',
    ],
    [
      'SELECT DISTINCT customer_id, order_id, created_at, status FROM orders WHERE status = ?',
      'SELECT DISTINCT … FROM orders WHERE status = ?',
    ],
    // Short lists, functions and subqueries in the list, and other statements stay whole.
    [
      'select id, amount from orders where customer_id = ?',
      'select id, amount from orders where customer_id = ?',
    ],
    [
      'select count(*), sum(amount), max(created_at), min(created_at) from orders where a = ?',
      'select count(*), sum(amount), max(created_at), min(created_at) from orders where a = ?',
    ],
    ['update orders set status = ? where id = ?', 'update orders set status = ? where id = ?'],
  ])('%s', (sql, shown) => expect(compactSelectList(sql)).toBe(shown));
});
