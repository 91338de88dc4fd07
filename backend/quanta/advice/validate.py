"""Check a suggested index on a sandbox server: EXPLAIN before, add the index, EXPLAIN after.

The monitored server is only read (through GuardedConnection: SHOW CREATE TABLE, one
information_schema read and ``SELECT ... LIMIT n`` per table). Everything that writes happens
on the instance's sandbox, a separate server an admin registered as scratch space, and only
after these checks, in this order:

1. The example is classified (:func:`quanta.analysis.sqlkind.classify_statement`); one that
   may not be explained is refused before any server is contacted, with the reason.
2. Only user tables the example itself names are copied: never a table of ``mysql``,
   ``sys``, ``performance_schema`` or ``information_schema``, nor one the statement does not
   name; at most ``QUANTA_ADVICE_SANDBOX_SAMPLE_ROWS`` rows each.
3. The sandbox must not be a monitored server: refused when its DSN names the host and port
   (or socket) of any instance's DSN, and, once connected and before anything is written,
   when its identity (``server_uuid`` on MySQL; ``hostname``, ``port`` and ``server_id`` on
   MariaDB, which has no server UUID; the Galera cluster UUID on both) is that of a server
   an instance DSN reaches, read through that instance's guarded read-only connection.
   An instance that cannot be read refuses too: it could be the same server. A sandbox
   that writes a binary log is used only when its session can turn ``sql_log_bin`` off,
   so that no replica of it (perhaps a monitored server) receives the copies.

The sandbox session is :class:`quanta.monitored.sandbox.SandboxSession`: the same guard,
lexer, sql_mode and per-statement limits as every session Quanta opens on a customer server,
with the sandbox's write forms declared next to the others (quanta.monitored.guard). What is
explained is the classifier's ``explain_text`` where it gives one (DML as its equivalent
SELECT), else the example, in a READ ONLY transaction always rolled back, after what it
reaches was checked (views, generated columns) as on the monitored server.

Copy, for MariaDB (and MySQL): each source database gets a scratch database with a random
name; the tables are created there from SHOW CREATE TABLE (only InnoDB, MyISAM, Aria and
MEMORY tables, without DATA/INDEX DIRECTORY, CONNECTION, UNION or executable comments, so a
FEDERATED or CONNECT table cannot reach another server) and filled with the sample; the
statement is explained, the index added, the statement explained again, the index dropped.
MySQL 8: the index is added INVISIBLE, so the first plan is unchanged, and the second
EXPLAIN runs with ``optimizer_switch='use_invisible_indexes=on'``.

The plans are of a sample, so their row estimates are the sample's; what matters is the
comparison: the suggestion counts as an improvement when the table's access type gets
better (ALL < index < range < ref < eq_ref < const) or, at the same type, fewer rows are
estimated. A ``replace`` is checked by adding the new index next to the one it replaces
(the optimizer picks the better), so nothing has to be restored between candidates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quanta.analysis.advisor import AdviceColumn
from quanta.analysis.advisor.engine import index_ddl, quote_name
from quanta.analysis.sqlkind import Classification, classify_statement
from quanta.monitored import GuardedConnection, MonitoredError
from quanta.monitored.guard import SHOW_IDENTITY_STATUS, SHOW_IDENTITY_VARIABLES
from quanta.monitored.objects import ObjectRefused, check_reached
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.sandbox import (
    SandboxError,
    SandboxRefused,
    SandboxSession,
    ServerIdentity,
    ddl_refusal,
    same_server,
)

__all__ = [
    "SYSTEM_SCHEMAS",
    "Candidate",
    "MonitoredServer",
    "PlanStatement",
    "SandboxError",
    "SandboxRefused",
    "SandboxSession",
    "ServerIdentity",
    "access_rank",
    "ddl_refusal",
    "same_server",
    "validate_indexes",
    "validate_plan",
]

# Schemas of the server itself: never copied (their rows are credentials, server state).
SYSTEM_SCHEMAS = frozenset(("mysql", "sys", "performance_schema", "information_schema"))
LOOPBACK_HOSTS = frozenset(("localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1"))
# Access types from worst to best (EXPLAIN's `type`); unknown ones rank as a full scan.
ACCESS_ORDER = (
    "ALL",
    "index",
    "index_merge",
    "range",
    "ref_or_null",
    "fulltext",
    "ref",
    "eq_ref",
    "const",
    "system",
)
NUMERIC_PLAN_FIELDS = ("id", "rows")
_ADD_INDEX_RE = re.compile(r"ADD INDEX (`(?:[^`]|``)+`|\S+) \(")
_MYSQL = "mysql"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One suggested index to try: its table (``db.t``), columns and DDL as advised."""

    key: int
    table: str
    columns: tuple[AdviceColumn, ...]
    ddl: str

    @property
    def index_name(self) -> str:
        """The index name the DDL adds."""
        match = _ADD_INDEX_RE.search(self.ddl)
        return match.group(1).strip("`").replace("``", "`") if match else "quanta_candidate"


