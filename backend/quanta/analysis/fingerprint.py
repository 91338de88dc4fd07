"""Query fingerprints: one normalised text per query shape, and the query_id derived from it.

The rules start from pt-query-digest's so that users moving from it see the groups they know,
and fix what its regexes get wrong. The same function accepts slow-log SQL and
performance_schema ``DIGEST_TEXT`` and gives both the same fingerprint.

Normalisation, one token at a time (a single ``re.findall`` pass, then one loop):

* Comments leave no trace: ``/* ... */`` (optimizer hints ``/*+ ... */`` too), ``# ...`` and
  ``-- ...``. Executable comments ``/*!50100 ... */`` and ``/*M! ... */`` keep their content,
  as the server runs it.
* Literals become ``?``: numbers (with a unary sign, decimals, exponents), strings (doubled
  quotes, backslash escapes, ``x'..'``, ``b'..'``, ``N'..'``, ``_utf8mb4'..'`` and
  ``_utf8mb4 '..'``), ``0x..``, ``0b..``, ``TRUE``, ``FALSE``, ``NULL`` (but ``IS [NOT] NULL``,
  ``IS [NOT] TRUE`` and ``IS [NOT] FALSE`` stay: they are tests, not values), ``?``
  placeholders. Adjacent strings (``'a' 'b'``) are one literal. A user variable's name is one
  too (``@x`` is ``@?``), because MariaDB's DIGEST_TEXT abstracts it.
* A comma-separated run of two or more literals becomes ``?, ...``, as DIGEST_TEXT writes it
  (``select ?, ...``, ``substring(b, ?, ...)``); a user variable may start the run, as in
  MariaDB's digest (``@a, 1`` is ``@?, ...``, but ``1, @a`` is ``?, @?``). ``IN (...)``
  becomes ``in(?+)`` and ``VALUES (...), (...)`` becomes ``values(?+)`` when the lists hold
  only literals; later rows of a multi-row VALUES are dropped whatever they hold, as
  pt-query-digest does.
* ``LIMIT n``, ``LIMIT a, b`` and ``LIMIT b OFFSET a`` become ``limit ?``.
* Lower case; identifiers keep their digits (``t1.id``, ``users_2009``); ``1e5abc`` is the
  number ``1e5`` and the alias ``abc``, as the server reads it (``1abc`` is a name).
* Backticks go where a name reads the same without them, and stay where it would not, so that
  a fingerprint is its own fingerprint (the agent ships fingerprints and the server
  fingerprints them again) and names the server keeps apart stay apart: a quoted name stays
  quoted when it is not made of letters, digits, ``_`` and ``$`` (```shop-prod```, ```a b```,
  ```db.t1``` unlike ``db.t1``, ```a``b``` with its inner backtick doubled, as DIGEST_TEXT
  writes it), when bare it would be a number (```123```, ```1e5```, ```0x1f```, ```1e5abc```),
  when it is a reserved word of MySQL 8.0 or MariaDB 10.11 (```left``` the alias is not
  ``LEFT`` the join) or a word this function rewrites (```null```, ```asc```, ```schema```,
  ```fields```), and, before ``(``, a ``+``/``-`` or a literal only, when it is a keyword
  that would steer a rule there (```mid`(a)`` is a stored function, ``mid(a)`` is
  ``substring``). Any other quoted name is written bare: ```orders``` and ``orders``, or
  ```value``` and ``value`` (a non-reserved keyword naming the same column), are one query.
  DIGEST_TEXT backticks every name and prints keywords bare, which gives the same result.
* ``ASC`` is dropped (it is the default); ``!=`` becomes ``<>``; keyword synonyms the server
  prints differently in DIGEST_TEXT are unified (``DISTINCTROW`` -> ``distinct``,
  ``SQL_TSI_DAY`` -> ``day``, ``CHARACTER`` -> ``char``, ``SCHEMA`` -> ``database``,
  ``REPLICA`` -> ``slave``, ...), also where such a keyword names a column, as the digest
  prints the keyword then too.
* Whole-statement forms, as pt-query-digest: ``call db.proc(...)`` -> ``call db.proc``,
  ``use db`` -> ``use ?``, ``administrator command: Quit`` is kept verbatim, a mysqldump
  ``SELECT /*!40001 SQL_NO_CACHE */ * FROM `t``` is ``mysqldump`` (and so is its DIGEST_TEXT
  ``SELECT SQL_NO_CACHE * FROM `t```, which cannot be told from an application's
  ``SELECT SQL_NO_CACHE * FROM t``: that one is ``mysqldump`` too, on every path), a
  percona-toolkit checksum query is ``percona-toolkit``; a UNION of one repeated SELECT is
  written ``select ... /*repeat union all*/`` (unless a name is in backticks).

Output spacing (the only spacing there is, so ``id=1`` and ``id = 1`` are one query):

* tokens are separated by one space, except:
* no space around comparison and assignment operators ``= <> < > <= >= <=> := -> ->>``:
  ``id=?``;
* no space before ``,`` ``)`` ``;``, one space after ``,``; no space after ``(``;
* no space around ``.`` (``db.t.col``, ``t.*``) and after ``@`` (``@@session.sql_mode``);
* a unary operator sticks to its operand (``-a``, ``~a``); other operators are spaced
  (``a + ?``, ``select * from``);
* ``(`` sticks to a preceding name or function-like keyword (``count(*)``, ``in(?+)``,
  ``values(?+)``, ``char(?)``) but not to clause keywords (``in (select``, ``exists (``,
  ``from (``, ``and (``) nor to a table name after ``into``/``table``/``references``/
  ``exists`` (``insert into t (a, b) values(?+)``).

A DIGEST_TEXT cut short: the server keeps ``performance_schema_max_digest_length`` bytes of
tokens (``max_digest_length`` for the digest itself; both 1024 by default). MariaDB and MySQL
5.7+ end the text after the last token that fitted, with no mark; MySQL 5.6 appends ``...``.
Either way the fingerprint is that of the prefix, and a trailing ``...`` that does not continue
a list of values stays as the mark `` ...`` (``where c=? and ...``), never a value; an open
``(`` stays open. So every statement the server merged under that digest (it hashes only the
tokens it kept) gets one query_id, stable from poll to poll, which is deliberately not the
query_id of any complete statement: a prefix cannot tell which statement it was. Raise both
variables when DIGEST_TEXTs end mid-statement.

Known differences between the two sources that no fingerprint can bridge: the slow log writes
what ``EXECUTE stmt USING ...`` ran, with its values, where the digest is of the EXECUTE; a
statement with a syntax error has no DIGEST_TEXT; a bare column named ``system_user`` reads
as the keyword ``USER`` here (the digest prints ``USER`` as ``SYSTEM_USER``); ``0XFF`` (an
upper-case ``X``) is read as a hex literal although the server takes it for a name; a
percona-toolkit checksum query is recognised by its ``/*db.tbl:1/5*/`` comment, which
DIGEST_TEXT does not keep, so performance_schema gives it the fingerprint of its text (taking
the text alone for a checksum query would merge ordinary statements); mysqldump with
``--where`` is ``mysqldump`` in the slow log (its prefix) but has a WHERE in DIGEST_TEXT.

A fingerprint is its own fingerprint. Where pt-query-digest (3.x) groups differently: it keeps
whatever spacing, backticks, ``!=`` and keyword spelling the client sent, reads ``'a''b'`` as
two literals and ``a-1`` as ``a?``, so it splits what is merged here. The other way round,
it turns digits in names into ``?`` (``t1`` -> ``t?``) unless run with
``--preserve-embedded-numbers``, drops an ``ON DUPLICATE KEY UPDATE`` that follows several
VALUES rows, and writes ``IS NULL`` as ``is ?`` (one group with ``IS TRUE``); those groups are
split here.

Example:
    >>> fingerprint("SELECT * FROM `Orders` WHERE id = 42 AND status IN ('a', 'b') LIMIT 10")
    'select * from orders where id=? and status in(?+) limit ?'
    >>> query_id("select * from orders where id=?")
    '81CF91BA4C2E30D9'
"""

