"""Check a suggested index on a sandbox server: EXPLAIN before, add the index, EXPLAIN after.

The monitored server is only read (through GuardedConnection: SHOW CREATE TABLE, one
information_schema read and ``SELECT ... LIMIT n`` per table). Everything that writes happens
on the instance's sandbox, a separate server an admin registered as scratch space:

* MariaDB (and MySQL): each source database gets a scratch database with a random name; the
  tables the statement reads are created there from SHOW CREATE TABLE and filled with the
  sample of rows; the statement is explained, the index added, the statement explained
  again, the index dropped; the scratch databases are dropped at the end whatever happens.
* MySQL 8: the index is added INVISIBLE, so the first plan is unchanged, and the second
  EXPLAIN runs with ``optimizer_switch='use_invisible_indexes=on'``.

The plans are of a sample, so their row estimates are the sample's; what matters is the
comparison: the suggestion counts as an improvement when the table's access type gets
better (ALL < index < range < ref < eq_ref < const) or, at the same type, fewer rows are
estimated. A ``replace`` is checked by adding the new index next to the one it replaces
(the optimizer picks the better), so nothing has to be restored between candidates.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, TypeAlias

import pymysql
import pymysql.cursors
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from quanta.analysis.advisor import AdviceColumn
from quanta.analysis.advisor.engine import index_ddl, quote_name
from quanta.monitored import GuardedConnection
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

__all__ = ["Candidate", "SandboxError", "access_rank", "validate_indexes"]

SCRATCH_PREFIX = "quanta_sandbox"
INSERT_CHUNK_ROWS = 500
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


class SandboxError(Exception):
    """The sandbox refused a step (connection, DDL, EXPLAIN); ``str()`` says which and why."""


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


# Subscripted only for the type checker: pymysql's class is generic in its stubs alone.
_Conn: TypeAlias = "pymysql.Connection[pymysql.cursors.DictCursor]"


@dataclass(slots=True)
class _Scratch:
    """The sandbox session and the scratch databases it created (dropped on the way out)."""

    conn: _Conn
    databases: list[str]


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
    limits: MonitoredSettings,
    sql: str,
    default_db: str | None,
    tables: Sequence[str],
    candidates: Sequence[Candidate],
    sample_rows: int,
) -> dict[int, dict[str, Any]]:
    """Plans before and after each candidate index on a sandbox copy, by candidate key.

    Each result is ``{"sandbox", "sample_rows", "before", "after", "improved", "summary"}``:
    ``before``/``after`` are the tabular EXPLAIN rows, ``summary`` one line such as
    ``"orders: ALL, 6000 rows -> ref idx_orders_phone, 2 rows"``.

    Raises:
        quanta.monitored.MonitoredError: reading the monitored server failed.
        SandboxError: a step on the sandbox failed.
    """
    copies = _read_tables(monitored, limits, tables, sample_rows)
    with _sandbox(sandbox, limits) as session:
        conn = session.conn
        flavor = _flavor(conn)
        scratch = _create_copies(session, copies)
        statement = _rewritten(sql, default_db, scratch)
        if default_db and default_db.lower() in scratch:
            _run(conn, f"USE {quote_name(scratch[default_db.lower()])}")
        before = _explain(conn, statement)
        results: dict[int, dict[str, Any]] = {}
        for candidate in candidates:
            after = _explain_with(conn, flavor, scratch, candidate, statement)
            aliases = _aliases(sql, default_db, candidate.table)
            results[candidate.key] = _compare(candidate, aliases, before, after) | {
                "sandbox": sandbox.address,
                "sample_rows": {name: len(copy.rows) for name, copy in copies.items()},
            }
    return results


def _read_tables(
    options: ConnectionOptions,
    limits: MonitoredSettings,
    tables: Sequence[str],
    sample_rows: int,
) -> dict[str, _TableCopy]:
    """SHOW CREATE TABLE and a sample of rows of each table, read-only on the monitored side."""
    copies: dict[str, _TableCopy] = {}
    with GuardedConnection(options, limits) as conn, conn.read_only():
        for table in tables:
            database, name = table.split(".", 1)
            quoted = f"{quote_name(database)}.{quote_name(name)}"
            shown = conn.query(f"SHOW CREATE TABLE {quoted}")[0]
            if "Create Table" not in shown:
                raise SandboxError(f"{table} is a view: only base tables are copied to a sandbox")
            create = shown["Create Table"]
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
            rows = conn.query(f"SELECT {listed} FROM {quoted} LIMIT %s", (sample_rows,))
            copies[table] = _TableCopy(
                create=str(create),
                columns=columns,
                rows=[tuple(row[c] for c in columns) for row in rows],
            )
    return copies


@contextlib.contextmanager
def _sandbox(options: ConnectionOptions, limits: MonitoredSettings) -> Iterator[_Scratch]:
    """A plain session on the sandbox server.

    Not a GuardedConnection on purpose: the guard refuses every write, and the sandbox is
    the one server Quanta is allowed to write to (CREATE DATABASE/TABLE, INSERT, ALTER).
    It is never the monitored server: its DSN is the instance's separate sandbox DSN.
    """
    try:
        conn = pymysql.connect(
            host=options.host,
            port=options.port,
            user=options.user,
            password=options.password,
            unix_socket=options.unix_socket,
            charset="utf8mb4",
            autocommit=True,
            connect_timeout=limits.connect_timeout,
            read_timeout=limits.read_timeout,
            write_timeout=limits.write_timeout,
            cursorclass=pymysql.cursors.DictCursor,
            program_name="quanta-sandbox",
        )
    except (pymysql.err.MySQLError, OSError) as exc:
        raise SandboxError(f"cannot connect to the sandbox {options.address}: {exc}") from exc
    scratch = _Scratch(conn, [])
    try:
        yield scratch
    finally:
        for database in scratch.databases:
            with contextlib.suppress(pymysql.err.MySQLError):
                _run(conn, f"DROP DATABASE IF EXISTS {quote_name(database)}")
        with contextlib.suppress(pymysql.err.Error):
            conn.close()


def _run(conn: _Conn, sql: str, args: Any = None, *, private: bool = False) -> list[dict[str, Any]]:
    """Execute on the sandbox; a refusal names the statement's first words and the error.

    ``private``: the statement holds an example or sampled rows, and server messages quote
    the text they choke on (syntax errors, duplicate keys), so only the code is kept.
    """
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql, args)
            return list(cursor.fetchall())
    except pymysql.err.MySQLError as exc:
        raise SandboxError(_refusal(" ".join(sql.split()[:2]), exc, private=private)) from exc


def _refusal(what: str, exc: pymysql.err.MySQLError, *, private: bool) -> str:
    args = tuple(exc.args)
    code = args[0] if args and isinstance(args[0], int) else None
    if private:
        return f"the sandbox refused {what} (error {code})"
    message = args[-1] if args else exc
    return f"the sandbox refused {what}: {message}" + (f" (error {code})" if code else "")


def _flavor(conn: _Conn) -> str:
    version = str(_run(conn, "SELECT VERSION() AS v")[0]["v"])
    return "mariadb" if "mariadb" in version.lower() else _MYSQL


def _create_copies(session: _Scratch, copies: Mapping[str, _TableCopy]) -> dict[str, str]:
    """Create the scratch databases and tables, fill them; source db -> scratch db (lower)."""
    conn = session.conn
    token = secrets.token_hex(4)
    scratch: dict[str, str] = {}
    for table in sorted(copies):
        database = table.split(".", 1)[0]
        if database not in scratch:
            scratch[database] = f"{SCRATCH_PREFIX}_{token}_{len(scratch)}"
            _run(conn, f"CREATE DATABASE {quote_name(scratch[database])}")
            session.databases.append(scratch[database])
    # SHOW CREATE TABLE names foreign keys to tables that are not copied: allowed without checks.
    _run(conn, "SET SESSION foreign_key_checks = 0")
    for table, copy in sorted(copies.items()):
        database, name = table.split(".", 1)
        _run(conn, f"USE {quote_name(scratch[database])}")
        _run(conn, copy.create)
        if copy.rows:
            listed = ", ".join(quote_name(c) for c in copy.columns)
            marks = ", ".join(["%s"] * len(copy.columns))
            insert = f"INSERT INTO {quote_name(name)} ({listed}) VALUES ({marks})"
            for start in range(0, len(copy.rows), INSERT_CHUNK_ROWS):
                try:
                    with conn.cursor() as cursor:
                        cursor.executemany(insert, copy.rows[start : start + INSERT_CHUNK_ROWS])
                except pymysql.err.MySQLError as exc:
                    what = f"the sample rows of {table}"
                    raise SandboxError(_refusal(what, exc, private=True)) from exc
        # Fresh statistics, or the optimizer judges the copy by an empty table's.
        _run(conn, f"ANALYZE TABLE {quote_name(name)}")
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


def _explain(conn: _Conn, statement: str) -> list[dict[str, Any]]:
    """Tabular EXPLAIN rows as JSON primitives; ``rows`` and ``id`` as numbers (MariaDB
    sends them as text)."""
    plan = [
        {k: _plain(v) for k, v in row.items()}
        for row in _run(conn, f"EXPLAIN {statement}", private=True)
    ]
    for row in plan:
        for key in NUMERIC_PLAN_FIELDS:
            if isinstance(row.get(key), str) and row[key].isdigit():
                row[key] = int(row[key])
    return plan


def _explain_with(
    conn: _Conn,
    flavor: str,
    scratch: Mapping[str, str],
    candidate: Candidate,
    statement: str,
) -> list[dict[str, Any]]:
    """EXPLAIN with the candidate index in place, then take it away again."""
    database, name = candidate.table.split(".", 1)
    target = f"{scratch[database]}.{name}"
    quoted = ".".join(quote_name(part) for part in target.split(".", 1))
    index = candidate.index_name
    if flavor == _MYSQL:
        # MySQL 8: an invisible index changes no other plan; only this session sees it.
        _run(conn, index_ddl(target, index, candidate.columns) + " INVISIBLE")
        _run(conn, "SET SESSION optimizer_switch = 'use_invisible_indexes=on'")
        try:
            return _explain(conn, statement)
        finally:
            _run(conn, "SET SESSION optimizer_switch = 'use_invisible_indexes=off'")
            _run(conn, f"ALTER TABLE {quoted} DROP INDEX {quote_name(index)}")
    _run(conn, index_ddl(target, index, candidate.columns))
    try:
        return _explain(conn, statement)
    finally:
        _run(conn, f"ALTER TABLE {quoted} DROP INDEX {quote_name(index)}")


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
