"""The suggestion sandbox's session: the one session Quanta writes through.

A sandbox is a separate scratch server an admin registered for an instance: suggested
indexes are tried there on copies of the tables (:mod:`quanta.advice.validate_index`). Its
session is a :class:`~quanta.monitored.connection.GuardedSession` like every session on a
customer server: the same sql_mode (so the server lexes text as the guard does), the same
limits written into every statement (time, metadata-lock wait, join search depth), the same
``KILL QUERY`` when the client gives up. What it may send is the guard's too: the session
statements and EXPLAIN that :mod:`quanta.monitored.guard` accepts everywhere, plus the write
forms declared there for sandboxes (:data:`~quanta.monitored.guard.SANDBOX_FORMS`: scratch
databases named after this session's random prefix, copies of tables into them, index DDL
on the copies), matched whole on the final text; anything else is refused.

Autocommit is on: each copy step is DDL or goes into Quanta's own scratch tables, and DDL
commits implicitly anyway; the scratch databases are dropped at the end whatever happens.
Every EXPLAIN runs inside a READ ONLY transaction opened for it and always rolled back,
after what the statement reaches was checked in it (:mod:`quanta.monitored.objects`: a view
or a generated column that exists on the sandbox server is checked as on any other); only
EXPLAIN, those catalog reads and ROLLBACK pass while it is open.
"""

from __future__ import annotations

import contextlib
import enum
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

import pymysql
import sqlglot
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenType

from quanta.analysis.sqlkind import plain_select_refusal
from quanta.analysis.sqltext import quote_ident
from quanta.monitored.connection import GuardedSession
from quanta.monitored.errors import ConnectionFailed, ServerError, StatementRefused
from quanta.monitored.guard import (
    IDENTITY_STATUS,
    SANDBOX_FORMS,
    SHOW_IDENTITY_STATUS,
    SHOW_IDENTITY_VARIABLES,
    SHOW_LOG_BIN,
    check_session_statement,
    check_statement,
)
from quanta.monitored.objects import ObjectRefused, check_reached
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

__all__ = [
    "COPY_ENGINES",
    "SCRATCH_PREFIX",
    "SandboxError",
    "SandboxRefused",
    "SandboxSession",
    "ServerIdentity",
    "ddl_refusal",
    "same_server",
]

SCRATCH_PREFIX = "quanta_sandbox"
INSERT_CHUNK_ROWS = 500
# Engines a copy may be created with: they keep the rows in the sandbox's own files.
COPY_ENGINES = frozenset(("innodb", "myisam", "aria", "memory"))
# Table options that would make a copy reach outside the sandbox's data directory or server.
_FOREIGN_OPTIONS = (("DATA", "DIRECTORY"), ("INDEX", "DIRECTORY"), ("CONNECTION",), ("UNION",))
_MYSQL_DIALECT = sqlglot.Dialect.get_or_raise("mysql")
_EXPLAIN_RE = re.compile(r"EXPLAIN (?P<statement>.+)", re.DOTALL)
# The catalog reads of quanta.monitored.objects, made while an EXPLAIN's transaction is open.
_CATALOG_RE = re.compile(
    r"SELECT TABLE_SCHEMA, TABLE_NAME, [A-Z_, ]+ FROM information_schema\.(?:TABLES|VIEWS|COLUMNS)"
    r" WHERE .+",
    re.DOTALL,
)
_READS = frozenset(
    ("SELECT VERSION() AS v", SHOW_IDENTITY_VARIABLES, SHOW_IDENTITY_STATUS, SHOW_LOG_BIN)
)
_REFUSED = "refused to send to the sandbox"


class SandboxError(Exception):
    """The sandbox refused a step (connection, DDL, EXPLAIN); ``str()`` says which and why."""