class MonitoredServer(NamedTuple):
    """A registered instance with a DSN: a server the sandbox must not be."""

    name: str
    options: ConnectionOptions


@dataclass(frozen=True, slots=True)
class _TableCopy:
    create: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def access_rank(access_type: str | None) -> int:
    """Position of an EXPLAIN access type from worst (0, ALL) to best.

    Example:
        >>> access_rank("ALL") < access_rank("range") < access_rank("ref")
        True
    """
    try:
        return ACCESS_ORDER.index(access_type or "ALL")
    except ValueError:
        return 0


def validate_indexes(
    *,
    monitored: ConnectionOptions,
    sandbox: ConnectionOptions,
    instances: Sequence[MonitoredServer],
    limits: MonitoredSettings,
    sql: str,
    default_db: str | None,
    tables: Sequence[str],
    candidates: Sequence[Candidate],
    sample_rows: int,
) -> dict[int, dict[str, Any]]:
    """Plans before and after each candidate index on a sandbox copy, by candidate key.

    Each result is ``{"sandbox", "sample_rows", "before", "after", "improved", "summary"}``
    (plus ``"not_copied"``, the named tables left out, when there are some): ``before`` /
    ``after`` are the tabular EXPLAIN rows, ``summary`` one line such as
    ``"orders: ALL, 6000 rows -> ref idx_orders_phone, 2 rows"``. ``instances`` are every
    registered instance with a DSN: the sandbox must be none of their servers.

    Raises:
        quanta.monitored.MonitoredError: reading the monitored server failed.
        SandboxRefused: the example, the sandbox or a table is refused (the reason says).
        SandboxError: a step on the sandbox failed.
    """
    classification = classify_statement(sql)
    if not classification.explainable:
        raise SandboxRefused(f"not explained in the sandbox: {classification.explain_refusal}")
    copied, not_copied = tables_to_copy(sql, default_db, tables)
    _refuse_same_address(sandbox, instances)
    with SandboxSession(sandbox, limits) as session:
        _refuse_same_server(session.identity(), instances, limits)
        session.keep_out_of_binary_log()
        copies = _read_tables(monitored, limits, copied, sample_rows)
        scratch = _create_copies(session, copies)
        statement = _rewritten(_explained_text(classification, sql), default_db, scratch)
        if default_db and default_db.lower() in scratch:
            session.use(scratch[default_db.lower()])
        before = _explain(session, statement)
        results: dict[int, dict[str, Any]] = {}
        extra = {
            "sandbox": sandbox.address,
            "sample_rows": {name: len(copy.rows) for name, copy in copies.items()},
        } | ({"not_copied": not_copied} if not_copied else {})
        for candidate in candidates:
            if candidate.table.lower() not in copies:
                results[candidate.key] = extra | {
                    "error": f"{candidate.table} is not copied to the sandbox",
                    "improved": None,
                }
                continue
            after = _explain_with(session, scratch, candidate, statement)
            aliases = _aliases(sql, default_db, candidate.table)
            results[candidate.key] = _compare(candidate, aliases, before, after) | extra
    return results


@dataclass(frozen=True, slots=True)
class PlanStatement:
    """One statement a table's index plan serves: its key (the query_id), a real example and
    the database its unqualified names are in."""

    key: str
    sql: str
    default_db: str | None