from __future__ import annotations

import hashlib
import re

from quanta.analysis.sqltext import quote_ident, unquote_ident
from quanta.analysis.sqltext.spec import (
    BLOCK_COMMENT_PATTERN,
    DASH_COMMENT_PATTERN,
    EXECUTABLE_OPENER_PATTERN,
    HASH_COMMENT_PATTERN,
    CommentKind,
    block_comment_kind,
    quoted_pattern,
)

__all__ = ["edge_comments", "fingerprint", "query_id", "quote_name"]

# Strings, quoted names and comments by the rules of quanta.analysis.sqltext.spec (lenient:
# an unclosed one runs to the end); tests/analysis/test_sqltext.py checks on the corpora that
# this expression finds the spans sqltext's own scan does.
_SINGLE = quoted_pattern("'", escapes=True, closed=False)
_DOUBLE = quoted_pattern('"', escapes=True, closed=False)
_BACKTICK = quoted_pattern("`", escapes=False, closed=False)
# One alternative per token class, the most frequent first; possessive quantifiers because a
# token never needs to give characters back. The leading \s*+ skips whitespace inside the one
# match instead of failing every alternative at each blank. The input is lower-cased first.
_TOKEN_RE = re.compile(
    rf"""\s*+(
      (?:[xbn]|_[a-z0-9_]*+){_SINGLE}                     # x'..' b'..' n'..' _utf8'..'
    | _[a-z0-9_]*+{_DOUBLE}                               # _utf8".."
    | [^\W\d][\w$]*+                                             # word: keyword or identifier
    | \(_charset\) | \(unknown\)            # DIGEST_TEXT's introducer and MariaDB's x'..'
    | [(),=]
    | {_SINGLE}                                           # string
    | \d++(?:e[+-]?\d++|(?![\w$])(?:\.\d*+)?+(?:e[+-]?\d++)?+)     # number (1e5abc: 1e5, abc)
    | \d[\w$]*+                                                  # or a name like 1abc
    | {_BACKTICK}                                         # quoted identifier
    | {_DOUBLE}                                           # string (default sql_mode)
    | (?<![\w$`])\.\d++(?:e[+-]?\d++)?+ | \.(?:\.\.)?+           # .5 (not t1.2x); . and ...
    | {EXECUTABLE_OPENER_PATTERN}                         # an executable comment's opener
    | {BLOCK_COMMENT_PATTERN}                             # comment or hint
    | {HASH_COMMENT_PATTERN} | {DASH_COMMENT_PATTERN}     # line comments
    | \*/                                                # an executable comment's closer
    | <=> | <> | != | <= | >= | << | >> | := | \|\| | && | ->> | -> | \$[\w$]*+
    | \?\+(?=\))                        # '(?+)' of a fingerprint, so that fingerprints are fixed
    | \S
    )""",
    re.VERBOSE | re.DOTALL,
)
_PLAIN_NAME_RE = re.compile(r"[a-z_$][a-z0-9_$]*")
_BARE_NAME_RE = re.compile(r"[\w$]+")
_NAME_END_RE = re.compile(r"[\w$`]")
_NUMBER_RE = re.compile(r"\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|0x[0-9a-f]+|0b[01]+")
# A percona-toolkit checksum query carries this comment; its fingerprint is "percona-toolkit".
PT_CHECKSUM_RE = re.compile(r"/\*\w+\.\w+:[0-9]/[0-9]\*/")
_UNION_RE = re.compile(r"\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+")
_MYSQLDUMP_PREFIX = "SELECT /*!40001 SQL_NO_CACHE */ * FROM `"
_MYSQLDUMP_TOKENS = ["select", "sql_no_cache", "*", "from"]
_ADMIN_PREFIX = "administrator command: "
_WHOLE_STATEMENT_FINGERPRINTS = frozenset(("mysqldump", "percona-toolkit"))

