// Shaping a table snapshot (information_schema and SHOW INDEX, as the API stores it) for
// the Tables tab: labelled facts in human units, and titled sections that say what is
// missing instead of an unlabelled "No rows.".
import { formatBytes, formatCount } from '../../lib/format';

export interface Fact {
  readonly label: string;
  readonly value: string;
}

export interface Section {
  readonly key: string;
  readonly title: string;
  /** What an empty section says, e.g. "No secondary indexes." */
  readonly empty: string;
  readonly columns: readonly string[];
  readonly rows: readonly Record<string, string>[];
}

type Doc = Record<string, unknown>;
type Part = { name?: unknown; desc?: unknown; sub_part?: unknown; cardinality?: unknown };

const asNumber = (value: unknown): number | null => (typeof value === 'number' ? value : null);
/** A scalar as text; anything else (an object the API never sends here) as the fallback. */
const text = (value: unknown, fallback: string): string =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : fallback;
const asList = (value: unknown): Doc[] =>
  Array.isArray(value) ? value.filter((item): item is Doc => typeof item === 'object') : [];
const count = (value: unknown): string => {
  const number = asNumber(value);
  return number === null ? '–' : formatCount(number);
};

/** "created_at(10) DESC": an index part as written in CREATE INDEX. */
export function partText(part: Part): string {
  const subPart = asNumber(part.sub_part);
  return `${text(part.name, '?')}${subPart !== null ? `(${subPart})` : ''}${part.desc ? ' DESC' : ''}`;
}

/** The table's facts: engine, estimated rows, data and index sizes, primary key. */
export function snapshotFacts(document: Doc): Fact[] {
  const facts: Fact[] = [];
  if (document.engine !== undefined)
    facts.push({ label: 'Engine', value: text(document.engine, '–') });
  if ('rows' in document) facts.push({ label: 'Rows (estimate)', value: count(document.rows) });
  if ('data_length' in document) {
    facts.push({ label: 'Data size', value: formatBytes(asNumber(document.data_length)) });
  }
  if ('index_length' in document) {
    facts.push({ label: 'Index size', value: formatBytes(asNumber(document.index_length)) });
  }
  if ('primary_key' in document) {
    const parts = asList(document.primary_key_parts);
    const names = Array.isArray(document.primary_key) ? document.primary_key.map(String) : [];
    const key = parts.length > 0 ? parts.map(partText).join(', ') : names.join(', ');
    facts.push({ label: 'Primary key', value: key || 'none' });
  }
  return facts;
}

function columnsSection(document: Doc): Section {
  const columns = document.columns;
  const entries =
    columns && typeof columns === 'object' && !Array.isArray(columns)
      ? Object.entries(columns as Record<string, Doc>)
      : [];
  return {
    key: 'columns',
    title: 'Columns',
    empty: 'No columns were read.',
    columns: ['Column', 'Type', 'Null', 'Distinct values (estimate)'],
    rows: entries.map(([name, column]) => ({
      Column: name,
      Type: text(column.type, '–'),
      Null: column.nullable ? 'yes' : 'no',
      'Distinct values (estimate)': 'distinct' in column ? count(column.distinct) : '–',
    })),
  };
}

function indexSection(key: string, title: string, empty: string, indexes: Doc[]): Section {
  return {
    key,
    title,
    empty,
    columns: ['Index', 'Columns', 'Unique', 'Type', 'Visible', 'Cardinality'],
    rows: indexes.map((index) => {
      const parts = asList(index.columns) as Part[];
      return {
        Index: text(index.name, '?'),
        Columns: parts.map(partText).join(', '),
        Unique: index.unique ? 'yes' : 'no',
        Type: text(index.type, '–').toUpperCase(),
        Visible: index.visible === false ? 'no (ignored)' : 'yes',
        Cardinality: parts.map((part) => count(part.cardinality)).join(', '),
      };
    }),
  };
}

/** The snapshot's lists as titled sections; functional indexes only when there are some. */
export function snapshotSections(document: Doc): Section[] {
  const sections = [
    columnsSection(document),
    indexSection('indexes', 'Secondary indexes', 'No secondary indexes.', asList(document.indexes)),
  ];
  const functional = asList(document.functional_indexes);
  if (functional.length > 0) {
    sections.push(indexSection('functional_indexes', 'Functional indexes', '', functional));
  }
  return sections;
}