def validate_plan(
    *,
    monitored: ConnectionOptions,
    sandbox: ConnectionOptions,
    instances: Sequence[MonitoredServer],
    limits: MonitoredSettings,
    table: str,
    adds: Sequence[Candidate],
    drops: Sequence[str],
    statements: Sequence[PlanStatement],
    sample_rows: int,
) -> dict[str, Any]:
    """Plans of every statement before and after a table's whole index plan, on one copy.

    The tables the statements name are copied once (same checks and limits as
    :func:`validate_indexes`); every statement is explained, then the plan's indexes are
    added and its drops made on the copy of ``table`` (``db.t``), and every statement is
    explained again. The indexes are really added and dropped: the copy is this session's
    own and dropped at the end, so no other session's plan can change, which is what
    MySQL's invisible and MariaDB's ignored indexes would otherwise be needed for, and it
    works on every version.

    Returns ``{"sandbox", "sample_rows", "queries"}`` where ``queries`` maps each statement's
    key to ``{"before", "after", "improved", "worse", "keys", "summary"}`` (``keys``: the
    indexes the table's plan rows use after) or to ``{"error"}`` when that statement could
    not be explained (refused by the classifier, or the sandbox refused its EXPLAIN).

    Raises:
        quanta.monitored.MonitoredError: reading the monitored server failed.
        SandboxRefused: the sandbox or a table is refused, or no statement can be checked.
        SandboxError: a step on the sandbox other than a statement's EXPLAIN failed.
    """
    queries: dict[str, dict[str, Any]] = {}
    accepted: list[tuple[PlanStatement, str]] = []
    named: set[str] = {table.lower()}
    for statement in statements:
        classification = classify_statement(statement.sql)
        if not classification.explainable:
            queries[statement.key] = {
                "error": f"not explained in the sandbox: {classification.explain_refusal}"
            }
            continue
        accepted.append((statement, _explained_text(classification, statement.sql)))
        named |= _named_tables(statement.sql, statement.default_db)
    if not accepted:
        raise SandboxRefused("no statement of the plan can be explained in the sandbox")
    # Only user tables the statements themselves name, never a system schema's.
    copied = sorted(t for t in named if not _is_system(t))
    not_copied = sorted(t for t in named if _is_system(t))
    _refuse_same_address(sandbox, instances)
    with SandboxSession(sandbox, limits) as session:
        _refuse_same_server(session.identity(), instances, limits)
        session.keep_out_of_binary_log()
        copies = _read_tables(monitored, limits, copied, sample_rows)
        scratch = _create_copies(session, copies)
        if table.lower() not in copies:
            raise SandboxError(f"{table} is not copied to the sandbox")
        texts = {s.key: _rewritten(text, s.default_db, scratch) for s, text in accepted}
        before = {s.key: _explain_in(session, scratch, s, texts[s.key]) for s, _ in accepted}
        database, name = table.lower().split(".", 1)
        target = f"{scratch[database]}.{name}"
        quoted = ".".join(quote_name(part) for part in target.split(".", 1))
        for dropped in drops:
            session.send(f"ALTER TABLE {quoted} DROP INDEX {quote_name(dropped)}")
        for add in adds:
            session.send(index_ddl(target, add.index_name, add.columns))
        after = {s.key: _explain_in(session, scratch, s, texts[s.key]) for s, _ in accepted}
    for statement, _text in accepted:
        old, new = before[statement.key], after[statement.key]
        if isinstance(old, str) or isinstance(new, str):
            queries[statement.key] = {"error": old if isinstance(old, str) else new}
            continue
        aliases = _aliases(statement.sql, statement.default_db, table)
        queries[statement.key] = _compare_plans(name, aliases, old, new)
    return {
        "sandbox": sandbox.address,
        "sample_rows": {copied_name: len(copy.rows) for copied_name, copy in copies.items()},
        "queries": queries,
    } | ({"not_copied": not_copied} if not_copied else {})


def _explain_in(
    session: SandboxSession, scratch: Mapping[str, str], statement: PlanStatement, text: str
) -> list[dict[str, Any]] | str:
    """The statement's plan in its default database's scratch copy, or why there is none
    (one statement the sandbox refuses does not stop the others)."""
    try:
        if statement.default_db and statement.default_db.lower() in scratch:
            session.use(scratch[statement.default_db.lower()])
        return _explain(session, text)
    except SandboxRefused:
        raise
    except SandboxError as exc:
        return str(exc)


def _compare_plans(
    table: str, aliases: set[str], before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, Any]:
    """One statement's plans on a table before and after: better, worse, the keys used."""
    old_type, old_rows = _access(before, aliases)
    new_type, new_rows = _access(after, aliases)
    old_rank, new_rank = access_rank(old_type), access_rank(new_type)
    keys = sorted(
        {
            key.strip()
            for r in after
            if _alias(r) in aliases and r.get("key")
            for key in str(r["key"]).split(",")
        }
    )
    used = f" {', '.join(keys)}" if keys else ""
    return {
        "before": before,
        "after": after,
        "improved": new_rank > old_rank or (new_rank == old_rank and new_rows < old_rows),
        "worse": new_rank < old_rank or (new_rank == old_rank and new_rows > old_rows),
        "keys": keys,
        "rows_before": old_rows,
        "rows_after": new_rows,
        "summary": f"{table}: {old_type}, {old_rows:,} rows -> {new_type}{used}, {new_rows:,} rows",
    }


