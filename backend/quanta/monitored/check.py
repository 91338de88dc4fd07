"""``test connection``: can Quanta reach the server, and what may its account do there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from quanta.analysis.grants import unreadable_schemas
from quanta.analysis.sqltext import quote_ident
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import MonitoredError
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.privileges import AccountPrivileges, read_privileges
from quanta.monitored.target import ReadOnlyState, TargetConnection

__all__ = ["Capability", "ConnectionReport", "check_target", "test_connection"]

_ENABLED = "YES"


@dataclass(frozen=True, slots=True)
class Capability:
    """One thing checked: whether it works, and a line saying what that means."""

    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class ConnectionReport:
    """The outcome of a connection test; ``error`` set (and nothing else) when it failed."""

    connected: bool
    error: str | None = None
    server_version: str = ""
    flavor: str = ""
    account: str = ""
    privileges: tuple[str, ...] = ()
    excess_privileges: tuple[str, ...] = ()
    capabilities: tuple[Capability, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for the instance page."""
        return {
            "connected": self.connected,
            "error": self.error,
            "server_version": self.server_version,
            "flavor": self.flavor,
            "account": self.account,
            "privileges": list(self.privileges),
            "excess_privileges": list(self.excess_privileges),
            "capabilities": [c.to_dict() for c in self.capabilities],
        }


def test_connection(
    options: ConnectionOptions,
    *,
    settings: MonitoredSettings | None = None,  # noqa: PT028
    schemas: Sequence[str] = (),  # noqa: PT028
) -> ConnectionReport:
    """Connect, and report what the account may and may not do; never raises for the server.

    Checks: the read-only session with its time limit, the account's privileges (from
    SHOW GRANTS; anything beyond SELECT, PROCESS, SHOW VIEW and REPLICATION CLIENT is
    flagged, and diagnostics refuse such an account unless an admin overrides it), reading
    the default database, EXPLAIN, performance_schema digests, and SELECT on ``schemas``
    (those the instance's queries use: EXPLAIN and schema snapshots read them).

    Only what the monitored server is used for is reported: nothing fine by design shows as
    missing. DML needs no write privilege (it is explained as its equivalent SELECT), and
    profiling is not checked here: profiles never run on the monitored server, only on the
    execution target (:func:`check_target`).
    """
    try:
        with GuardedConnection(options, settings) as conn:
            return _report(conn, schemas)
    except MonitoredError as exc:
        return ConnectionReport(connected=False, error=str(exc))


# The name is the "test connection" action, not a pytest test: keep pytest from collecting it.
test_connection.__test__ = False  # type: ignore[attr-defined]


def check_target(
    options: ConnectionOptions, settings: MonitoredSettings | None = None
) -> tuple[ReadOnlyState, tuple[Capability, ...]]:
    """Connect to an execution target, verify it read-only, and report what runs there.

    Returns what was verified and the capabilities of the target (profiling).

    Raises:
        TargetNotReadOnly: it is not read-only for the account (the message says the fix).
        ConnectionFailed, ServerError: as for any monitored server.
    """
    with TargetConnection(options, settings) as conn, conn.read_only():
        return conn.state, (_profiling(conn),)


# EXPLAIN of DML needs nothing more: it is explained as its equivalent SELECT (plans.py).
_EXPLAIN_WORKS = (
    "EXPLAIN works (UPDATE, DELETE and INSERT ... SELECT examples are explained as their "
    "equivalent SELECT: no write privilege is needed)"
)


def _report(conn: GuardedConnection, schemas: Sequence[str]) -> ConnectionReport:
    account = read_privileges(conn)
    with conn.read_only():
        capabilities = [
            Capability(
                "read_only_session",
                True,
                "sessions run in read-only transactions with a "
                f"{conn.settings.statement_timeout:g} s statement time limit",
            ),
            _least_privilege(account),
            _probe(conn, "default_database", _database_probe(conn), "reads the default database"),
            _probe(conn, "explain", "EXPLAIN SELECT 1", _EXPLAIN_WORKS),
            _schemas_readable(account, schemas),
            _probe(
                conn,
                "performance_schema_digests",
                "SELECT COUNT(*) AS n FROM performance_schema.events_statements_summary_by_digest",
                "reads performance_schema statement digests",
            ),
        ]
    return ConnectionReport(
        connected=True,
        server_version=conn.version,
        flavor=conn.flavor,
        account=account.account,
        privileges=account.privileges,
        excess_privileges=account.excess,
        capabilities=tuple(capabilities),
    )


def _least_privilege(account: AccountPrivileges) -> Capability:
    if account.least:
        return Capability(
            "least_privilege",
            True,
            "the account has only SELECT, PROCESS, SHOW VIEW and REPLICATION CLIENT",
        )
    return Capability(
        "least_privilege",
        False,
        f"the account has privileges Quanta does not need ({', '.join(account.excess)}): "
        "diagnostics refuse to run with it unless an admin allows broad privileges on the "
        "instance; grant only SELECT, PROCESS, SHOW VIEW and REPLICATION CLIENT",
    )


def _schemas_readable(account: AccountPrivileges, schemas: Sequence[str]) -> Capability:
    """SELECT on the schemas the instance's queries use, with the GRANT that is missing."""
    if not schemas:
        return Capability(
            "read_schemas", True, "no schema seen in this instance's queries yet to check"
        )
    missing = unreadable_schemas(account.privileges, schemas)
    if not missing:
        return Capability(
            "read_schemas",
            True,
            f"reads every schema the instance's queries use ({', '.join(sorted(schemas))})",
        )
    user, _, host = account.account.rpartition("@")
    grants = "; ".join(f"GRANT SELECT ON {quote_ident(s)}.* TO '{user}'@'{host}'" for s in missing)
    return Capability(
        "read_schemas",
        False,
        f"cannot read {', '.join(missing)}: EXPLAIN, table snapshots and index suggestions "
        f"fail for queries on {'it' if len(missing) == 1 else 'them'}. Run: {grants}",
    )


def _database_probe(conn: GuardedConnection) -> str | None:
    database = conn.options.database
    if not database:
        return None
    escaped = database.replace("\\", "\\\\").replace("'", "''")
    return f"SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{escaped}'"


def _probe(conn: GuardedConnection, name: str, sql: str | None, works: str) -> Capability:
    if sql is None:
        return Capability(name, True, "no default database configured")
    try:
        conn.query(sql)
    except MonitoredError as exc:
        return Capability(name, False, str(exc))
    return Capability(name, True, works)


def _profiling(conn: GuardedConnection) -> Capability:
    have = conn.query("SHOW VARIABLES LIKE 'have_profiling'")
    if have and str(have[0].get("Value", "")).upper() == _ENABLED:
        return Capability("profiling", True, "profiles use SHOW PROFILE")
    try:
        rows = conn.query(
            "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = %s",
            ("events_stages_history_long",),
        )
    except MonitoredError as exc:
        return Capability("profiling", False, f"no SHOW PROFILE, and {exc}")
    if rows and str(rows[0]["ENABLED"]).upper() == _ENABLED:
        return Capability("profiling", True, "profiles use performance_schema stage events")
    return Capability(
        "profiling",
        False,
        "no SHOW PROFILE and the events_stages_history_long consumer is off: no profiles",
    )
