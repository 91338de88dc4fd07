import { describe, expect, it } from 'vitest';
import { partText, snapshotFacts, snapshotSections } from './tableView';

// A snapshot as the API returns it for shop.orders (MariaDB, one secondary index).
const ORDERS = {
  engine: 'InnoDB',
  rows: 49875,
  data_length: 9977856,
  index_length: 1589248,
  columns: {
    id: { type: 'int(11)', nullable: false, distinct: 49875 },
    customer_id: { type: 'int(11)', nullable: false, distinct: 1003 },
    note: { type: 'varchar(40)', nullable: true },
  },
  primary_key: ['id'],
  primary_key_parts: [{ name: 'id', desc: false, sub_part: null, cardinality: 49875 }],
  indexes: [
    {
      name: 'idx_customer',
      columns: [
        { name: 'customer_id', desc: false, sub_part: null, cardinality: 1003 },
        { name: 'note', desc: true, sub_part: 10, cardinality: null },
      ],
      unique: false,
      type: 'btree',
      visible: true,
      comment: '',
    },
  ],
  functional_indexes: [],
};

describe('snapshotFacts', () => {
  it('labels the facts and gives them human units', () => {
    expect(snapshotFacts(ORDERS)).toEqual([
      { label: 'Engine', value: 'InnoDB' },
      { label: 'Rows (estimate)', value: '49,875' },
      { label: 'Data size', value: '9.5 MB' },
      { label: 'Index size', value: '1.5 MB' },
      { label: 'Primary key', value: 'id' },
    ]);
  });

  it('says when there is no primary key and when a size is unknown', () => {
    const facts = snapshotFacts({ rows: null, data_length: null, primary_key: [] });
    expect(facts).toEqual([
      { label: 'Rows (estimate)', value: '–' },
      { label: 'Data size', value: '–' },
      { label: 'Primary key', value: 'none' },
    ]);
  });
});

describe('snapshotSections', () => {
  it('titles the columns and indexes and writes index parts as in CREATE INDEX', () => {
    const [columns, indexes] = snapshotSections(ORDERS);
    expect(columns?.title).toBe('Columns');
    expect(columns?.rows[2]).toEqual({
      Column: 'note',
      Type: 'varchar(40)',
      Null: 'yes',
      'Distinct values (estimate)': '–',
    });
    expect(indexes?.title).toBe('Secondary indexes');
    expect(indexes?.rows).toEqual([
      {
        Index: 'idx_customer',
        Columns: 'customer_id, note(10) DESC',
        Unique: 'no',
        Type: 'BTREE',
        Visible: 'yes',
        Cardinality: '1,003, –',
      },
    ]);
  });

  it('says an empty list is empty, and leaves out functional indexes when there are none', () => {
    const sections = snapshotSections({ ...ORDERS, indexes: [] });
    expect(sections.map((section) => section.key)).toEqual(['columns', 'indexes']);
    expect(sections[1]?.rows).toEqual([]);
    expect(sections[1]?.empty).toBe('No secondary indexes.');
  });
});

describe('partText', () => {
  it.each([
    [{ name: 'a' }, 'a'],
    [{ name: 'a', sub_part: 12 }, 'a(12)'],
    [{ name: 'a', desc: true }, 'a DESC'],
  ])('%j -> %s', (part, text) => expect(partText(part)).toBe(text));
});