def _explained_text(classification: Classification, sql: str) -> str:
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
    named = _named_tables(sql, default_db)
    copied = [t for t in tables if t.lower() in named and not _is_system(t)]
    left_out = sorted(t for t in named if _is_system(t) or t not in {c.lower() for c in copied})
    if not copied:
        raise SandboxRefused(
            "the example names no user table that can be copied to the sandbox"
            + (f" ({', '.join(left_out)} are never copied)" if left_out else "")
        )
    return copied, left_out


def _named_tables(sql: str, default_db: str | None) -> set[str]:
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


def _is_system(table: str) -> bool:
    return table.split(".", 1)[0].lower() in SYSTEM_SCHEMAS


def _refuse_same_address(sandbox: ConnectionOptions, instances: Sequence[MonitoredServer]) -> None:
    """SandboxRefused when the sandbox DSN reaches the host and port (or socket) of an
    instance's DSN: refused before connecting at all."""
    for instance in instances:
        other = instance.options
        same_socket = bool(sandbox.unix_socket) and sandbox.unix_socket == other.unix_socket
        same_port = (
            not sandbox.unix_socket
            and not other.unix_socket
            and _host(sandbox.host) == _host(other.host)
            and sandbox.port == other.port
        )
        if same_socket or same_port:
            raise SandboxRefused(
                f"the sandbox {sandbox.address} is the server of instance '{instance.name}' "
                f"(its DSN names the same {'socket' if same_socket else 'host and port'}): "
                "a sandbox must be a separate scratch server, since Quanta writes to it"
            )


def _host(host: str) -> str:
    lowered = host.lower().strip("[]")
    return "loopback" if lowered in LOOPBACK_HOSTS else lowered


def _refuse_same_server(
    identity: ServerIdentity, instances: Sequence[MonitoredServer], limits: MonitoredSettings
) -> None:
    """SandboxRefused when the sandbox is the server (or cluster) of any instance, or when
    an instance's server cannot be read to tell."""
    for instance in instances:
        try:
            with GuardedConnection(instance.options, limits) as conn, conn.read_only():
                other = ServerIdentity.from_rows(
                    conn.query(SHOW_IDENTITY_VARIABLES), conn.query(SHOW_IDENTITY_STATUS)
                )
        except MonitoredError as exc:
            raise SandboxRefused(
                f"cannot tell whether the sandbox is the server of instance '{instance.name}', "
                f"so it is not used: {exc}"
            ) from exc
        why = same_server(identity, other)
        if why:
            raise SandboxRefused(
                f"the sandbox is the server of instance '{instance.name}' ({why}): a sandbox "
                "must be a separate scratch server, since Quanta writes to it"
            )


def _read_tables(
    options: ConnectionOptions,
    limits: MonitoredSettings,
    tables: Sequence[str],
    sample_rows: int,
) -> dict[str, _TableCopy]:
    """SHOW CREATE TABLE and a sample of rows of each table, read-only on the monitored side
    (a transaction per table, its sample read after what it reaches was checked);
    keyed by ``db.t`` in lower case."""
    copies: dict[str, _TableCopy] = {}
    with GuardedConnection(options, limits) as conn:
        for table in tables:
            copies[table.lower()] = _read_table(conn, table, sample_rows)
    return copies


def _read_table(conn: GuardedConnection, table: str, sample_rows: int) -> _TableCopy:
    # One read-only transaction per table: its metadata locks are held briefly.
    with conn.read_only():
        database, name = table.split(".", 1)
        quoted = f"{quote_name(database)}.{quote_name(name)}"
        shown = conn.query(f"SHOW CREATE TABLE {quoted}")[0]
        if "Create Table" not in shown:
            raise SandboxError(f"{table} is a view: only base tables are copied to a sandbox")
        create = str(shown["Create Table"])
        refusal = ddl_refusal(create)
        if refusal:  # refused before any of its rows is read
            raise SandboxRefused(f"{table} is not copied to the sandbox: {refusal}")
        # Generated columns cannot be inserted: the sandbox computes them itself.
        columns = tuple(
            str(row["COLUMN_NAME"])
            for row in conn.query(
                "SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                "AND EXTRA NOT LIKE %s ORDER BY ORDINAL_POSITION",
                (database, name, "%GENERATED%"),
            )
        )
        listed = ", ".join(quote_name(c) for c in columns)
        sample = f"SELECT {listed} FROM {quoted} LIMIT {int(sample_rows)}"
        try:
            check_reached(conn, sample)
        except ObjectRefused as exc:
            raise SandboxRefused(f"{table} is not copied to the sandbox: {exc}") from exc
        rows = conn.query(sample)
        return _TableCopy(
            create=create,
            columns=columns,
            rows=[tuple(row[c] for c in columns) for row in rows],
        )


