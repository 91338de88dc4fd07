"""What a statement is and which tables it reads or writes, for the query catalog.

Parsing is far slower than fingerprinting, so this runs once per new query class, never per
event. A real statement (an example) parses best, so the examples are tried first, then the
fingerprint with its forms (``in(?+)``, ``values(?+)``, ``?, ...``) written back as SQL by the
advisor's ``normalise_fingerprint``.

Example:
    >>> describe_statement("select * from shop.orders o join customers c on c.id=o.cid")
    StatementInfo(statement_type='select', tables=('customers', 'shop.orders'))
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quanta.analysis.advisor.statement import MAX_PARSE_CHARS, normalise_fingerprint

__all__ = ["MAX_PARSE_CHARS", "StatementInfo", "describe_statement", "tables_read", "written_table"]

_ADMIN_PREFIX = "administrator command:"
_STATEMENT_TYPE_CHARS = 20

# sqlglot logs every statement it cannot fully understand; that is expected here.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class StatementInfo:
    """The statement's first keyword (lower case) and its tables as ``db.table`` or ``table``."""

    statement_type: str
    tables: tuple[str, ...]


def describe_statement(fingerprint: str, *examples: str) -> StatementInfo:
    """Describe a query class from its fingerprint and, better, real examples of it.

    Args:
        fingerprint: The class's fingerprint (comments gone): gives the statement type.
        examples: Real statements of the class, tried first for the tables.

    Returns:
        The statement type (the fingerprint's first keyword), and the tables of the first
        text sqlglot parses, examples first (none if none does).

    Example:
        >>> describe_statement("administrator command: quit")
        StatementInfo(statement_type='admin', tables=())
    """
    if fingerprint.lstrip().lower().startswith(_ADMIN_PREFIX):
        return StatementInfo("admin", ())
    words = fingerprint.split(None, 1)
    word = words[0].lower() if words else ""
    statement_type = "".join(c for c in word if c.isalpha())[:_STATEMENT_TYPE_CHARS] or "other"
    # The fingerprint's own forms (in(?+), values(?+), ?, ...) are written back as SQL first.
    for text in (*examples, normalise_fingerprint(fingerprint)):
        tables = tables_read(text)
        if tables is not None:
            return StatementInfo(statement_type, tables)
    return StatementInfo(statement_type, ())


def tables_read(text: str) -> tuple[str, ...] | None:
    """The tables (and views) a statement names, as ``db.table`` or ``table``, CTEs left
    out; None when it does not parse (or is too long to).

    Example:
        >>> tables_read("with c as (select 1) select * from c join `shop`.`t` using (id)")
        ('shop.t',)
    """
    if len(text) > MAX_PARSE_CHARS:
        return None
    try:
        tree = sqlglot.parse_one(text, read="mysql")
    except (SqlglotError, RecursionError, ValueError):
        return None
    if tree is None:
        return None
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    names = {
        f"{t.db}.{t.name}" if t.db else t.name
        for t in tree.find_all(exp.Table)
        if t.name and not (not t.db and t.name in ctes)
    }
    return tuple(sorted(names))


def written_table(sql: str) -> str | None:
    """The table an INSERT, REPLACE, UPDATE or DELETE writes, as ``db.table`` or ``table``.

    None for any other statement, a multi-table UPDATE or DELETE, or what does not parse.

    Example:
        >>> written_table("insert into shop.orders (a) select a from staging")
        'shop.orders'
        >>> written_table("delete from t where id = ?"), written_table("select 1")
        ('t', None)
        >>> written_table("replace into t values (?)"), written_table("update a join b set a.x = 1")
        ('t', None)
    """
    if len(sql) > MAX_PARSE_CHARS:
        return None
    text = sql.lstrip()
    if text[:7].lower() == "replace":
        text = "insert" + text[7:]  # sqlglot reads REPLACE as a command; it writes as INSERT
    try:
        tree = sqlglot.parse_one(normalise_fingerprint(text), read="mysql")
    except (SqlglotError, RecursionError, ValueError):
        return None
    if not isinstance(tree, exp.Insert | exp.Update | exp.Delete):
        return None
    target = tree.this
    if isinstance(target, exp.Schema):  # INSERT INTO t (a, b): the table with its columns
        target = target.this
    if not isinstance(target, exp.Table) or not target.name:
        return None
    if target.args.get("joins") or len(tree.args.get("tables") or ()) > 1:
        return None  # a multi-table UPDATE or DELETE
    return f"{target.db}.{target.name}" if target.db else target.name