# Token kinds of the normalised output.
_WORD = 0  # bare word: a keyword or an unquoted identifier
_NAME = 1  # quoted (or digit-led) identifier: never a keyword
_LIT = 2  # one literal: '?'
_LIST = 3  # two or more comma-separated literals: '?, ...'
_OPEN = 4
_CLOSE = 5
_COMMA = 6
_DOT = 7
_CMP = 8  # comparison / assignment: no spaces around
_OP = 9  # binary operator: spaced
_UNARY = 10  # unary operator: sticks to its operand
_AT = 11
_SEMI = 12
_FUSED = 13  # 'in(?+)', 'values(?+)'
_MARK = 14  # the '...' that ends a DIGEST_TEXT cut short: always after a space
_MYSQLDUMP_KINDS = [_WORD, _WORD, _OP, _WORD]

# What a parenthesised list may hold to collapse into IN (?+) / VALUES (?+): literals, and
# rows of literals for "(a, b) IN ((1, 2), (3, 4))".
_LITERAL_LIST_KINDS = frozenset((_LIT, _LIST, _COMMA, _OPEN, _CLOSE))
# After these kinds a '+' or '-' starts an expression, so it is a sign.
_SIGN_AFTER_KINDS = frozenset((_OPEN, _COMMA, _CMP, _OP, _UNARY, _AT, _SEMI))

_CMP_TOKENS = frozenset(("=", "<>", "!=", "<", ">", "<=", ">=", "<=>", ":=", "->", "->>"))
_PUNCT_KINDS = {
    "(": _OPEN,
    ")": _CLOSE,
    ",": _COMMA,
    ".": _DOT,
    ";": _SEMI,
    "@": _AT,
    "~": _UNARY,
    "!": _UNARY,
}

