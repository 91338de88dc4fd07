"""Guarded sessions on customer servers: one gate, per-statement limits, read-only.

:class:`GuardedSession` is what every session Quanta opens on a customer server shares
(monitored server, execution target, suggestion sandbox): the session's sql_mode is
Quanta's own (so the server lexes text as the guard does), and every statement that reads
or writes carries its own limits (:class:`~quanta.monitored.guard.StatementLimits`: time,
metadata-lock wait, join search depth), written into it on MariaDB (``SET STATEMENT ...
FOR``) and sent again before it on MySQL, since stored code the server runs can change the
session's own values. When the client stops waiting for an answer (its read timed out) or
loses the connection, it stops its statement on the server with ``KILL QUERY`` from a fresh
session of the same account, and the error says so (:attr:`ServerError.abandoned`).

:class:`GuardedConnection` is the read-only session: every statement goes through
:func:`quanta.monitored.guard.check_statement` after its parameters are bound, or is one of
the fixed session statements; queries run only inside a READ ONLY transaction the
connection opened, always rolled back (no session is ever read-write: DML is explained as
its equivalent SELECT); statements that execute an example (ANALYZE, profiles) pass only on
a connection opened as an execution target. The sandbox session
(:mod:`quanta.monitored.sandbox`) adds its own write forms to the same gate.

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

from quanta.analysis.sqltext import SESSION_SQL_MODE
from quanta.core.mysql import connect
from quanta.monitored.errors import ConnectionFailed, ServerError, StatementRefused
from quanta.monitored.guard import (
    StatementLimits,
    check_session_statement,
    check_statement,
    is_analyze,
    with_limits,
)
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

log = logging.getLogger(__name__)

_VERSION_QUERY = "SHOW VARIABLES WHERE Variable_name IN ('version', 'version_comment')"
NANOSECONDS_PER_MICROSECOND = 1000
MILLISECONDS_PER_SECOND = 1000
ER_ACCESS_DENIED = 1045
ER_BAD_DB = 1049
ER_NO_SUCH_THREAD = 1094
ER_KILL_DENIED = 1095
CR_CONNECTION_ERROR = 2003
# The client lost the connection or stopped waiting (its read timed out): the statement
# may still run on the server.
ABANDONED = frozenset((2006, 2013, 2055))
# Session statements that set a limit themselves: MariaDB's SET STATEMENT would put the old
# value back right after them, so they go as they are.
_SETS_LIMITS = ("SET SESSION max_statement_time", "SET SESSION max_execution_time")
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
    1205: (
        "a table it reads is locked by another session (a schema change?): Quanta stopped "
        "waiting at its lock wait limit",
        "HY000",
    ),
    1969: ("stopped by the {limit:g} s statement time limit", "70100"),
    1317: ("stopped by the {limit:g} s statement time limit", "70100"),
    3024: ("stopped by the {limit:g} s statement time limit", "HY000"),
    2006: ("the connection was lost", "HY000"),
    2013: ("the server did not answer in time, or the connection was lost", "HY000"),
    2055: ("the connection was lost", "HY000"),
}


class _Mode(enum.Enum):
    IDLE = "idle"
    READ_ONLY = "read only"


class GuardedSession:
    """What every session on a customer server shares; open it with ``with``.

    Subclasses say what may be sent (:meth:`_gate`) and how the session is prepared
    (:meth:`_prepare_session`, calling this one first).
    """

    program_name = "quanta"

    def __init__(self, options: ConnectionOptions, settings: MonitoredSettings | None = None):
        """Describe the session; nothing is opened until ``__enter__``."""
        self.options = options
        self.settings = settings or MonitoredSettings()
        self.version = ""
        self.version_comment = ""
        self.thread_id: int | None = None  # the server's id of this session (KILL QUERY)
        self._conn: pymysql.Connection[pymysql.cursors.DictCursor] | None = None

    def __enter__(self) -> Self:
        self._conn = self._connect(self._session_options())
        # The handshake's connection id (pymysql's stubs leave it untyped).
        self.thread_id = int(self._conn.thread_id())  # type: ignore[no-untyped-call]
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
        """MariaDB (SET STATEMENT, ANALYZE FORMAT=JSON) rather than MySQL/Percona Server,
        from VERSION() (a proxy's handshake may name another server)."""
        return "mariadb" in self.version.lower()

    @property
    def flavor(self) -> str:
        """``mariadb`` or ``mysql`` (Percona Server is MySQL here), as the advisor wants."""
        return "mariadb" if self.is_mariadb else "mysql"

    @property
    def limits(self) -> StatementLimits:
        """The limits every statement of this session carries."""
        return self.settings.limits

    @property
    def default_database(self) -> str | None:
        """The database unqualified names resolve in."""
        return self.options.database

    def time_limited(self, sql: str) -> str:
        """``sql`` with the limits written into it, as it is sent (see with_limits); as it
        is until the server's version is known (the session's first two fixed statements)."""
        if not self.version:
            return sql
        return with_limits(sql, mariadb=self.is_mariadb, limits=self.limits)

    def set_session(self, sql: str) -> None:
        """Send one of the fixed session statements (see guard.check_session_statement)."""
        check_session_statement(sql)
        conn = self._open_conn()
        text = sql if sql.startswith(_SETS_LIMITS) else self.time_limited(sql)
        with conn.cursor() as cursor:
            self._send(cursor, text)

    def close(self) -> None:
        """Close the session (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(pymysql.err.Error):
                conn.close()

    # ------------------------------------------------------------------ internals

    def _session_options(self) -> ConnectionOptions:
        return self.options

    def _gate(self, text: str) -> str:
        """The text to send, or StatementRefused: what may be sent on this session."""
        check_statement(text)
        return text

    def _open_conn(self) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        if self._conn is None:
            raise StatementRefused("the connection is not open (use it in a with block)")
        return self._conn

    def _execute(self, cursor: pymysql.cursors.Cursor, text: str) -> None:
        """Send a checked statement with its limits: written into it on MariaDB; on MySQL
        the session's values sent again just before it (stored code may have changed them)."""
        if self.version and not self.is_mariadb:
            self.set_session(self.limits.mysql_session())
        self._send(cursor, self.time_limited(text))

    def _send(self, cursor: pymysql.cursors.Cursor, text: str) -> None:
        log.debug("%s: sending a %s statement", self.options.address, text.split(None, 1)[0])
        with self._server_errors():
            cursor.execute(text)

    @contextlib.contextmanager
    def _server_errors(self) -> Iterator[None]:
        """pymysql's errors as ServerError; when the client gave up, the statement is
        stopped on the server first."""
        try:
            yield
        except pymysql.err.MySQLError as exc:
            code, _message = _code_message(exc)
            described = f"{self.options.address}: {self._describe(exc)}"
            if code in ABANDONED:
                self.close()  # pymysql closed the socket; nothing more goes on this session
                stopped = self._stop_own_statement()
                raise ServerError(f"{described}; {stopped}", code=code, abandoned=True) from exc
            raise ServerError(described, code=code) from exc

    def _stop_own_statement(self) -> str:
        """``KILL QUERY`` this session's statement from a fresh session of the same account
        (which needs no privilege); what happened, for the message."""
        if self.thread_id is None:
            return "Quanta could not stop it on the server (its session id is unknown)"
        kill = f"KILL QUERY {self.thread_id}"
        check_session_statement(kill)
        try:
            conn = self._connect(self._session_options())
        except ConnectionFailed:
            return f"Quanta could not reach the server to stop it ({kill} not sent)"
        try:
            with conn.cursor() as cursor:
                cursor.execute(self.time_limited(kill))
        except pymysql.err.MySQLError as exc:
            code, _message = _code_message(exc)
            if code == ER_NO_SUCH_THREAD:
                return "its session had already ended on the server"
            if code == ER_KILL_DENIED:
                # The thread runs as another account (a view's or function's definer).
                return (
                    f"the server refused {kill} (error {code}: the statement runs as another "
                    f"account, a view's or function's definer); its own "
                    f"{self.limits.seconds:g} s limit stops it"
                )
            return f"{kill} failed (error {code}); its own {self.limits.seconds:g} s limit stops it"
        finally:
            with contextlib.suppress(pymysql.err.Error):
                conn.close()
        log.warning("%s: stopped Quanta's own statement (%s)", self.options.address, kill)
        return f"Quanta stopped it on the server ({kill})"

    def _connect(
        self, options: ConnectionOptions
    ) -> pymysql.Connection[pymysql.cursors.DictCursor]:
        s = self.settings
        try:
            return connect(
                options,
                program_name=self.program_name,
                connect_timeout=s.connect_timeout,
                read_timeout=s.read_timeout,
                write_timeout=s.write_timeout,
            )
        except pymysql.err.MySQLError as exc:
            raise ConnectionFailed(_connect_message(options, exc)) from exc
        except OSError as exc:  # a socket path that is not a socket, a DNS failure
            raise ConnectionFailed(f"cannot connect to {options.address}: {exc}") from exc

    def _prepare_session(self) -> None:
        # First of all: the sql_mode under which the server lexes text as the guard does,
        # then the version, which says how limits are written. These two go as they are:
        # fixed texts that run no stored code and open no table.
        self.set_session(f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'")
        self.version, self.version_comment = self._read_version()
        self.set_session("SET SESSION time_zone = '+00:00'")
        # The session's own limits too: a backstop for what goes without SET STATEMENT.
        if self.is_mariadb:
            self.set_session(f"SET SESSION max_statement_time = {self.limits.seconds:g}")
        else:  # MySQL 5.7.8+: limits SELECTs, the only statements executed
            self.set_session(f"SET SESSION max_execution_time = {self.limits.milliseconds}")

    def _read_version(self) -> tuple[str, str]:
        """VERSION() and the version comment (a fixed read through the gate)."""
        conn = self._open_conn()
        with conn.cursor() as cursor:
            self._execute(cursor, self._gate(_VERSION_QUERY))
            found = {str(r["Variable_name"]): str(r["Value"]) for r in cursor.fetchall()}
        return found.get("version", ""), found.get("version_comment", "")

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


class GuardedConnection(GuardedSession):
    """One read-only session on a monitored server; open it with ``with``.

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
        super().__init__(options, settings)
        self.execution_target = execution_target
        self._mode = _Mode.IDLE

    @contextlib.contextmanager
    def read_only(self) -> Iterator[Self]:
        """A READ ONLY transaction, always rolled back; queries run only inside one."""
        with self._transaction("START TRANSACTION READ ONLY", _Mode.READ_ONLY):
            yield self

    def query(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """Run one guarded statement and return its rows as dicts.

        Raises:
            StatementRefused: not a statement Quanta may send, or no transaction is open.
            ServerError: the server refused or stopped it, or the client gave up on it.
        """
        conn = self._checked_conn()
        with conn.cursor() as cursor:
            text = self._gate(cursor.mogrify(sql, args))
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
            text = self._gate(cursor.mogrify(sql))
            start = time.perf_counter_ns()
            self._execute(cursor, text)
            with self._server_errors():  # a time limit can strike while rows stream in
                rows = sum(1 for _ in cursor)
            elapsed = time.perf_counter_ns() - start
        return rows, elapsed // NANOSECONDS_PER_MICROSECOND

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

    def _gate(self, text: str) -> str:
        check_statement(text)
        if is_analyze(text) and not self.execution_target:
            raise StatementRefused(
                "refused to send to a monitored server: ANALYZE executes the statement, "
                "which happens only on an execution target"
            )
        return text

    def _prepare_session(self) -> None:
        super()._prepare_session()
        self.set_session("SET SESSION TRANSACTION READ ONLY")


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