def _create_copies(session: SandboxSession, copies: Mapping[str, _TableCopy]) -> dict[str, str]:
    """Create the scratch databases and tables, fill them; source db -> scratch db (lower)."""
    scratch: dict[str, str] = {}
    for table in sorted(copies):
        database = table.split(".", 1)[0]
        if database not in scratch:
            scratch[database] = session.create_database()
    # SHOW CREATE TABLE names foreign keys to tables that are not copied: allowed without checks.
    session.send("SET SESSION foreign_key_checks = 0")
    for table, copy in sorted(copies.items()):
        database, name = table.split(".", 1)
        session.use(scratch[database])
        session.create_table(table, copy.create)
        if copy.rows:
            session.insert(table, name, copy.columns, copy.rows)
        session.analyze(name)
    return scratch


def _rewritten(sql: str, default_db: str | None, scratch: Mapping[str, str]) -> str:
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


def _aliases(sql: str, default_db: str | None, table: str) -> set[str]:
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


def _explain(session: SandboxSession, statement: str) -> list[dict[str, Any]]:
    """Tabular EXPLAIN rows as JSON primitives; ``rows`` and ``id`` as numbers (MariaDB
    sends them as text)."""
    plan = [{k: _plain(v) for k, v in row.items()} for row in session.explain(statement)]
    for row in plan:
        for key in NUMERIC_PLAN_FIELDS:
            if isinstance(row.get(key), str) and row[key].isdigit():
                row[key] = int(row[key])
    return plan


def _explain_with(
    session: SandboxSession,
    scratch: Mapping[str, str],
    candidate: Candidate,
    statement: str,
) -> list[dict[str, Any]]:
    """EXPLAIN with the candidate index in place, then take it away again."""
    database, name = candidate.table.lower().split(".", 1)
    target = f"{scratch[database]}.{name}"
    quoted = ".".join(quote_name(part) for part in target.split(".", 1))
    index = candidate.index_name
    drop = f"ALTER TABLE {quoted} DROP INDEX {quote_name(index)}"
    if session.flavor == _MYSQL:
        # MySQL 8: an invisible index changes no other plan; only this session sees it.
        session.send(index_ddl(target, index, candidate.columns) + " INVISIBLE")
        session.send("SET SESSION optimizer_switch = 'use_invisible_indexes=on'")
        try:
            return _explain(session, statement)
        finally:
            session.send("SET SESSION optimizer_switch = 'use_invisible_indexes=off'")
            session.send(drop)
    session.send(index_ddl(target, index, candidate.columns))
    try:
        return _explain(session, statement)
    finally:
        session.send(drop)


def _compare(
    candidate: Candidate,
    aliases: set[str],
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
) -> dict[str, Any]:
    old_type, old_rows = _access(before, aliases)
    new_type, new_rows = _access(after, aliases)
    old_rank, new_rank = access_rank(old_type), access_rank(new_type)
    improved = new_rank > old_rank or (new_rank == old_rank and new_rows < old_rows)
    keys = sorted({str(r.get("key")) for r in after if _alias(r) in aliases and r.get("key")})
    used = f" {', '.join(keys)}" if keys else ""
    table = candidate.table.split(".", 1)[1]
    summary = f"{table}: {old_type}, {old_rows:,} rows -> {new_type}{used}, {new_rows:,} rows"
    return {"before": before, "after": after, "improved": improved, "summary": summary}


def _access(plan: list[dict[str, Any]], aliases: set[str]) -> tuple[str, int]:
    """The worst access type and the summed row estimate of the table's plan rows."""
    rows = [r for r in plan if _alias(r) in aliases]
    if not rows:
        return "ALL", 0
    worst = min((str(r.get("type") or "ALL") for r in rows), key=access_rank)
    return worst, sum(int(r.get("rows") or 0) for r in rows)


def _alias(row: Mapping[str, Any]) -> str:
    return str(row.get("table") or "").lower()


def _plain(value: Any) -> Any:
    """EXPLAIN values as JSON primitives."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, datetime | date | time | timedelta):
        return str(value)
    return str(value)