# Keyword synonyms. DIGEST_TEXT prints each keyword token by the last of its spellings in the
# server's lex.h (DISTINCT as DISTINCTROW, DAY as SQL_TSI_DAY, ...): map every spelling to one.
# ('!=' for '<>' is handled with the operators.)
_KEYWORD_ALIASES = {
    "character": "char",
    "current_timestamp": "now",
    "localtime": "now",
    "localtimestamp": "now",
    "current_date": "curdate",
    "current_time": "curtime",
    "schema": "database",
    "schemas": "databases",
    "dec": "decimal",
    "distinctrow": "distinct",
    "describe": "explain",
    "fields": "columns",
    "float4": "float",
    "float8": "double",
    "integer": "int",
    "int1": "tinyint",
    "int2": "smallint",
    "int3": "mediumint",
    "middleint": "mediumint",
    "int4": "int",
    "int8": "bigint",
    "relay_thread": "io_thread",
    "rlike": "regexp",
    "some": "any",
    "sql_tsi_second": "second",
    "sql_tsi_minute": "minute",
    "sql_tsi_hour": "hour",
    "sql_tsi_day": "day",
    "sql_tsi_week": "week",
    "sql_tsi_month": "month",
    "sql_tsi_quarter": "quarter",
    "sql_tsi_year": "year",
    "varcharacter": "varchar",
    "geomcollection": "geometrycollection",
    "ndb": "ndbcluster",
    # USER is printed SYSTEM_USER: sql_functions[] comes after symbols[] in lex.h.
    "system_user": "user",
    # MariaDB 10.5+ reads REPLICA as SLAVE (MySQL 8 has both words: the same command).
    "replica": "slave",
    "replicas": "slaves",
    "replica_pos": "slave_pos",
    "master_demote_to_replica": "master_demote_to_slave",
}
# Function-name synonyms: only keywords when a '(' follows, so only mapped then.
_FUNCTION_ALIASES = {
    "mid": "substring",
    "substr": "substring",
    "std": "stddev_pop",
    "stddev": "stddev_pop",
    "variance": "var_pop",
    "session_user": "user",
}
# Character set introducers: `_utf8mb4 'x'` (with a blank) is one literal, as `_utf8mb4'x'` is.
_INTRODUCERS = frozenset(
    "_" + name
    for name in (
        "armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257", "cp850",
        "cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "filename", "gb18030", "gb2312",
        "gbk", "geostd8", "greek", "hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1",
        "latin2", "latin5", "latin7", "macce", "macroman", "sjis", "swe7", "tis620", "ucs2",
        "ujis", "utf16", "utf16le", "utf32", "utf8", "utf8mb3", "utf8mb4",
    )
)  # fmt: skip
# What an introducer may stand before: a string, or a hex or bit literal.
_INTRODUCED_STARTS = ("'", '"', "0x", "0b", "x'", "b'")
# Words handled by the main loop rather than emitted as they are.
_SPECIAL_WORDS = frozenset(
    ("null", "true", "false", "asc", "offset", *_FUNCTION_ALIASES, *_INTRODUCERS)
)
# Words after which '+'/'-' is a sign, not a subtraction.
_EXPRESSION_START_WORDS = frozenset(
    (
        "select", "where", "and", "or", "not", "xor", "when", "then", "else", "by", "between",
        "like", "regexp", "is", "return", "limit", "offset", "having", "on", "set", "interval",
        "case", "div", "mod", "elseif", "escape", "distinct", "all", "any", "values", "value",
        "default", "do", "while", "until", "sounds", "in", "exists",
    )
)  # fmt: skip
# A '(' after these words is written with a space: they start a clause, not a call.
_CLAUSE_WORDS = frozenset(
    (
        "and", "or", "not", "xor", "in", "exists", "from", "join", "on", "where", "having",
        "select", "as", "using", "union", "all", "any", "when", "then", "else", "by", "is",
        "like", "regexp", "between", "over", "distinct", "interval", "key", "index", "unique",
        "check", "return", "with", "lateral", "straight_join", "case", "set", "into", "table",
        "div", "mod", "escape", "against", "partition", "do", "elseif", "while", "until",
        "except", "intersect", "for", "to", "limit", "offset", "default", "recursive",
        "window", "sounds", "explain",
    )
)  # fmt: skip
# A name after these words is a table whose column list is written with a space before '('.
_TABLE_CONTEXT_WORDS = frozenset(("into", "table", "references", "exists"))
_FUSE_WORDS = frozenset(("in", "values", "value"))
_COMMENT_STARTS = ("/*", "#", "--", "*/")
# The reserved words of MySQL 8.0 and MariaDB 10.11 (MariaDB's information_schema.KEYWORDS, each
# tried as a column name): bare, such a word is always the keyword, never a name.
_RESERVED_WORDS = frozenset(
    (
        "accessible", "add", "all", "alter", "analyze", "and", "as", "asc", "asensitive",
        "before", "between", "bigint", "binary", "blob", "both", "by", "call", "cascade",
        "case", "change", "char", "character", "check", "collate", "column", "condition",
        "constraint", "continue", "convert", "create", "cross", "cube", "cume_dist",
        "current_date", "current_role", "current_time", "current_timestamp", "current_user",
        "cursor", "database", "databases", "day_hour", "day_microsecond", "day_minute",
        "day_second", "dec", "decimal", "declare", "default", "delayed", "delete",
        "delete_domain_id", "dense_rank", "desc", "describe", "deterministic", "distinct",
        "distinctrow", "div", "do_domain_ids", "double", "drop", "dual", "each", "else",
        "elseif", "empty", "enclosed", "escaped", "except", "exists", "exit", "explain",
        "false", "fetch", "first_value", "float", "float4", "float8", "for", "force",
        "foreign", "from", "fulltext", "function", "generated", "get", "grant", "group",
        "grouping", "groups", "having", "high_priority", "hour_microsecond", "hour_minute",
        "hour_second", "if", "ignore", "ignore_domain_ids", "in", "index", "infile", "inner",
        "inout", "insensitive", "insert", "int", "int1", "int2", "int3", "int4", "int8",
        "integer", "intersect", "interval", "into", "io_after_gtids", "io_before_gtids", "is",
        "iterate", "join", "json_table", "key", "keys", "kill", "lag", "last_value",
        "lateral", "lead", "leading", "leave", "left", "like", "limit", "linear", "lines",
        "load", "localtime", "localtimestamp", "lock", "long", "longblob", "longtext", "loop",
        "low_priority", "master_bind", "master_demote_to_replica", "master_demote_to_slave",
        "master_ssl_verify_server_cert", "match", "maxvalue", "mediumblob", "mediumint",
        "mediumtext", "middleint", "minute_microsecond", "minute_second", "mod", "modifies",
        "natural", "no_write_to_binlog", "not", "nth_value", "ntile", "null", "numeric", "of",
        "offset", "on", "optimize", "optimizer_costs", "option", "optionally", "or", "order",
        "out", "outer", "outfile", "over", "page_checksum", "parse_vcol_expr", "partition",
        "percent_rank", "portion", "precision", "primary", "procedure", "purge", "range",
        "rank", "read", "read_write", "reads", "real", "recursive", "ref_system_id",
        "references", "regexp", "release", "rename", "repeat", "replace", "require",
        "resignal", "restrict", "return", "returning", "revoke", "right", "rlike", "row",
        "row_number", "rows", "schema", "schemas", "second_microsecond", "select",
        "sensitive", "separator", "set", "show", "signal", "smallint", "spatial", "specific",
        "sql", "sql_big_result", "sql_calc_found_rows", "sql_small_result", "sqlexception",
        "sqlstate", "sqlwarning", "ssl", "starting", "stats_auto_recalc", "stats_persistent",
        "stats_sample_pages", "stored", "straight_join", "system", "table", "terminated",
        "then", "tinyblob", "tinyint", "tinytext", "to", "trailing", "trigger", "true",
        "undo", "union", "unique", "unlock", "unsigned", "update", "usage", "use", "using",
        "utc_date", "utc_time", "utc_timestamp", "values", "varbinary", "varchar",
        "varcharacter", "varying", "virtual", "when", "where", "while", "window", "with",
        "write", "xor", "year_month", "zerofill",
    )
)  # fmt: skip
# Quoted names that stay quoted wherever they stand: reserved words (so `left` the alias and
# LEFT the join never merge, and a fingerprint stays SQL), and the words the fingerprint rewrites
# or that steer its rules whatever follows them. Their bare form cannot name the same thing.
_ALWAYS_QUOTED = _RESERVED_WORDS | frozenset(
    (*_KEYWORD_ALIASES, "null", "true", "false", "asc", "is", "not", "limit", "call", "use",
     *_TABLE_CONTEXT_WORDS)
)  # fmt: skip
# Quoted names that stay quoted only before '(', a '+'/'-' or a literal, where the bare word
# would change the fingerprint (a clause keyword's spacing, a function synonym, a sign, an
# introducer, OFFSET); elsewhere they read back as themselves, and `value` and value (a
# non-reserved keyword naming the same column) keep one fingerprint.
_CONTEXT_QUOTED = (
    frozenset(
        (
            *_CLAUSE_WORDS, *_EXPRESSION_START_WORDS, *_FUSE_WORDS, *_FUNCTION_ALIASES,
            *_INTRODUCERS, "offset",
        )
    )
    - _ALWAYS_QUOTED
)  # fmt: skip

