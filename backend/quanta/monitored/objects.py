"""What a statement reaches on the server, checked before it is explained or executed.

The allowlist (:mod:`quanta.analysis.sqlkind`) checks a statement's text; the objects it
names are hostile too. A view runs its definer's functions when the optimizer evaluates it:
MariaDB evaluates a DETERMINISTIC function in a view's WHERE while optimising, so EXPLAIN of
``SELECT * FROM v`` runs it without the example naming any function. So before a statement
is explained or executed, on the same session and in the same transaction, every name it
could mean is resolved in information_schema (unqualified names in the session's default
database) to what it is:

* a base table, a system-versioned table, a system view (information_schema) or a
  sequence: read as it is, if its engine keeps its rows on this server (FEDERATED, CONNECT,
  SPIDER... open connections elsewhere: refused);
* a view: its definition (``VIEW_DEFINITION``, the server's canonical text) is checked by
  the same lexer and allowlist, and every name in it is resolved in turn (a view on a
  view). A definition the account cannot read (it lacks SHOW VIEW: the server shows it
  empty) or that reads a table the account cannot see is refused: it cannot be checked;
* a temporary table (never Quanta's own: its sessions create none) or anything else:
  refused.

What the server may evaluate while optimising without it being named is checked the same
way: the expressions of generated columns of every base table reached (MariaDB computes
virtual columns of the rows it reads at optimisation, a const table's for one), and, when
the text or a view's definition calls ``DEFAULT(col)``, the DEFAULT expressions (MariaDB
evaluates them under EXPLAIN: ``DEFAULT (NEXT VALUE FOR s)`` advances ``s``). CHECK
constraints and triggers act on writes only, and Quanta sends none (DML is explained as its
equivalent SELECT). tests/integration/test_guard_vectors_mariadb.py shows each on a real
server.

The names are over-approximated (every word and every ``a.b`` of the text): whatever the
grammar, nothing the server would resolve is missed, and the catalog says which exist.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from quanta.analysis.sqlkind import calls_default, definition_refusal, object_names
from quanta.analysis.statement import tables_read
from quanta.monitored.errors import StatementRefused

__all__ = ["ObjectRefused", "Reached", "check_reached"]

# Engines whose tables keep their rows on the server itself: opening one reaches nothing else.
LOCAL_ENGINES = frozenset(
    (
        "innodb",
        "myisam",
        "aria",
        "memory",
        "heap",
        "csv",
        "archive",
        "mrg_myisam",
        "blackhole",
        "sequence",
        "performance_schema",
        "rocksdb",
        "tokudb",
    )
)
BASE_TABLE_TYPES = frozenset(("BASE TABLE", "SYSTEM VERSIONED"))
READ_AS_IS_TYPES = frozenset(("SYSTEM VIEW", "SEQUENCE"))
VIEW = "VIEW"
# Bounds on what one statement may make Quanta read: views nested deeper, or more names,
# are refused rather than read at length on the customer's server.
MAX_VIEW_DEPTH = 16
MAX_NAMES = 2_000
_Name = tuple[str, str]


class ObjectRefused(StatementRefused):
    """Something the statement reaches may not be evaluated; ``str()`` says what and why."""


class Reader(Protocol):
    """A guarded session inside a read-only transaction (GuardedConnection, SandboxSession)."""

    @property
    def default_database(self) -> str | None:
        """The database unqualified names resolve in."""

    @property
    def is_mariadb(self) -> bool:
        """MariaDB rather than MySQL."""

    def query(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run one guarded statement, its rows as dicts."""


@dataclass(frozen=True, slots=True)
class Reached:
    """What a statement reaches: ``(database, name, type, engine or definition)`` of each
    object, lower-case names; equal before and after a statement when nothing changed."""

    objects: frozenset[tuple[str, str, str, str]]

    @property
    def views(self) -> list[str]:
        """The views reached, as ``db.name``."""
        return sorted(f"{db}.{name}" for db, name, kind, _ in self.objects if kind == VIEW)


