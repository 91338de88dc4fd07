"""Copies of the tables a statement names, made on the sandbox from the monitored server.

The monitored server is only read (through GuardedConnection: SHOW CREATE TABLE, one
information_schema read and ``SELECT ... LIMIT n`` per table, each after what it reaches was
checked). Each source database gets a scratch database with a random name on the sandbox;
the tables are created there from SHOW CREATE TABLE (only InnoDB, MyISAM, Aria and MEMORY
tables, without DATA/INDEX DIRECTORY, CONNECTION, UNION or executable comments, so a
FEDERATED or CONNECT table cannot reach another server: quanta.monitored.sandbox.ddl_refusal)
and filled with at most ``QUANTA_ADVICE_SANDBOX_SAMPLE_ROWS`` rows each. A sandbox that writes
a binary log is used only when its session can turn ``sql_log_bin`` off, so that no replica
of it (perhaps a monitored server) receives the copies.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from quanta.advice.isolation import MonitoredServer, refuse_same_address, refuse_same_server
from quanta.analysis.advisor.engine import quote_name
from quanta.monitored import GuardedConnection
from quanta.monitored.objects import ObjectRefused, check_reached
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.sandbox import SandboxError, SandboxRefused, SandboxSession, ddl_refusal

__all__ = ["SandboxCopy", "TableCopy", "sandbox_copy"]


@dataclass(frozen=True, slots=True)
class TableCopy:
    """One table as read from the monitored server: its definition and sample rows."""

    create: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class SandboxCopy:
    """The sandbox session with the copies in place: tables by ``db.t`` and the scratch
    database of each source database (lower case)."""

    session: SandboxSession
    copies: Mapping[str, TableCopy]
    scratch: Mapping[str, str]

    def sample_rows(self) -> dict[str, int]:
        """Rows copied per table (``db.t``)."""
        return {name: len(copy.rows) for name, copy in self.copies.items()}

    def use_default(self, default_db: str | None) -> None:
        """Make the default database's scratch copy the session's database, if it has one
        (unqualified names then resolve in it)."""
        if default_db and default_db.lower() in self.scratch:
            self.session.use(self.scratch[default_db.lower()])

    def scratch_table(self, table: str) -> tuple[str, str]:
        """The copy of ``table`` (``db.t``): its ``scratch.t`` name and that name quoted."""
        database, name = table.lower().split(".", 1)
        target = f"{self.scratch[database]}.{name}"
        quoted = ".".join(quote_name(part) for part in target.split(".", 1))
        return target, quoted


@contextmanager
def sandbox_copy(
    *,
    monitored: ConnectionOptions,
    sandbox: ConnectionOptions,
    instances: Sequence[MonitoredServer],
    limits: MonitoredSettings,
    tables: Sequence[str],
    sample_rows: int,
) -> Iterator[SandboxCopy]:
    """A sandbox session holding copies of ``tables``, after the sandbox was found to be
    none of the ``instances``' servers (quanta.advice.isolation); closed on exit.

    Raises:
        quanta.monitored.MonitoredError: reading the monitored server failed.
        SandboxRefused: the sandbox or a table is refused (the reason says).
        SandboxError: a step on the sandbox failed.
    """
    refuse_same_address(sandbox, instances)
    with SandboxSession(sandbox, limits) as session:
        refuse_same_server(session.identity(), instances, limits)
        session.keep_out_of_binary_log()
        copies = _read_tables(monitored, limits, tables, sample_rows)
        yield SandboxCopy(session, copies, _create_copies(session, copies))


def _read_tables(
    options: ConnectionOptions,
    limits: MonitoredSettings,
    tables: Sequence[str],
    sample_rows: int,
) -> dict[str, TableCopy]:
    """SHOW CREATE TABLE and a sample of rows of each table, read-only on the monitored side
    (a transaction per table, its sample read after what it reaches was checked);
    keyed by ``db.t`` in lower case."""
    copies: dict[str, TableCopy] = {}
    with GuardedConnection(options, limits) as conn:
        for table in tables:
            copies[table.lower()] = _read_table(conn, table, sample_rows)
    return copies


def _read_table(conn: GuardedConnection, table: str, sample_rows: int) -> TableCopy:
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
        return TableCopy(
            create=create,
            columns=columns,
            rows=[tuple(row[c] for c in columns) for row in rows],
        )


def _create_copies(session: SandboxSession, copies: Mapping[str, TableCopy]) -> dict[str, str]:
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