# Raw token classes, told apart by the first character.
_C_WORD, _C_STRING, _C_NAME, _C_DIGIT, _C_OPEN, _C_CLOSE, _C_COMMA, _C_EQUALS = range(8)
_C_DOT, _C_OTHER = 8, 9
_FIRST_CHAR = {
    **dict.fromkeys("abcdefghijklmnopqrstuvwxyz_$", _C_WORD),
    **dict.fromkeys("0123456789", _C_DIGIT),
    "'": _C_STRING,
    '"': _C_STRING,
    "?": _C_STRING,  # a placeholder is a literal too
    "`": _C_NAME,
    "(": _C_OPEN,
    ")": _C_CLOSE,
    ",": _C_COMMA,
    "=": _C_EQUALS,  # only '=' itself: '=>' is not a token
    ".": _C_DOT,
}
# After these a literal needs _push_literal's rules (sign, list, adjacent strings, @var).
_LITERAL_RULE_KINDS = frozenset((_UNARY, _LIT, _LIST, _COMMA, _AT))
_LIST_TEXT = "?, ..."


def fingerprint(sql: str) -> str:
    """Return the fingerprint of one SQL statement or performance_schema DIGEST_TEXT.

    Args:
        sql: Statement text as logged, or a DIGEST_TEXT.

    Returns:
        The normalised text; see the module docstring for the rules and the spacing.

    Example:
        >>> fingerprint("SELECT a, b FROM t WHERE id IN (1, 2, 3) ORDER BY a ASC LIMIT 5, 10")
        'select a, b from t where id in(?+) order by a limit ?'
        >>> fingerprint("SELECT `a` , `b` FROM `t` WHERE `id` IN (...) ORDER BY `a` LIMIT ?, ...")
        'select a, b from t where id in(?+) order by a limit ?'
        >>> fingerprint("SELECT `order` FROM `shop-prod`.`orders` WHERE `id` = 5")
        'select `order` from `shop-prod`.orders where id=?'
    """
    special = _whole_statement_form(sql)
    if special is not None:
        return special
    texts, kinds = _normalise(_TOKEN_RE.findall(sql.lower()))
    while kinds and kinds[-1] == _SEMI:
        texts.pop()
        kinds.pop()
    if texts and kinds[0] == _WORD:
        if texts[0] == "call":
            return _call_form(texts, kinds)
        if texts[0] == "use" and len(texts) == 2 and kinds[1] in (_WORD, _NAME):
            return "use ?"
    if _is_mysqldump_select(texts, kinds):
        return "mysqldump"
    text = _render(texts, kinds)
    if "union" in text and "`" not in text:  # (the expression could reach into a name)
        text = _UNION_RE.sub(r"\1 /*repeat\2*/", text)
    return text


def edge_comments(sql: str) -> list[str]:
    """The comments before a statement's first token and after its last (``;`` aside), as
    written: where applications put their tags (quanta.analysis.tags). Read with the
    fingerprint's own tokenizer, so a ``/*`` inside a string is no comment here either;
    executable comments and optimizer hints (``/*!``, ``/*M!``, ``/*+``) are not comments.

    Example:
        >>> edge_comments("/* a=1 */ SELECT '/*x*/' FROM t /*route='%2F'*/;")
        ['/* a=1 */', "/*route='%2F'*/"]
    """
    # The tokenizer expects lower case only for literal prefixes (x'..'); comments and
    # strings, all this needs, are read the same in any case. Original case: values keep it.
    tokens = _TOKEN_RE.findall(sql)
    lead = 0
    while lead < len(tokens) and _is_plain_comment(tokens[lead]):
        lead += 1
    found = tokens[:lead]
    end = len(tokens)
    while end > lead and tokens[end - 1] == ";":
        end -= 1
    trail = end
    while trail > lead and _is_plain_comment(tokens[trail - 1]):
        trail -= 1
    found += (t for t in tokens[trail:end] if t != ";")
    return found


def _is_plain_comment(token: str) -> bool:
    """A comment that leaves no trace (not an executable comment nor a hint)."""
    if token.startswith("/*"):
        return (
            token.endswith("*/")
            and len(token) >= 4
            and block_comment_kind(token, 0) is CommentKind.PLAIN
        )
    return token.startswith("#") or token.startswith("--")


def query_id(fingerprint: str) -> str:
    """Return the query_id of a fingerprint: the first 16 hex digits, upper case, of its MD5.

    Args:
        fingerprint: A fingerprint as returned by :func:`fingerprint`.

    Returns:
        16 upper-case hexadecimal digits.

    Example:
        >>> query_id("select ?")
        '1FE1379FE2A31B8D'
    """
    digest = hashlib.md5(fingerprint.encode("utf-8"), usedforsecurity=False)
    return digest.hexdigest()[:16].upper()