def check_reached(conn: Reader, sql: str) -> Reached:
    """Resolve what ``sql`` reaches and check it; what was found.

    Names are looked up as written (the server's own comparison decides, case-sensitive
    or not) and matched back without regard to case: more, never fewer.

    Raises:
        ObjectRefused: something it reaches may not be evaluated (the message says what).
        ServerError: the catalog could not be read.
    """
    pending = object_names(sql, conn.default_database)
    evaluates_defaults = calls_default(sql)
    found: dict[_Name, tuple[_Name, str, str]] = {}  # by _key: (stored name, type, detail)
    required: set[_Name] = set()  # by _key
    asked: set[_Name] = set()
    for _depth in range(MAX_VIEW_DEPTH + 1):
        batch = pending - asked
        if not batch:
            break
        asked |= batch
        if len(asked) > MAX_NAMES:
            raise ObjectRefused(f"it reaches more than {MAX_NAMES} names: too many to check")
        for name, (kind, detail) in _resolve(conn, batch).items():
            found[_key(name)] = (name, kind, detail)
            if kind == VIEW:
                pending |= object_names(detail, name[0])
                evaluates_defaults |= calls_default(detail)
                required |= {_key(read) for read in _read_by_view(name, detail)}
    else:
        raise ObjectRefused(f"it reaches views nested more than {MAX_VIEW_DEPTH} deep")
    missing = sorted(required - set(found))
    if missing:
        raise ObjectRefused(
            f"a view it reads reads {'.'.join(missing[0])}, which Quanta's account cannot "
            "see: what that is cannot be checked (grant SELECT on it, or on its database)"
        )
    tables = [name for name, kind, _ in found.values() if kind in BASE_TABLE_TYPES]
    _check_columns(conn, tables, defaults=evaluates_defaults)
    return Reached(frozenset((*key, kind, detail) for key, (_, kind, detail) in found.items()))


def _key(name: _Name) -> _Name:
    return name[0].lower(), name[1].lower()


def _resolve(conn: Reader, names: set[_Name]) -> dict[_Name, tuple[str, str]]:
    """What each of ``names`` that exists is: (type, engine) or (VIEW, its definition),
    by the name the server stores."""
    wanted = {_key(name) for name in names}
    databases, tables = _in_lists(names)
    rows = conn.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES "
        f"WHERE TABLE_SCHEMA IN ({databases}) AND TABLE_NAME IN ({tables})",
        _args(names),
    )
    resolved: dict[_Name, tuple[str, str]] = {}
    views: set[_Name] = set()
    for row in rows:
        name = (str(row["TABLE_SCHEMA"]), str(row["TABLE_NAME"]))
        if _key(name) not in wanted:
            continue  # the IN lists cross: a database of one name with a table of another
        kind = str(row["TABLE_TYPE"]).upper()
        engine = str(row["ENGINE"] or "").lower()
        _check_kind(name, kind, engine)
        if kind == VIEW:
            views.add(name)
        else:
            resolved[name] = (kind, engine)
    if views:
        resolved.update(_view_definitions(conn, views))
    return resolved


def _check_kind(name: _Name, kind: str, engine: str) -> None:
    shown = ".".join(name)
    if kind in BASE_TABLE_TYPES:
        if engine not in LOCAL_ENGINES:
            raise ObjectRefused(
                f"it reads {shown}, whose engine {engine.upper() or '(unknown)'} may reach "
                "another server when the table is opened (only tables that keep their rows "
                "on this server are explained)"
            )
        return
    if kind in READ_AS_IS_TYPES or kind == VIEW:
        return
    if kind == "TEMPORARY":
        raise ObjectRefused(f"it reads {shown}, a temporary table that is not Quanta's")
    raise ObjectRefused(f"it reads {shown}, a {kind.lower()} Quanta does not know")


