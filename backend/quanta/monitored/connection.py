"""A guarded session on a monitored server: read-only transactions, time limits, one gate.

Every statement goes through :func:`quanta.monitored.guard.check_statement` after its
parameters are bound, or is one of the fixed session statements; the session's sql_mode is
Quanta's own (so the server lexes text as the guard does); queries run only inside a READ
ONLY transaction the connection opened, always rolled back (no session is ever read-write:
DML is explained as its equivalent SELECT); statements that execute an example (ANALYZE,
profiles) pass only on a connection opened as an execution target; every statement has a
time limit the server enforces.

Nothing the server says is passed on: an error becomes its code, its SQLSTATE where known
and Quanta's own sentence, never the server's message (which can carry data, e.g. the
XPATH error of EXTRACTVALUE echoes what it read). Statement text is never logged above
DEBUG, and never in errors: examples may hold personal data.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import time
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Self

import pymysql
import pymysql.cursors

from quanta.analysis.sqllexer import SESSION_SQL_MODE
from quanta.core.mysql import connect
from quanta.monitored.errors import ConnectionFailed, ServerError, StatementRefused
from quanta.monitored.guard import (
    check_session_statement,
    check_statement,
    is_analyze,
    with_time_limit,
)
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

log = logging.getLogger(__name__)

_VERSION_QUERY = "SHOW VARIABLES WHERE Variable_name IN ('version', 'version_comment')"
NANOSECONDS_PER_MICROSECOND = 1000
MILLISECONDS_PER_SECOND = 1000
ER_ACCESS_DENIED = 1045
ER_BAD_DB = 1049
CR_CONNECTION_ERROR = 2003
_CONNECT_ERRORS = {
    1040: "the server has too many connections",
    1129: "the server blocks this host after too many connection errors (FLUSH HOSTS)",
    1130: "the account may not connect from this host",
    2013: "the connection was lost during the handshake",
}
_PRIVILEGE = "the account '{user}' lacks a privilege the statement needs"
# Quanta's sentence for the common server errors, with their SQLSTATE: the server's own
# message is never shown (it can quote the data a statement read).
_ERRORS: dict[int, tuple[str, str]] = {
    1044: (_PRIVILEGE, "42000"),
    1142: (_PRIVILEGE, "42000"),
    1143: (_PRIVILEGE, "42000"),
    1227: (_PRIVILEGE, "42000"),
    1370: (_PRIVILEGE, "42000"),
    1064: (
        "the server could not parse the statement (is the example truncated, or written for "
        "another server version?)",
        "42000",
    ),
    1146: ("a table the statement names does not exist (or the account cannot see it)", "42S02"),
    1054: ("a column the statement names does not exist", "42S22"),
    1052: ("a column name in the statement is ambiguous", "23000"),
    1049: ("the statement's database does not exist", "42000"),
    1305: ("a function the statement calls does not exist", "42000"),
    1242: ("a subquery returns more than one row", "21000"),
    1792: ("refused in a read-only transaction", "25006"),
    1969: ("stopped by the {limit:g} s statement time limit", "70100"),
    1317: ("stopped by the {limit:g} s statement time limit", "70100"),
    3024: ("stopped by the {limit:g} s statement time limit", "HY000"),
    2006: ("the connection was lost", "HY000"),
    2013: ("the connection was lost", "HY000"),
}


class _Mode(enum.Enum):
    IDLE = "idle"
    READ_ONLY = "read only"


class GuardedConnection:
    """One session on a monitored server; open it with ``with``.

    ``execution_target``: the session is on an execution target (a replica or sandbox an
    admin configured), where statements that execute an example (ANALYZE, EXPLAIN ANALYZE,
    :meth:`stream`) may run; elsewhere they are refused. Only
    :class:`quanta.monitored.target.TargetConnection` sets it, after verifying the server
    read-only on this very session.

    Example (not run here, it needs a server)::

        with GuardedConnection(options) as conn, conn.read_only():
            rows = conn.query("EXPLAIN SELECT * FROM orders WHERE id = %s", (7,))
    """

    def __init__(
        self,
        options: ConnectionOptions,
        settings: MonitoredSettings | None = None,
        *,
        execution_target: bool = False,
    ) -> None:
        """Describe the session; nothing is opened until ``__enter__``."""
        self.options = options
        self.settings = settings or MonitoredSettings()
        self.execution_target = execution_target
        self.version = ""
        self.version_comment = ""
        self._conn: pymysql.Connection[pymysql.cursors.DictCursor] | None = None
        self._mode = _Mode.IDLE

    def __enter__(self) -> Self:
        self._conn = self._connect()
        try:
            self._prepare_session()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def is_mariadb(self) -> bool:
        """MariaDB (SET STATEMENT, ANALYZE FORMAT=JSON) rather than MySQL/Percona Server."""
        return "mariadb" in self.version.lower()

    @property
    def flavor(self) -> str:
        """``mariadb`` or ``mysql`` (Percona Server is MySQL here), as the advisor wants."""
        return "mariadb" if self.is_mariadb else "mysql"

    def time_limited(self, sql: str) -> str:
        """``sql`` with the statement time limit written into it (see with_time_limit)."""
        return with_time_limit(
            sql, mariadb=self.is_mariadb, seconds=self.settings.statement_timeout
        )

    @contextlib.contextmanager
    def read_only(self) -> Iterator[Self]:
        """A READ ONLY transaction, always rolled back; queries run only inside one."""
        with self._transaction("START TRANSACTION READ ONLY", _Mode.READ_ONLY):
            yield self

    def query(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run one guarded statement and return its rows as dicts.

        Raises:
            StatementRefused: not a statement Quanta may send, or no transaction is open.
            ServerError: the server refused or stopped it.
        """
        conn = self._checked_conn()
        with conn.cursor() as cursor:
            text = self._guarded(cursor.mogrify(sql, args))
            self._execute(cursor, text)
            return list(cursor.fetchall())

    def stream(self, sql: str) -> tuple[int, int]:
        """Execute a guarded SELECT, discarding its rows: (rows sent, response time in µs).

        The time is measured from sending the statement to reading its last row, as the
        application would see it. Only on an execution target: it executes the statement.
        """
        conn = self._checked_conn()
        if not self.execution_target:
            raise StatementRefused(
                "refused to send to a monitored server: a statement is executed only on an "
                "execution target"
            )
        with conn.cursor(pymysql.cursors.SSCursor) as cursor:
            text = self._guarded(cursor.mogrify(sql))
            start = time.perf_counter_ns()
            self._execute(cursor, text)
            with self._server_errors():  # a time limit can strike while rows stream in
                rows = sum(1 for _ in cursor)
            elapsed = time.perf_counter_ns() - start
        return rows, elapsed // NANOSECONDS_PER_MICROSECOND

    def set_session(self, sql: str) -> None:
        """Send one of the fixed session statements (see guard.check_session_statement)."""
        check_session_statement(sql)
        conn = self._open_conn()
        with conn.cursor() as cursor:
            self._execute(cursor, sql)

    def close(self) -> None:
        """Close the session (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(pymysql.err.Error):
                conn.close()

    # ------------------------------------------------------------------ internals

    @contextlib.contextmanager
    def _transaction(self, start: str, mode: _Mode) -> Iterator[None]:
        if self._mode is not _Mode.IDLE:
            raise StatementRefused("a transaction is already open on this session")
        self.set_session(start)
        self._mode = mode
        try:
            yield
        finally:
            self._mode = _Mode.IDLE
            if self._conn is not None:
                with contextlib.suppress(ServerError):
                    self.set_session("ROLLBACK")

    def _checked_conn(self) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        if self._mode is _Mode.IDLE:
            raise StatementRefused("statements run only inside read_only()")
        return self._open_conn()

    def _guarded(self, text: str) -> str:
        check_statement(text)
        if is_analyze(text) and not self.execution_target:
            raise StatementRefused(
                "refused to send to a monitored server: ANALYZE executes the statement, "
                "which happens only on an execution target"
            )
        return text

    def _open_conn(self) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        if self._conn is None:
            raise StatementRefused("the connection is not open (use it in a with block)")
        return self._conn

    def _execute(self, cursor: pymysql.cursors.Cursor, text: str) -> None:
        log.debug("%s: sending a %s statement", self.options.address, text.split(None, 1)[0])
        with self._server_errors():
            cursor.execute(text)

    @contextlib.contextmanager
    def _server_errors(self) -> Iterator[None]:
        try:
            yield
        except pymysql.err.MySQLError as exc:
            raise ServerError(f"{self.options.address}: {self._describe(exc)}") from exc

    def _connect(self) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        o, s = self.options, self.settings
        try:
            return connect(
                o,
                program_name="quanta",
                connect_timeout=s.connect_timeout,
                read_timeout=s.read_timeout,
                write_timeout=s.write_timeout,
            )
        except pymysql.err.MySQLError as exc:
            raise ConnectionFailed(_connect_message(o, exc)) from exc
        except OSError as exc:  # a socket path that is not a socket, a DNS failure
            raise ConnectionFailed(f"cannot connect to {o.address}: {exc}") from exc

    def _prepare_session(self) -> None:
        # First of all: the sql_mode under which the server lexes text as the guard does.
        self.set_session(f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'")
        conn = self._open_conn()
        with conn.cursor() as cursor:
            self._execute(cursor, self._guarded(_VERSION_QUERY))
            found = {str(r["Variable_name"]): str(r["Value"]) for r in cursor.fetchall()}
        self.version = found.get("version", "")
        self.version_comment = found.get("version_comment", "")
        self.set_session("SET SESSION time_zone = '+00:00'")
        self.set_session("SET SESSION TRANSACTION READ ONLY")
        seconds = self.settings.statement_timeout
        if self.is_mariadb:
            self.set_session(f"SET SESSION max_statement_time = {seconds:g}")
        else:  # MySQL 5.7.8+: limits SELECTs, the only statements executed
            self.set_session(
                f"SET SESSION max_execution_time = {int(seconds * MILLISECONDS_PER_SECOND)}"
            )

    def _describe(self, exc: pymysql.err.MySQLError) -> str:
        code, _message = _code_message(exc)
        if code is None:
            return f"the server refused the statement ({type(exc).__name__})"
        sentence, sqlstate = _ERRORS.get(
            code, ("the server refused the statement (its message is not shown)", "")
        )
        text = sentence.format(user=self.options.user, limit=self.settings.statement_timeout)
        state = f", SQLSTATE {sqlstate}" if sqlstate else f", {type(exc).__name__}"
        return f"{text} (error {code}{state})"


def _code_message(exc: pymysql.err.MySQLError) -> tuple[int | None, str]:
    args: tuple[Any, ...] = tuple(exc.args)
    if len(args) >= 2 and isinstance(args[0], int):
        return args[0], str(args[1])
    return None, str(exc) or type(exc).__name__


def _connect_message(options: ConnectionOptions, exc: pymysql.err.MySQLError) -> str:
    code, message = _code_message(exc)
    who = f"cannot connect to {options.address} as '{options.user}'"
    if code == ER_ACCESS_DENIED:
        return (
            f"{who}: access denied - wrong user name or password, or the account may not "
            f"connect from this host (error {code})"
        )
    if code == ER_BAD_DB:
        return f"{who}: database '{options.database}' does not exist (error {code})"
    if code == CR_CONNECTION_ERROR:  # the driver's own text: host, port, errno
        return f"{who}: no server answers there ({message})"
    if code in _CONNECT_ERRORS:
        return f"{who}: {_CONNECT_ERRORS[code]} (error {code})"
    # Anything else: the code only, as for statements (the server's text is not passed on).
    return f"{who}: the server refused the connection" + (f" (error {code})" if code else "")