def _is_mysqldump_select(texts: list[str], kinds: list[int]) -> bool:
    """Tell whether the statement is ``select sql_no_cache * from <table>`` exactly.

    That is mysqldump's ``SELECT /*!40001 SQL_NO_CACHE */ * FROM `t``` as DIGEST_TEXT prints it
    (the executable comment's content, no comment): so performance_schema and agent buckets
    give the ``mysqldump`` class the slow log gives.
    """
    return (
        len(texts) == 5
        and texts[:4] == _MYSQLDUMP_TOKENS
        and kinds[:4] == _MYSQLDUMP_KINDS
        and kinds[4] in (_WORD, _NAME)
    )


def _whole_statement_form(sql: str) -> str | None:
    """Return the fixed fingerprint pt-query-digest gives some statements, else None."""
    if sql.startswith(_ADMIN_PREFIX):
        return sql.strip()
    if sql in _WHOLE_STATEMENT_FINGERPRINTS:  # so that fingerprint(fingerprint(x)) is stable
        return sql
    if sql.startswith(_MYSQLDUMP_PREFIX):
        return "mysqldump"
    if "/*" in sql and PT_CHECKSUM_RE.search(sql):
        return "percona-toolkit"
    return None


def _normalise(tokens: list[str]) -> tuple[list[str], list[int]]:
    """Turn raw lower-cased tokens into normalised output tokens and their kinds."""
    texts: list[str] = []
    kinds: list[int] = []
    opens: list[int] = []  # output positions of the '(' not yet closed
    add_text, add_kind = texts.append, kinds.append  # bound once: this loop is the hot path
    count = len(tokens)
    i = 0
    while i < count:
        token = tokens[i]
        i += 1
        first = _FIRST_CHAR.get(token[0])
        if first is None:
            first = _C_WORD if token[0].isalpha() else _C_OTHER
        if first == _C_WORD:
            # x'..', n'..', _utf8'..': only such a word token holds a quote, and it ends with
            # one unless it runs to the end of the text.
            if token[-1] in "'\"" or (i == count and ("'" in token or '"' in token)):
                _push_literal(texts, kinds, _LIT)
                continue
            word = _KEYWORD_ALIASES.get(token, token)
            if word in _SPECIAL_WORDS or (kinds and kinds[-1] == _AT):
                i = _push_word(texts, kinds, tokens, i, word)
            else:  # the common case, kept inline for speed
                add_text(word)
                add_kind(_WORD)
        elif first == _C_STRING:
            if token == "?+":
                _push_literal(texts, kinds, _LIST)
            elif kinds and kinds[-1] in _LITERAL_RULE_KINDS:
                _push_literal(texts, kinds, _LIT)
            else:  # the common case, kept inline for speed
                add_text("?")
                add_kind(_LIT)
        elif first == _C_COMMA:
            add_text(",")
            add_kind(_COMMA)
        elif first == _C_EQUALS:
            add_text("=")
            add_kind(_CMP)
        elif first == _C_OPEN:
            if token == "(":
                opens.append(len(texts))
                add_text("(")
                add_kind(_OPEN)
            else:  # '(unknown)' is a literal; '(_charset)' a noise word
                if token == "(unknown)":
                    _push_literal(texts, kinds, _LIT)
        elif first == _C_CLOSE:
            i = _close_paren(texts, kinds, opens, tokens, i)
        elif first == _C_DIGIT:
            if not (token.isdigit() or _NUMBER_RE.fullmatch(token)):
                _push_name(texts, kinds, token)
            elif kinds and kinds[-1] in _LITERAL_RULE_KINDS:
                _push_literal(texts, kinds, _LIT)
            else:  # the common case, kept inline for speed
                add_text("?")
                add_kind(_LIT)
        elif first == _C_NAME:
            name = token[1:-1]
            if not (  # the common case, kept inline for speed: `orders`
                token[-1] == "`" and _PLAIN_NAME_RE.fullmatch(name) and name not in _ALWAYS_QUOTED
            ):
                name = quote_name(unquote_ident(token))
            _push_name(texts, kinds, name)
        elif first == _C_DOT and len(token) > 1:
            if token == "..." and i == count and not _continues_list(texts, kinds):
                add_text(token)  # the mark of a DIGEST_TEXT cut short: kept, never a value
                add_kind(_MARK)
            else:
                _push_literal(texts, kinds, _LIST if token == "..." else _LIT)
        elif not token.startswith(_COMMENT_STARTS):
            _push_operator(texts, kinds, token)
        elif token.startswith("/*repeat "):  # written by fingerprint() itself: keep it
            add_text(token)
            add_kind(_OP)
    return texts, kinds


def _push_word(texts: list[str], kinds: list[int], tokens: list[str], i: int, word: str) -> int:
    """Append a bare word that has a rule of its own; return the next token index."""
    if word in _SPECIAL_WORDS:
        if word == "null":
            if not _after_is(texts, kinds):
                _push_literal(texts, kinds, _LIT)
                return i
        elif word == "true" or word == "false":
            if not _after_is(texts, kinds):  # IS [NOT] TRUE is a test, not a value
                _push_literal(texts, kinds, _LIT)
                return i
        elif word == "asc":
            return i
        elif word == "offset":
            if _after_limit_value(texts, kinds) and i < len(tokens) and _is_number(tokens[i]):
                return i + 1  # LIMIT b OFFSET a is LIMIT a, b
        elif word in _INTRODUCERS:
            if i < len(tokens) and tokens[i].startswith(_INTRODUCED_STARTS):
                return i  # the literal after it stands for both
        elif i < len(tokens) and tokens[i] == "(":
            word = _FUNCTION_ALIASES[word]
    if kinds and kinds[-1] == _AT:
        _push_name(texts, kinds, word)
        return i
    texts.append(word)
    kinds.append(_WORD)
    return i


