"""What a sandbox check reads of a statement (sqlglot, MySQL dialect): the tables it names,
which of them may be copied, the statement moved to the scratch databases, and the names
EXPLAIN shows for a table's references.

Only user tables the statement itself names are copied: never a table of ``mysql``, ``sys``,
``performance_schema`` or ``information_schema``, nor one the statement does not name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quanta.analysis.sqlkind import Classification
from quanta.monitored.sandbox import SandboxRefused

__all__ = [
    "SYSTEM_SCHEMAS",
    "aliases",
    "explained_text",
    "is_system",
    "named_tables",
    "rewritten",
    "tables_to_copy",
]

# Schemas of the server itself: never copied (their rows are credentials, server state).
SYSTEM_SCHEMAS = frozenset(("mysql", "sys", "performance_schema", "information_schema"))
_MYSQL = "mysql"


def explained_text(classification: Classification, sql: str) -> str:
    """What the sandbox explains for the example: the classifier's ``explain_text`` (DML
    as its equivalent SELECT) where the classifier gives one, else the example itself."""
    text = getattr(classification, "explain_text", None)
    return text if isinstance(text, str) and text else sql


def tables_to_copy(
    sql: str, default_db: str | None, tables: Sequence[str]
) -> tuple[list[str], list[str]]:
    """(tables to copy, tables left out): of ``tables`` (``db.t``), only the user tables the
    statement itself names; never one of :data:`SYSTEM_SCHEMAS`.

    Example:
        >>> tables_to_copy("SELECT * FROM t JOIN mysql.user u", "shop",
        ...                ["shop.t", "mysql.user", "shop.other"])
        (['shop.t'], ['mysql.user'])
    """
    named = named_tables(sql, default_db)
    copied = [t for t in tables if t.lower() in named and not is_system(t)]
    left_out = sorted(t for t in named if is_system(t) or t not in {c.lower() for c in copied})
    if not copied:
        raise SandboxRefused(
            "the example names no user table that can be copied to the sandbox"
            + (f" ({', '.join(left_out)} are never copied)" if left_out else "")
        )
    return copied, left_out


def named_tables(sql: str, default_db: str | None) -> set[str]:
    """``db.t`` (lower case) of every table reference in the statement."""
    try:
        tree = sqlglot.parse_one(sql, read=_MYSQL)
    except SqlglotError:
        return set()
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    named = set()
    for table in tree.find_all(exp.Table):
        database = (table.db or default_db or "").lower()
        if not table.name or (not table.db and table.name.lower() in ctes):
            continue
        if database:
            named.add(f"{database}.{table.name.lower()}")
    return named


def is_system(table: str) -> bool:
    """Whether ``db.t`` is a table of the server's own schemas (:data:`SYSTEM_SCHEMAS`)."""
    return table.split(".", 1)[0].lower() in SYSTEM_SCHEMAS


def rewritten(sql: str, default_db: str | None, scratch: Mapping[str, str]) -> str:
    """The statement with every database-qualified table moved to its scratch database.

    Unqualified tables need nothing: the session's database is the default one's scratch.
    """
    try:
        tree = sqlglot.parse_one(sql, read=_MYSQL)
    except SqlglotError:
        return sql  # no qualified name can be rewritten; EXPLAIN will say what is wrong
    qualified = False
    for table in tree.find_all(exp.Table):
        database = table.db.lower()
        if database and database in scratch:
            table.set("db", exp.to_identifier(scratch[database]))
            qualified = True
    return tree.sql(dialect=_MYSQL) if qualified else sql


def aliases(sql: str, default_db: str | None, table: str) -> set[str]:
    """The names EXPLAIN shows (alias or name) for the references to ``table`` (db.t)."""
    database, name = table.split(".", 1)
    try:
        tree = sqlglot.parse_one(sql, read=_MYSQL)
    except SqlglotError:
        return {name}
    found = {
        node.alias_or_name.lower()
        for node in tree.find_all(exp.Table)
        if node.name.lower() == name and (node.db or default_db or "").lower() == database
    }
    return found or {name}