class SandboxRefused(SandboxError):
    """Quanta refused to use the sandbox, or to send it something; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """What tells one MySQL/MariaDB server from another (see :func:`same_server`)."""

    server_uuid: str | None
    server_id: str
    hostname: str
    port: str
    cluster_uuid: str | None

    @classmethod
    def from_rows(
        cls, variables: Sequence[Mapping[str, Any]], status: Sequence[Mapping[str, Any]]
    ) -> ServerIdentity:
        """From SHOW GLOBAL VARIABLES / STATUS rows (``Variable_name``, ``Value``)."""
        values = {str(r["Variable_name"]).lower(): str(r["Value"] or "") for r in variables}
        cluster = {str(r["Variable_name"]).lower(): str(r["Value"] or "") for r in status}
        return cls(
            server_uuid=values.get("server_uuid") or None,
            server_id=values.get("server_id", ""),
            hostname=values.get("hostname", "").lower(),
            port=values.get("port", ""),
            cluster_uuid=cluster.get(IDENTITY_STATUS) or None,
        )


def same_server(a: ServerIdentity, b: ServerIdentity) -> str | None:
    """Why ``a`` and ``b`` are the same server (or cluster), or None when they are not.

    MySQL's ``server_uuid`` is unique per data directory, so when both servers have one it
    decides; MariaDB has none, and ``server_id`` alone is 1 on most servers, so there the
    hostname, port and server_id together decide. A shared Galera cluster UUID means writes
    on one reach the other.

    Example:
        >>> a = ServerIdentity(None, "1", "db1", "3306", None)
        >>> same_server(a, ServerIdentity(None, "1", "db1", "3307", None)) is None
        True
        >>> same_server(a, a)
        'same hostname db1, port 3306 and server_id 1'
    """
    if a.cluster_uuid and a.cluster_uuid == b.cluster_uuid:
        return f"same Galera cluster {a.cluster_uuid}: writes there replicate to it"
    if a.server_uuid and b.server_uuid:
        return f"same server_uuid {a.server_uuid}" if a.server_uuid == b.server_uuid else None
    if (a.hostname, a.port, a.server_id) == (b.hostname, b.port, b.server_id):
        return f"same hostname {a.hostname}, port {a.port} and server_id {a.server_id}"
    return None


def ddl_refusal(create: str) -> str | None:
    """Why a SHOW CREATE TABLE text may not be run on the sandbox, or None.

    The text comes from the monitored server, whose tables anyone with CREATE may define:
    an engine that keeps rows elsewhere (FEDERATED, CONNECT, SPIDER, MERGE), a data
    directory, or an executable comment would make the copy reach outside the sandbox.

    Example:
        >>> ddl_refusal("CREATE TABLE `t` (`a` int) ENGINE=InnoDB") is None
        True
        >>> ddl_refusal("CREATE TABLE `t` (`a` int) ENGINE=CONNECT FILE_NAME='/etc/passwd'")
        'its engine CONNECT keeps rows outside the sandbox (only InnoDB, MyISAM, Aria, MEMORY)'
    """
    try:
        tokens = _MYSQL_DIALECT.tokenize(create)
    except TokenError:
        return "its definition could not be read"
    if any(token.comments for token in tokens):
        return "its definition holds a comment the server may run (/*! ... */)"
    words = [
        token.text.upper()
        for token in tokens
        if token.token_type not in (TokenType.IDENTIFIER, TokenType.STRING)
        and "STRING" not in token.token_type.name
    ]
    if ";" in words:
        return "its definition holds several statements"
    for option in _FOREIGN_OPTIONS:
        if any(tuple(words[i : i + len(option)]) == option for i in range(len(words))):
            return f"its definition has {' '.join(option)}, which reaches outside the sandbox"
    for index, word in enumerate(words[:-1]):
        if word == "ENGINE":
            engine = words[index + 2] if words[index + 1] == "=" else words[index + 1]
            if engine.lower() not in COPY_ENGINES:
                return (
                    f"its engine {engine} keeps rows outside the sandbox "
                    "(only InnoDB, MyISAM, Aria, MEMORY)"
                )
    return None


class _Mode(enum.Enum):
    IDLE = "idle"
    EXPLAIN = "explain"


class SandboxSession(GuardedSession):
    """The one session Quanta writes through, on a sandbox server; open it with ``with``.

    Every statement is checked (:meth:`check`) on its final text before it is sent; see the
    module docstring for what passes and when.
    """

    program_name = "quanta-sandbox"

    def __init__(self, options: ConnectionOptions, limits: MonitoredSettings) -> None:
        """Describe the session; nothing is opened until ``__enter__``."""
        super().__init__(options, limits)
        self.databases: list[str] = []
        self._prefix = f"{SCRATCH_PREFIX}_{secrets.token_hex(4)}"
        self._forms = tuple(
            (kind, re.compile(pattern.replace("{prefix}", self._prefix), re.DOTALL))
            for kind, pattern in SANDBOX_FORMS
        )
        self._mode = _Mode.IDLE
        self._current: str | None = None  # the scratch database USE made current

    def __enter__(self) -> Self:
        try:
            return super().__enter__()
        except ConnectionFailed as exc:
            raise SandboxError(_cannot_connect(self.options, exc)) from exc
        except ServerError as exc:
            raise SandboxError(f"the sandbox {self.options.address} refused: {exc}") from exc

    def __exit__(self, *exc_info: Any) -> None:
        try:
            for database in self.databases:
                with contextlib.suppress(SandboxError):
                    self.send(f"DROP DATABASE IF EXISTS {quote_ident(database)}")
        finally:
            self.close()

    @property
    def scratch_prefix(self) -> str:
        """The start of this session's scratch database names (``quanta_sandbox_<random>``)."""
        return self._prefix

    @property
    def explaining(self) -> bool:
        """Whether an EXPLAIN's transaction is open (only EXPLAIN, catalog reads, ROLLBACK)."""
        return self._mode is _Mode.EXPLAIN

    @property
    def default_database(self) -> str | None:
        """The scratch database USE made current: unqualified names resolve there."""
        return self._current

    @contextlib.contextmanager
    def explain_transaction(self) -> Iterator[None]:
        """The READ ONLY transaction an EXPLAIN runs in, always rolled back."""
        self.send("START TRANSACTION READ ONLY")
        self._mode = _Mode.EXPLAIN
        try:
            yield
        finally:
            self._mode = _Mode.IDLE
            with contextlib.suppress(SandboxError):
                self.send("ROLLBACK")

    def identity(self) -> ServerIdentity:
        """The sandbox server's identity (read, nothing written)."""
        return ServerIdentity.from_rows(
            self.send(SHOW_IDENTITY_VARIABLES), self.send(SHOW_IDENTITY_STATUS)
        )

    def keep_out_of_binary_log(self) -> None:
        """Keep this session's writes out of the sandbox's binary log, if it writes one.

        A sandbox that is a replication source would otherwise ship the scratch databases
        and the sampled rows to its replicas, which may be monitored servers. Setting
        ``sql_log_bin`` needs SUPER or BINLOG ADMIN: without it the sandbox is refused.
        """
        shown = self.send(SHOW_LOG_BIN)
        if not shown or str(shown[0]["Value"]).upper() != "ON":
            return
        try:
            self.send("SET SESSION sql_log_bin = 0")
        except SandboxError as exc:
            raise SandboxRefused(
                f"the sandbox {self.options.address} writes a binary log, so its replicas "
                f"would receive the copies, and its account '{self.options.user}' may not "
                "turn that off for its session (it needs BINLOG ADMIN or SUPER); turn "
                "log_bin off on the sandbox or grant the privilege"
            ) from exc

    def create_database(self) -> str:
        """A new scratch database of this session's; its name."""
        name = f"{self._prefix}_{len(self.databases)}"
        self.send(f"CREATE DATABASE {quote_ident(name)}")
        self.databases.append(name)
        return name

    def use(self, database: str) -> None:
        """Make one of this session's scratch databases the current one."""
        self.send(f"USE {quote_ident(database)}")
        self._current = database

    def create_table(self, table: str, create: str) -> None:
        """Run a copied SHOW CREATE TABLE in the current scratch database."""
        refusal = ddl_refusal(create)
        if refusal:
            raise SandboxRefused(f"{table} is not copied to the sandbox: {refusal}")
        self.send(create, private=True)

    def insert(self, table: str, name: str, columns: Sequence[str], rows: Sequence[Any]) -> None:
        """Insert sampled rows into a copied table of the current scratch database."""
        listed = ", ".join(quote_ident(c) for c in columns)
        marks = ", ".join(["%s"] * len(columns))
        insert = f"INSERT INTO {quote_ident(name)} ({listed}) VALUES ({marks})"
        self.check(insert)  # the template: the rows are data, bound by the driver
        conn = self._open_conn()
        for start in range(0, len(rows), INSERT_CHUNK_ROWS):
            with conn.cursor() as cursor:
                values = ", ".join(
                    cursor.mogrify(f"({marks})", row)
                    for row in rows[start : start + INSERT_CHUNK_ROWS]
                )
                text = f"INSERT INTO {quote_ident(name)} ({listed}) VALUES {values}"
                try:
                    self._execute(cursor, text)
                except ServerError as exc:
                    raise SandboxError(
                        _refusal(f"the sample rows of {table}", exc, private=True)
                    ) from exc

    def analyze(self, name: str) -> None:
        """Fresh statistics for a copied table, or the optimizer judges it as empty."""
        self.send(f"ANALYZE TABLE {quote_ident(name)}")

    def explain(self, statement: str) -> list[dict[str, Any]]:
        """Tabular EXPLAIN of ``statement`` (a SELECT) in a READ ONLY transaction of its own,
        always rolled back, after what it reaches was checked in it."""
        with self.explain_transaction():
            try:
                check_reached(self, statement)
            except ObjectRefused as exc:
                raise SandboxRefused(f"not explained in the sandbox: {exc}") from exc
            return self.send(f"EXPLAIN {statement}", private=True)

    def query(self, sql: str, args: Any = None) -> list[dict[str, Any]]:
        """A read (its parameters bound, then checked): what quanta.monitored.objects uses."""
        with self._open_conn().cursor() as cursor:
            text = cursor.mogrify(sql, args)
        return self.send(text)

    def send(self, sql: str, *, private: bool = False) -> list[dict[str, Any]]:
        """Send one statement of the allowed forms, as checked (no parameters bound after
        the check); a refusal names its first words.

        ``private``: the statement holds an example or a table definition, and server
        messages quote the text they choke on, so only the error code is kept.
        """
        kind = self.check(sql)
        conn = self._open_conn()
        try:
            if kind in ("session", "rollback") and _is_session_statement(sql):
                self.set_session(sql)  # the guard's own, sent as everywhere
                return []
            with conn.cursor() as cursor:
                self._execute(cursor, sql)
                return list(cursor.fetchall())
        except ServerError as exc:
            raise SandboxError(_refusal(" ".join(sql.split()[:2]), exc, private=private)) from exc

    def check(self, sql: str) -> str:
        """Raise SandboxRefused unless ``sql`` may be sent now, whole (see the module);
        what kind of statement it is (a SANDBOX_FORMS kind, session, read, explain...)."""
        kind = self._kind(sql)
        if kind is None:
            raise SandboxRefused(
                f"{_REFUSED}: {' '.join(sql.split()[:2])} ... is not one of the statements "
                "Quanta sends there"
            )
        if self.explaining and kind not in ("explain", "catalog", "rollback"):
            raise SandboxRefused(
                f"{_REFUSED}: {' '.join(sql.split()[:2])} ... while an EXPLAIN's transaction "
                "is open (only EXPLAIN and ROLLBACK)"
            )
        if not self.explaining and kind in ("explain", "catalog"):
            raise SandboxRefused(
                f"{_REFUSED}: {' '.join(sql.split()[:2])} ... outside an EXPLAIN's transaction"
            )
        if kind == "explain":
            statement = _EXPLAIN_RE.fullmatch(sql)
            refusal = plain_select_refusal(
                statement["statement"] if statement else sql, executes=False
            )
            if refusal is not None:
                raise SandboxRefused(f"not explained in the sandbox: {refusal}")
        if kind == "copy" and (
            self._current not in self.databases or (sql.startswith("CREATE") and ddl_refusal(sql))
        ):
            raise SandboxRefused(
                f"{_REFUSED}: {' '.join(sql.split()[:2])} ... copies go only into a scratch "
                "database of this session's"
            )
        return kind

    # ------------------------------------------------------------------ internals

    def _kind(self, sql: str) -> str | None:
        """What kind of statement ``sql`` is for the sandbox, or None: not one it sends."""
        for kind, form in self._forms:
            if form.fullmatch(sql):
                return kind
        if sql == "ROLLBACK":
            return "rollback"
        if _is_session_statement(sql):
            return "session"
        if sql in _READS:
            return "read"
        if _EXPLAIN_RE.fullmatch(sql):
            return "explain"
        if _CATALOG_RE.fullmatch(sql) and _passes_guard(sql):
            return "catalog"
        return None

    def _session_options(self) -> ConnectionOptions:
        # No current database: the session makes its scratch ones.
        return replace(self.options, database=None)

    def _gate(self, text: str) -> str:
        self.check(text)
        return text

    def _read_version(self) -> tuple[str, str]:
        return str(self.send("SELECT VERSION() AS v")[0]["v"]), ""


def _is_session_statement(sql: str) -> bool:
    """Whether ``sql`` is one of the guard's session statements."""
    try:
        check_session_statement(sql)
    except StatementRefused:
        return False
    return True


def _passes_guard(sql: str) -> bool:
    try:
        check_statement(sql)
    except StatementRefused:
        return False
    return True


def _cannot_connect(options: ConnectionOptions, exc: ConnectionFailed) -> str:
    detail = str(exc).removeprefix(f"cannot connect to {options.address} as '{options.user}': ")
    return f"cannot connect to the sandbox {options.address}: {detail}"


def _refusal(what: str, exc: ServerError, *, private: bool) -> str:
    if exc.abandoned:
        return f"the sandbox did not answer {what}: {exc}"
    cause = exc.__cause__
    args = tuple(cause.args) if isinstance(cause, pymysql.err.MySQLError) else ()
    code = exc.code
    if private or not args:
        return f"the sandbox refused {what} (error {code})"
    message = args[-1]
    return f"the sandbox refused {what}: {message}" + (f" (error {code})" if code else "")
