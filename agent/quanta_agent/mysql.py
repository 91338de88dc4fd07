"""Monitoring connections to MySQL/MariaDB: read-only, time-limited, reconnecting.

Everything the poller and the checker send to a monitored server goes through
:class:`MonitorConnection`, which only ever runs ``SELECT`` and ``SHOW`` statements (anything
else is refused before it reaches the server), inside a read-only session with a statement
time limit, so a monitoring bug can neither change data nor hold the server up.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

import pymysql
import pymysql.cursors
from pymysql.constants import CR

from quanta.analysis.dsn import ConnectionOptions, parse_dsn

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5
READ_TIMEOUT_SECONDS = 30
WRITE_TIMEOUT_SECONDS = 30
# Every monitoring statement is a small read: one taking longer is stopped by the server.
STATEMENT_TIMEOUT_SECONDS = 10.0
# Uptime has a one-second resolution: boot times estimated as now - Uptime jitter by < 1 s.
RESTART_SLACK = timedelta(seconds=1.5)

# Client-side error codes meaning the connection is gone (server restarted, network cut).
_LOST_CONNECTION_CODES = frozenset(
    (CR.CR_SERVER_GONE_ERROR, CR.CR_SERVER_LOST, CR.CR_CONN_HOST_ERROR, CR.CR_CONNECTION_ERROR)
)
# Server-side: connection killed (ER_CONNECTION_KILLED), shutdown in progress (ER_SERVER_SHUTDOWN).
_LOST_CONNECTION_SERVER_CODES = frozenset((1927, 1053))
_ALLOWED_FIRST_WORDS = frozenset(("SELECT", "SHOW"))
_LEADING_NOISE_RE = re.compile(r"^(?:\s+|/\*.*?\*/|#[^\n]*\n?|--\s[^\n]*\n?)*", re.DOTALL)
_FILE_OUTPUT_RE = re.compile(r"\bINTO\s+(?:OUTFILE|DUMPFILE)\b", re.IGNORECASE)


def connect(
    options: ConnectionOptions,
    *,
    program_name: str,
    connect_timeout: float,
    read_timeout: float,
    write_timeout: float | None = None,
) -> pymysql.Connection[pymysql.cursors.DictCursor]:
    """Open a connection as the server's ``quanta.core.mysql.connect`` does: utf8mb4,
    autocommit, rows as dicts, the given time limits, ``program_name`` shown by the server.

    The agent's own: it imports nothing of the server's infrastructure. It opens a handful of
    long-lived sessions, so it needs none of the server's per-process TLS context sharing.
    pymysql's errors (and OSError for a socket path that is not one) are the caller's.
    """
    return pymysql.connect(
        **options.connect_arguments(
            program_name=program_name,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            write_timeout=write_timeout,
        ),
        cursorclass=pymysql.cursors.DictCursor,
    )


class MonitorError(Exception):
    """A monitored server could not be reached or read; the message says which and why."""


class StatementRefused(MonitorError):
    """A statement other than a plain SELECT/SHOW was about to be sent to a monitored server."""


class Flavor(enum.StrEnum):
    """Which server family a connection talks to (their variables and tables differ)."""

    MARIADB = "mariadb"
    MYSQL = "mysql"
    PERCONA = "percona"


def check_read_only_statement(sql: str) -> None:
    """Raise StatementRefused unless ``sql`` is one plain SELECT or SHOW statement.

    Example:
        >>> check_read_only_statement("SELECT 1")
        >>> check_read_only_statement("DELETE FROM t")
        Traceback (most recent call last):
        ...
        quanta_agent.mysql.StatementRefused: refused to send a DELETE statement ...
    """
    body = _LEADING_NOISE_RE.sub("", sql, count=1)
    first = body.split(None, 1)[0].upper() if body.strip() else ""
    if first not in _ALLOWED_FIRST_WORDS:
        raise StatementRefused(
            f"refused to send a {first or 'empty'} statement to a monitored server: "
            "the agent only runs SELECT and SHOW"
        )
    if ";" in body.rstrip().rstrip(";"):
        raise StatementRefused("refused to send several statements at once to a monitored server")
    if _FILE_OUTPUT_RE.search(body):
        raise StatementRefused("refused to send SELECT ... INTO OUTFILE/DUMPFILE to a server")


class MonitorConnection:
    """One lazily opened monitoring session: read-only, time-limited, reconnects once.

    Sessions run with ``time_zone = '+00:00'`` (timestamps are UTC), ``TRANSACTION READ
    ONLY`` (every statement runs in a read-only transaction) and a per-statement time limit.
    """

    def __init__(
        self,
        params: ConnectionOptions,
        *,
        name: str = "",
        statement_timeout: float = STATEMENT_TIMEOUT_SECONDS,
    ) -> None:
        """Describe the connection; nothing is opened until the first query."""
        self.params = params
        self.name = name or params.address
        self.statement_timeout = statement_timeout
        self._conn: pymysql.Connection[pymysql.cursors.DictCursor] | None = None
        self._version = ""
        self._version_comment = ""
        self.connections_opened = 0

    @classmethod
    def from_dsn(cls, dsn: str, *, name: str = "", **kwargs: Any) -> MonitorConnection:
        """A connection for a DSN (:func:`quanta.analysis.dsn.parse_dsn`; the user may be left
        out, to connect as the operating-system user)."""
        return cls(parse_dsn(dsn, user_required=False), name=name, **kwargs)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def version(self) -> str:
        """The server's VERSION(), e.g. ``10.11.6-MariaDB-log`` (connects if needed)."""
        self._ensure_open()
        return self._version

    @property
    def flavor(self) -> Flavor:
        """MariaDB, Percona Server or MySQL, from VERSION() and @@version_comment."""
        self._ensure_open()
        if "mariadb" in self._version.lower():
            return Flavor.MARIADB
        if "percona" in self._version_comment.lower():
            return Flavor.PERCONA
        return Flavor.MYSQL

    def query(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run one SELECT/SHOW and return its rows as dicts; reconnect once if the link broke.

        Raises:
            StatementRefused: ``sql`` is not a plain SELECT or SHOW.
            MonitorError: the server cannot be reached, or refused the statement.
        """
        check_read_only_statement(sql)
        try:
            return self._run(sql, args)
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError) as exc:
            if not _is_lost_connection(exc):
                raise MonitorError(f"{self.name}: {_error_text(exc)} in: {_short(sql)}") from exc
            log.info("%s: connection lost (%s); reconnecting", self.name, _error_text(exc))
            self._drop()
        try:
            return self._run(sql, args)
        except pymysql.err.MySQLError as exc:
            raise MonitorError(f"{self.name}: {_error_text(exc)} in: {_short(sql)}") from exc

    def variables(self, *names: str) -> dict[str, str]:
        """Global variables by lower-case name; a variable the server lacks is absent."""
        return self._show_pairs("SHOW GLOBAL VARIABLES", names)

    def status(self, *names: str) -> dict[str, str]:
        """Global status counters by lower-case name; a counter the server lacks is absent."""
        return self._show_pairs("SHOW GLOBAL STATUS", names)

    def server_clock(self, *status_names: str) -> tuple[ServerClock, dict[str, str]]:
        """The server's UTC time and uptime, and the global status counters asked for."""
        sent = datetime.now(UTC)
        now = self.query("SELECT UTC_TIMESTAMP(6) AS now")[0]["now"].replace(tzinfo=UTC)
        # The local time when the server read its clock: the middle of the round trip (a
        # busy host's round trips take a while, and the offset must not carry one).
        local = sent + (datetime.now(UTC) - sent) / 2
        status = self.status("Uptime", *status_names)
        return ServerClock(now=now, uptime=int(status.get("uptime", 0)), local=local), status

    def close(self) -> None:
        """Close the session (a later query opens a new one)."""
        self._drop()

    # ------------------------------------------------------------------ internals

    def _show_pairs(self, show: str, names: tuple[str, ...]) -> dict[str, str]:
        placeholders = ", ".join(["%s"] * len(names))
        rows = self.query(f"{show} WHERE Variable_name IN ({placeholders})", names)
        return {str(r["Variable_name"]).lower(): str(r["Value"]) for r in rows}

    def _run(self, sql: str, args: Any) -> list[dict[str, Any]]:
        conn = self._ensure_open()
        with conn.cursor() as cursor:
            cursor.execute(sql, args)
            return list(cursor.fetchall())

    def _ensure_open(self) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        p = self.params
        try:
            conn = connect(
                p,
                program_name="quanta-agent",
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                read_timeout=READ_TIMEOUT_SECONDS,
                write_timeout=WRITE_TIMEOUT_SECONDS,
            )
        except pymysql.err.MySQLError as exc:
            raise MonitorError(
                f"{self.name}: cannot connect to {p.address} as '{p.user}': {_error_text(exc)}"
            ) from exc
        try:
            self._prepare_session(conn)
        except pymysql.err.MySQLError as exc:
            conn.close()
            raise MonitorError(
                f"{self.name}: cannot prepare the session: {_error_text(exc)}"
            ) from exc
        self.connections_opened += 1
        return conn

    def _prepare_session(self, conn: pymysql.Connection[pymysql.cursors.DictCursor]) -> None:
        # Session settings, sent directly: they are not reads, and they are fixed strings.
        with conn.cursor() as cursor:
            cursor.execute("SELECT VERSION() AS v, @@version_comment AS c")
            row = cursor.fetchone() or {}
            self._version, self._version_comment = str(row.get("v", "")), str(row.get("c", ""))
            cursor.execute("SET SESSION time_zone = '+00:00'")
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            if "mariadb" in self._version.lower():
                cursor.execute(f"SET SESSION max_statement_time = {self.statement_timeout:.3f}")
            else:
                try:  # MySQL 5.7.8+ / Percona Server; limits SELECTs only, which is all we run
                    cursor.execute(
                        f"SET SESSION max_execution_time = {int(self.statement_timeout * 1000)}"
                    )
                except pymysql.err.MySQLError as exc:
                    log.warning("%s: no statement time limit: %s", self.name, _error_text(exc))

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(pymysql.err.Error):  # already closed by the server
                conn.close()


@dataclass(frozen=True, slots=True)
class ServerClock:
    """A server's UTC time and uptime read together."""

    now: datetime
    uptime: int
    # This host's clock at the same moment, where it was read with the server's.
    local: datetime | None = None

    @property
    def offset(self) -> timedelta:
        """How far the server's clock is ahead of this host's (zero when not measured)."""
        return self.now - self.local if self.local is not None else timedelta(0)

    @property
    def boot_time(self) -> datetime:
        """When the server started, within a second."""
        return self.now - timedelta(seconds=self.uptime)

    def restarted_since(self, earlier: ServerClock) -> bool:
        """Whether the server restarted between ``earlier`` and this reading."""
        return self.uptime < earlier.uptime or self.boot_time - earlier.boot_time > RESTART_SLACK


def _is_lost_connection(exc: pymysql.err.MySQLError) -> bool:
    if isinstance(exc, pymysql.err.InterfaceError):
        return True
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    return code in _LOST_CONNECTION_CODES or code in _LOST_CONNECTION_SERVER_CODES


def _error_text(exc: BaseException) -> str:
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) >= 2 and isinstance(args[0], int):
        return f"{args[1]} (error {args[0]})"
    return str(exc) or type(exc).__name__


def _short(sql: str, limit: int = 80) -> str:
    flat = " ".join(sql.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