def _after_is(texts: list[str], kinds: list[int]) -> bool:
    """Tell whether the output ends with IS or IS NOT (so a NULL or TRUE there is a keyword)."""
    if not texts or kinds[-1] != _WORD:
        return False
    if texts[-1] == "is":
        return True
    return texts[-1] == "not" and len(texts) > 1 and texts[-2] == "is" and kinds[-2] == _WORD


def _after_limit_value(texts: list[str], kinds: list[int]) -> bool:
    """Tell whether the output ends with LIMIT and its value."""
    return len(texts) >= 2 and kinds[-1] == _LIT and kinds[-2] == _WORD and texts[-2] == "limit"


def _is_number(token: str) -> bool:
    """Tell whether a raw token is a numeric literal or a placeholder."""
    return token == "?" or token == "..." or bool(_NUMBER_RE.fullmatch(token))


def _push_literal(texts: list[str], kinds: list[int], kind: int) -> None:
    """Append a literal, absorbing a sign before it and merging it into a list of literals."""
    while kinds and kinds[-1] == _UNARY and (texts[-1] == "-" or texts[-1] == "+"):
        texts.pop()
        kinds.pop()
    if not kinds:
        texts.append(_LIST_TEXT if kind == _LIST else "?")
        kinds.append(kind)
        return
    last = kinds[-1]
    if last in (_LIT, _LIST):
        return  # 'a' 'b' is one string; MariaDB's DIGEST_TEXT writes it '? ?'
    if (  # _continues_list(), inlined: this runs for every value of a list
        last == _COMMA
        and len(kinds) >= 2
        and (
            kinds[-2] == _LIT
            or kinds[-2] == _LIST
            or (kinds[-2] == _NAME and _user_variable_before_comma(texts, kinds))
        )
    ):
        texts.pop()
        kinds.pop()
        if len(kinds) >= 2 and kinds[-2] == _WORD and texts[-2] == "limit":
            return  # LIMIT a, b is LIMIT ?
        texts[-1] = _LIST_TEXT
        kinds[-1] = _LIST
        return
    if last == _AT and not (len(kinds) >= 2 and kinds[-2] == _AT):
        _push_name(texts, kinds, "?")  # MariaDB writes @var as @?
        return
    if kind == _LIST and last == _WORD and texts[-1] == "limit":
        kind = _LIT  # LIMIT ... is LIMIT ?, as LIMIT a, b is
    texts.append(_LIST_TEXT if kind == _LIST else "?")
    kinds.append(kind)


def _continues_list(texts: list[str], kinds: list[int]) -> bool:
    """Tell whether the output ends with a value and a comma, so '...' there is more values."""
    return (
        len(kinds) >= 2
        and kinds[-1] == _COMMA
        and (kinds[-2] == _LIT or kinds[-2] == _LIST or _user_variable_before_comma(texts, kinds))
    )


def _user_variable_before_comma(texts: list[str], kinds: list[int]) -> bool:
    """Tell whether the output ends with a user variable ``@?`` and a comma.

    MariaDB's digest reads a user variable's name as a value, so ``@a, 1`` is ``@?, ...``
    there (but ``1, @a`` stays ``?, @?``: the '@' stands between the two values).
    """
    return (
        len(kinds) >= 3
        and kinds[-2] == _NAME
        and texts[-2] == "?"
        and kinds[-3] == _AT
        and (len(kinds) < 4 or kinds[-4] != _AT)  # not @@?, a system variable
    )


def quote_name(name: str) -> str:
    """Return a quoted name (lower case, unquoted) as the fingerprint writes it.

    Bare when bare it reads back as this one name, else in backticks with inner backticks
    doubled; see the module docstring.

    Example:
        >>> quote_name("orders"), quote_name("shop-prod"), quote_name("null")
        ('orders', '`shop-prod`', '`null`')
    """
    if _reads_back_as_name(name):
        return name
    return quote_ident(name, lenient=True)  # a fingerprint is never sent: any character


def _reads_back_as_name(name: str) -> bool:
    """Tell whether ``name`` written bare is read by the fingerprint as this one name."""
    if _PLAIN_NAME_RE.fullmatch(name):  # the common case, answered without the tokenizer
        return name not in _ALWAYS_QUOTED
    if not _BARE_NAME_RE.fullmatch(name):  # a blank, '-', '.', a quote, a backtick, empty
        return False
    match = _TOKEN_RE.match(name)
    if match is None or match.end() != len(name):  # 1e5abc is 1e5 and abc
        return False
    first = _FIRST_CHAR.get(name[0])
    if first is None:
        return name[0].isalpha() and name not in _ALWAYS_QUOTED
    if first == _C_WORD:
        return name not in _ALWAYS_QUOTED
    if first == _C_DIGIT:  # 1abc is a name; 123, 1e5 and 0x1f are numbers
        return not (name.isdigit() or _NUMBER_RE.fullmatch(name))
    return False


def _push_name(texts: list[str], kinds: list[int], name: str) -> None:
    """Append an identifier; a user variable's name is abstracted to '?' (@x is @?)."""
    if kinds and kinds[-1] == _AT and not (len(kinds) >= 2 and kinds[-2] == _AT):
        name = "?"
    texts.append(name)
    kinds.append(_NAME)


