// SQL highlighting for fingerprints and examples. A tiny tokenizer instead of a library:
// highlight.js or Prism with their SQL grammars add 20-40 kB of JavaScript for what is,
// in fingerprints, keywords, names, literals and `?` placeholders. It never fails: any
// character it does not know becomes a plain token, and joining the tokens gives back
// the input exactly.

export type SqlTokenKind =
  | 'keyword'
  | 'function'
  | 'string'
  | 'number'
  | 'placeholder'
  | 'identifier'
  | 'comment'
  | 'operator'
  | 'space'
  | 'text';

export interface SqlToken {
  readonly kind: SqlTokenKind;
  readonly text: string;
}

const KEYWORDS = new Set(
  `select from where and or not in is null like between exists as on join left right inner
  outer cross straight_join natural using group by order having limit offset union all distinct
  insert into values value replace update set delete truncate create alter drop table index
  view database schema if case when then else end asc desc with recursive for share lock
  mode call do handler load data infile show explain describe analyze begin commit rollback
  start transaction savepoint release interval duplicate key primary unique foreign references
  default ignore low_priority high_priority delayed quick sql_no_cache sql_calc_found_rows
  partition over window rows range true false div mod xor regexp rlike escape collate binary
  current_timestamp now`
    .split(/\s+/)
    .filter(Boolean),
);

// Order matters: comments and strings before operators, numbers before identifiers.
const TOKEN =
  /(\s+)|(--[^\n]*|#[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^'\\]|\\[\s\S]|'')*'?|"(?:[^"\\]|\\[\s\S]|"")*"?)|(`(?:[^`]|``)*`?)|(\?|:[A-Za-z_]\w*|%s)|(0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+)|([A-Za-z_$@][\w$@]*)|([<>!=]=?|<=>|:=|\|\||&&|[-+*/%&|^~,;.()[\]{}])/y;

/** The tokens of `sql`, in order; their texts concatenate to `sql`. */
export function tokenizeSql(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  TOKEN.lastIndex = 0;
  let index = 0;
  while (index < sql.length) {
    TOKEN.lastIndex = index;
    const match = TOKEN.exec(sql);
    if (match === null) {
      push(tokens, 'text', sql[index] ?? '');
      index += 1;
      continue;
    }
    const [whole, space, comment, string, quoted, placeholder, number, word] = match;
    let kind: SqlTokenKind = 'operator';
    if (space !== undefined) kind = 'space';
    else if (comment !== undefined) kind = 'comment';
    else if (string !== undefined) kind = 'string';
    else if (quoted !== undefined) kind = 'identifier';
    else if (placeholder !== undefined) kind = 'placeholder';
    else if (number !== undefined) kind = 'number';
    else if (word !== undefined) {
      if (KEYWORDS.has(word.toLowerCase())) kind = 'keyword';
      else if (sql[index + whole.length] === '(') kind = 'function';
      else kind = 'identifier';
    }
    push(tokens, kind, whole);
    index += whole.length;
  }
  return tokens;
}

function push(tokens: SqlToken[], kind: SqlTokenKind, text: string): void {
  const last = tokens[tokens.length - 1];
  // Merge runs of unknown characters so the DOM stays small.
  if (kind === 'text' && last?.kind === 'text') {
    tokens[tokens.length - 1] = { kind, text: last.text + text };
  } else {
    tokens.push({ kind, text });
  }
}

// A SELECT's column list, up to its top-level FROM (no parenthesis inside the list).
const SELECT_LIST = /^(\s*select\s+(?:distinct\s+)?)([^()]*?)(\s+from\s)/i;
/** Column lists longer than this are shown as "…" in one-line summaries. */
export const MAX_SELECT_LIST = 32;

/**
 * A query as a list shows it: a long SELECT column list becomes "…" so the tables and the
 * WHERE clause (what tells queries apart) fit; the full text stays in the title.
 *
 * compactSelectList("select id, name, email, created_at, status from t where id = ?")
 *   === "select … from t where id = ?"
 */
export function compactSelectList(sql: string, max: number = MAX_SELECT_LIST): string {
  const match = SELECT_LIST.exec(sql);
  if (!match || (match[2] ?? '').length <= max) return sql;
  return `${match[1]}…${match[3]}${sql.slice(match[0].length)}`;
}