def _view_definitions(conn: Reader, views: set[_Name]) -> dict[_Name, tuple[str, str]]:
    databases, tables = _in_lists(views)
    rows = conn.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS "
        f"WHERE TABLE_SCHEMA IN ({databases}) AND TABLE_NAME IN ({tables})",
        _args(views),
    )
    definitions = {
        (str(row["TABLE_SCHEMA"]), str(row["TABLE_NAME"])): str(row["VIEW_DEFINITION"] or "")
        for row in rows
    }
    checked: dict[_Name, tuple[str, str]] = {}
    for name in sorted(views):
        definition = definitions.get(name, "")
        shown = ".".join(name)
        if not definition.strip():
            raise ObjectRefused(
                f"it reads the view {shown}, whose definition Quanta's account cannot read "
                "(it needs SHOW VIEW): what the view runs cannot be checked"
            )
        refusal = definition_refusal(definition)
        if refusal is not None:
            raise ObjectRefused(f"it reads the view {shown}: {refusal}")
        checked[name] = (VIEW, definition)
    return checked


# A view's definition is parsed once (sqlglot is the slow part of a check), not at each run.
_tables_of_definition = functools.lru_cache(maxsize=256)(tables_read)


def _read_by_view(view: _Name, definition: str) -> set[_Name]:
    """The tables and views a view's definition reads (they must all be visible)."""
    tables = _tables_of_definition(definition)
    if tables is None:
        raise ObjectRefused(
            f"it reads the view {'.'.join(view)}, whose definition Quanta cannot read "
            "to find the tables it reads"
        )
    read: set[_Name] = set()
    for table in tables:
        database, _, name = table.rpartition(".")
        read.add((database or view[0], name))
    return read


def _check_columns(conn: Reader, tables: list[_Name], *, defaults: bool) -> None:
    """Generated columns' expressions (and, with ``defaults``, DEFAULT expressions) of
    ``tables``, by the same allowlist."""
    if not tables:
        return
    wanted = {_key(name) for name in tables}
    databases, table_names = _in_lists(tables)
    default_clause = " OR COLUMN_DEFAULT IS NOT NULL" if defaults else ""
    rows = conn.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT, GENERATION_EXPRESSION, "
        f"EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN ({databases}) "
        f"AND TABLE_NAME IN ({table_names}) "
        f"AND (COALESCE(GENERATION_EXPRESSION, '') <> ''{default_clause})",
        _args(tables),
    )
    for row in rows:
        name = (str(row["TABLE_SCHEMA"]), str(row["TABLE_NAME"]))
        if _key(name) not in wanted:
            continue
        column = f"{'.'.join(name)}.{row['COLUMN_NAME']}"
        generated = str(row["GENERATION_EXPRESSION"] or "")
        if generated:
            _check_expression(f"the generated column {column}", generated)
        if defaults and row["COLUMN_DEFAULT"] is not None and _is_expression(conn, row):
            what = f"the DEFAULT of {column} (the statement calls DEFAULT())"
            _check_expression(what, str(row["COLUMN_DEFAULT"]))


def _is_expression(conn: Reader, row: dict[str, Any]) -> bool:
    """MariaDB writes every DEFAULT as an expression (literals quoted); MySQL only those
    it marks DEFAULT_GENERATED (a literal is shown bare)."""
    return conn.is_mariadb or "DEFAULT_GENERATED" in str(row["EXTRA"] or "").upper()


def _check_expression(what: str, expression: str) -> None:
    refusal = definition_refusal(f"select {expression}")
    if refusal is not None:
        raise ObjectRefused(f"it reads {what}, which the server evaluates: {refusal}")


def _in_lists(names: Iterable[_Name]) -> tuple[str, str]:
    listed = list(names)
    databases = ", ".join(["%s"] * len({db for db, _ in listed}))
    tables = ", ".join(["%s"] * len({table for _, table in listed}))
    return databases, tables


def _args(names: Iterable[_Name]) -> list[str]:
    listed = list(names)
    return sorted({db for db, _ in listed}) + sorted({table for _, table in listed})