def _push_operator(texts: list[str], kinds: list[int], token: str) -> None:
    """Append an operator or punctuation token with its spacing kind."""
    if token in _CMP_TOKENS:
        texts.append("<>" if token == "!=" else token)
        kinds.append(_CMP)
        return
    kind = _PUNCT_KINDS.get(token)
    if kind is None:
        kind = _OP
        if (token == "-" or token == "+") and _sign_position(texts, kinds):
            kind = _UNARY
    texts.append(token)
    kinds.append(kind)


def _sign_position(texts: list[str], kinds: list[int]) -> bool:
    """Tell whether a '+' or '-' here starts an expression (is a sign)."""
    if not kinds:
        return True
    last = kinds[-1]
    if last in _SIGN_AFTER_KINDS:
        return True
    return last == _WORD and texts[-1] in _EXPRESSION_START_WORDS


def _close_paren(
    texts: list[str], kinds: list[int], opens: list[int], tokens: list[str], i: int
) -> int:
    """Append a ')', collapsing IN (...) and VALUES (...); return the next token index."""
    if not opens:
        texts.append(")")
        kinds.append(_CLOSE)
        return i
    start = opens.pop()
    before = texts[start - 1] if start > 0 and kinds[start - 1] == _WORD else ""
    if before in _FUSE_WORDS and _LITERAL_LIST_KINDS.issuperset(kinds[start + 1 :]):
        del texts[start:]
        del kinds[start:]
        texts[-1] = before + "(?+)"
        kinds[-1] = _FUSED
    else:
        texts.append(")")
        kinds.append(_CLOSE)
    if before == "values" or before == "value":
        i = _skip_more_rows(tokens, i)
    return i


def _skip_more_rows(tokens: list[str], i: int) -> int:
    """Skip the ', (...)' rows after the first row of a VALUES list; return the next index."""
    count = len(tokens)
    while i + 1 < count and tokens[i] == "," and tokens[i + 1] == "(":
        depth = 0
        j = i + 1
        while j < count:
            token = tokens[j]
            if token == "(":
                depth += 1
            elif token == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    return i


def _call_form(texts: list[str], kinds: list[int]) -> str:
    """Return 'call <name>' for a CALL statement: the arguments do not matter."""
    end = 1
    while end < len(texts) and kinds[end] in (_WORD, _NAME, _DOT):
        end += 1
    return "call " + "".join(texts[1:end]) if end > 1 else "call"


def _render(texts: list[str], kinds: list[int]) -> str:
    """Join output tokens with the spacing rules of the module docstring."""
    parts: list[str] = []
    append = parts.append
    spacing = _SPACING
    previous = _OPEN  # any kind: the first token has no space before it
    last = len(texts) - 1
    for index in range(len(texts)):
        kind = kinds[index]
        space = spacing[previous][kind]
        text = texts[index]
        if index and (
            space
            or (space is None and _space_before_paren(texts, kinds, index))
            or (previous in (_UNARY, _DOT) and _would_merge(parts, text, previous))
        ):
            append(" ")
        if kind == _NAME and index < last and text in _CONTEXT_QUOTED:
            text = _quote_in_context(text, kinds[index + 1], texts[index + 1])
        append(text)
        previous = kind
    return "".join(parts)


def _would_merge(parts: list[str], text: str, previous: int) -> bool:
    """Tell whether ``text`` written right after a unary operator or a '.' would read back as
    another token: '- -' as '--' (a comment), '. .' as '..', '. 1abc' as the number .1 (unless
    the '.' follows a name: ``t.1abc`` is a qualified name)."""
    if text[0] == parts[-1][-1] and text[0] in "-.":
        return True
    return (
        previous == _DOT
        and text[0].isdigit()
        and not (len(parts) >= 2 and _NAME_END_RE.match(parts[-2][-1]) is not None)
    )


def _quote_in_context(name: str, next_kind: int, next_text: str) -> str:
    """Quote a name that is a keyword where, bare, the keyword would change the fingerprint."""
    if next_kind in (_OPEN, _LIT, _LIST) or (next_kind == _OP and next_text in ("+", "-")):
        return f"`{name}`"
    return name


def _space_before_paren(texts: list[str], kinds: list[int], index: int) -> bool:
    """Decide the space between a name and the '(' after it."""
    if kinds[index - 1] == _WORD and texts[index - 1] in _CLAUSE_WORDS:
        return True
    # Walk back over a dotted name to the word before it: "into db.t (a, b)".
    start = index - 1
    while start >= 2 and kinds[start - 1] == _DOT and kinds[start - 2] in (_WORD, _NAME):
        start -= 2
    return start >= 1 and kinds[start - 1] == _WORD and texts[start - 1] in _TABLE_CONTEXT_WORDS


def _spacing_table() -> tuple[tuple[bool | None, ...], ...]:
    """Build the space-or-not table indexed by (previous kind, current kind).

    None means "depends on the words": a '(' after a name.
    """
    kinds = range(_MARK + 1)
    no_space_after = (_OPEN, _DOT, _CMP, _UNARY, _AT)
    no_space_before = (_CLOSE, _COMMA, _DOT, _CMP, _SEMI)
    table: list[tuple[bool | None, ...]] = []
    for previous in kinds:
        row: list[bool | None] = []
        for current in kinds:
            space: bool | None = True
            if current == _MARK:
                pass  # 'db. ...' must not read back as 'db....'
            elif previous in no_space_after or current in no_space_before:
                space = False
            elif current == _OPEN and previous in (_WORD, _NAME):
                space = None
            row.append(space)
        table.append(tuple(row))
    return tuple(table)


_SPACING = _spacing_table()
