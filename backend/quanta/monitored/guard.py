"""The one gate every statement passes before it is sent to a monitored server.

Allowed, and nothing else:

* a SELECT that :func:`quanta.analysis.sqlkind.plain_select_refusal` accepts: the same
  lexer and function allowlist as the examples' classification (no INTO, no locking
  clause, no variables, no call outside the allowlist, no executable comment);
* ``EXPLAIN [FORMAT=...]`` of such a SELECT (DML is explained as its equivalent SELECT,
  never sent);
* ``EXPLAIN ANALYZE`` / MariaDB's ``ANALYZE [FORMAT=JSON]`` of such a SELECT (they execute
  it: :class:`~quanta.monitored.connection.GuardedConnection` lets them through only on an
  execution target);
* ``SHOW ...``, checked by the same lexer and allowlist;
* any of the above behind MariaDB's ``SET STATEMENT max_statement_time=N, lock_wait_timeout=N,
  optimizer_search_depth=N FOR`` or with the ``MAX_EXECUTION_TIME`` hint Quanta writes for
  MySQL (:func:`with_limits`);
* a fixed list of session statements (sql_mode, time zone, read-only transactions, time
  limits, profiling, ``KILL QUERY`` of Quanta's own statement), matched whole, also behind
  that ``SET STATEMENT``;
* on a sandbox session only, the statement forms of :data:`SANDBOX_FORMS` (scratch
  databases, copies of tables, index DDL on them), declared here next to the others.

Every statement carries its own limits (:class:`StatementLimits`): stored code the server
runs can change the session's variables (``SET SESSION max_statement_time = 0``), not the
ones a statement was sent with.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from quanta.analysis.sqlkind import plain_select_refusal, show_refusal
from quanta.analysis.sqltext import SESSION_SQL_MODE
from quanta.monitored.errors import StatementRefused

__all__ = [
    "IDENTITY_STATUS",
    "SANDBOX_FORMS",
    "SHOW_IDENTITY_STATUS",
    "SHOW_IDENTITY_VARIABLES",
    "SHOW_LOG_BIN",
    "StatementLimits",
    "check_session_statement",
    "check_statement",
    "is_analyze",
    "with_limits",
]

# re.ASCII: \s is the server's whitespace only, not U+00A0 and kin.
_FLAGS = re.IGNORECASE | re.DOTALL | re.ASCII
# MariaDB's per-statement variables, as Quanta writes them (StatementLimits): the time limit,
# then optionally the lock wait and the optimizer's search depth; nothing else.
_SET_STATEMENT_RE = re.compile(
    r"\ASET\s+STATEMENT\s+max_statement_time\s*=\s*\d+(?:\.\d+)?"
    r"(?:\s*,\s*lock_wait_timeout\s*=\s*\d+)?(?:\s*,\s*optimizer_search_depth\s*=\s*\d+)?"
    r"\s+FOR\s+(?P<rest>.+)\Z",
    _FLAGS,
)
_EXPLAIN_RE = re.compile(
    r"\A(?:EXPLAIN|DESCRIBE|DESC)\s+(?:(?P<analyze>ANALYZE)\s+)?"
    r"(?:FORMAT\s*=\s*(?:JSON|TRADITIONAL|TREE)\s+)?(?P<rest>.+)\Z",
    _FLAGS,
)
_ANALYZE_RE = re.compile(r"\AANALYZE\s+(?:FORMAT\s*=\s*JSON\s+)?(?P<rest>.+)\Z", _FLAGS)
_SHOW_RE = re.compile(r"\ASHOW\s", _FLAGS)
_LEADING_SELECT_RE = re.compile(r"\A(?P<lead>\s*)SELECT\b", _FLAGS)
# The one optimizer hint Quanta writes itself, at the very start (MySQL's time limit, see
# with_time_limit); the lexer refuses every other /*+ ... */.
_QUANTA_HINT_RE = re.compile(r"\ASELECT /\*\+ MAX_EXECUTION_TIME\(\d+\) \*/", re.ASCII)
# Session statements Quanta sends itself, matched whole: nothing else can pass as one.
_SESSION_STATEMENTS = tuple(
    re.compile(pattern, re.IGNORECASE | re.ASCII)
    for pattern in (
        rf"\ASET SESSION sql_mode = '{SESSION_SQL_MODE}'\Z",
        r"\ASET SESSION time_zone = '\+00:00'\Z",
        r"\ASET SESSION TRANSACTION READ ONLY\Z",
        r"\ASET SESSION max_statement_time = \d+(?:\.\d+)?\Z",
        r"\ASET SESSION max_execution_time = \d+\Z",
        # MySQL: the limits re-sent before every statement (StatementLimits.mysql_session).
        r"\ASET SESSION max_execution_time = \d+, lock_wait_timeout = \d+, "
        r"optimizer_search_depth = \d+\Z",
        r"\ASET SESSION profiling = [01]\Z",
        r"\ASET SESSION profiling_history_size = \d+\Z",
        r"\ASTART TRANSACTION READ ONLY\Z",
        r"\AROLLBACK\Z",
        # From a fresh session of the same account, when the client gave up on a statement.
        r"\AKILL QUERY \d+\Z",
    )
)
_REFUSED = "refused to send to a monitored server"
MILLISECONDS_PER_SECOND = 1000

# What identifies a server: read the same way on a sandbox and on every monitored instance
# (a sandbox must be none of them, see quanta.advice.isolation).
IDENTITY_VARIABLES = ("server_uuid", "server_id", "hostname", "port")
IDENTITY_STATUS = "wsrep_cluster_state_uuid"
SHOW_IDENTITY_VARIABLES = (
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
    + ", ".join(f"'{name}'" for name in IDENTITY_VARIABLES)
    + ")"
)
SHOW_IDENTITY_STATUS = f"SHOW GLOBAL STATUS LIKE '{IDENTITY_STATUS}'"
SHOW_LOG_BIN = "SHOW GLOBAL VARIABLES LIKE 'log_bin'"

# What a sandbox session (monitored/sandbox.py) may send besides what check_statement and
# check_session_statement accept, matched whole on the final text: writes into its own
# scratch databases only. {prefix} stands for the session's scratch prefix.
_NAME = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
_QUOTED = r"`(?:[^`]|``)+`"
_SCRATCH = "(?:`{prefix}_\\d+`|{prefix}_\\d+)"
SANDBOX_FORMS: tuple[tuple[str, str], ...] = (
    ("session", r"SET SESSION sql_log_bin = 0"),
    ("session", r"SET SESSION foreign_key_checks = 0"),
    ("session", r"SET SESSION optimizer_switch = 'use_invisible_indexes=(?:on|off)'"),
    ("scratch", rf"CREATE DATABASE {_SCRATCH}"),
    ("scratch", rf"DROP DATABASE IF EXISTS {_SCRATCH}"),
    ("scratch", rf"USE {_SCRATCH}"),
    ("copy", rf"CREATE TABLE {_QUOTED} \(.*"),
    ("copy", rf"INSERT INTO {_QUOTED} \({_QUOTED}(?:, {_QUOTED})*\) VALUES \(%s(?:, %s)*\)"),
    ("copy", rf"ANALYZE TABLE {_QUOTED}"),
    (
        "index",
        rf"ALTER TABLE {_SCRATCH}\.{_NAME} ADD INDEX {_NAME} "
        rf"\({_NAME}(?: DESC)?(?:, {_NAME}(?: DESC)?)*\)(?: INVISIBLE)?",
    ),
    ("index", rf"ALTER TABLE {_SCRATCH}\.{_NAME} DROP INDEX {_NAME}"),
)


@dataclass(frozen=True, slots=True)
class StatementLimits:
    """The limits every statement Quanta sends carries with it.

    Attributes:
        seconds: How long the server lets it run (``max_statement_time`` on MariaDB,
            ``max_execution_time`` on MySQL, which limits only SELECTs).
        lock_wait_seconds: How long it may wait for a metadata lock (``lock_wait_timeout``),
            so that Quanta never queues behind, or holds up, a schema change for long.
        search_depth: ``optimizer_search_depth``: a join of many tables is planned greedily
            beyond this many, so that planning it (EXPLAIN) stays fast.

    Example:
        >>> StatementLimits(2.5, 1, 7).mariadb_prefix()
        'SET STATEMENT max_statement_time=2.5, lock_wait_timeout=1, optimizer_search_depth=7 FOR '
        >>> StatementLimits(2.5, 1, 7).mysql_session()
        'SET SESSION max_execution_time = 2500, lock_wait_timeout = 1, optimizer_search_depth = 7'
    """

    seconds: float
    lock_wait_seconds: int
    search_depth: int

    def mariadb_prefix(self) -> str:
        """MariaDB's ``SET STATEMENT ... FOR`` that goes before the statement."""
        return (
            f"SET STATEMENT max_statement_time={self.seconds:g}, "
            f"lock_wait_timeout={self.lock_wait_seconds}, "
            f"optimizer_search_depth={self.search_depth} FOR "
        )

    def mysql_session(self) -> str:
        """What MySQL gets before every statement (it has no SET STATEMENT)."""
        return (
            f"SET SESSION max_execution_time = {self.milliseconds}, "
            f"lock_wait_timeout = {self.lock_wait_seconds}, "
            f"optimizer_search_depth = {self.search_depth}"
        )

    @property
    def milliseconds(self) -> int:
        """The time limit in milliseconds (MySQL's unit)."""
        return int(self.seconds * MILLISECONDS_PER_SECOND)


# Quanta sends the same texts again and again (its catalog reads, the two EXPLAINs of one
# example): a text once accepted is accepted again without lexing and parsing it anew. The
# check is a pure function of the text; refusals are not remembered (an exception is not).
_ACCEPTED_TEXTS = 1024


@functools.lru_cache(maxsize=_ACCEPTED_TEXTS)
def check_statement(sql: str) -> None:
    """Raise StatementRefused unless ``sql`` (final text, parameters bound) may be sent.

    Example:
        >>> check_statement("EXPLAIN FORMAT=JSON SELECT * FROM t WHERE id = 1")
        >>> check_statement("EXPLAIN FORMAT=JSON DELETE FROM t WHERE id = 1")
        Traceback (most recent call last):
        ...
        quanta.monitored.errors.StatementRefused: refused to send to a monitored server: ...
    """
    text = sql.strip()
    limited = _SET_STATEMENT_RE.match(text)
    if limited:
        text = limited.group("rest").strip()
    if _SHOW_RE.match(text):
        _refuse_if(show_refusal(text))
        return
    explain = _EXPLAIN_RE.match(text)
    if explain:
        executes = bool(explain.group("analyze"))
        _refuse_if(plain_select_refusal(explain.group("rest"), executes=executes))
        return
    analyze = _ANALYZE_RE.match(text)
    if analyze:
        _refuse_if(plain_select_refusal(analyze.group("rest"), executes=True))
        return
    _refuse_if(plain_select_refusal(_QUANTA_HINT_RE.sub("SELECT", text, count=1), executes=True))


def check_session_statement(sql: str) -> None:
    """Raise StatementRefused unless ``sql`` is one of Quanta's fixed session statements.

    Example:
        >>> check_session_statement("START TRANSACTION READ ONLY")
    """
    limited = _SET_STATEMENT_RE.match(sql)
    text = limited.group("rest") if limited else sql
    if not any(pattern.match(text) for pattern in _SESSION_STATEMENTS):
        raise StatementRefused(
            "refused to send to a monitored server: not one of Quanta's session statements"
        )


def is_analyze(sql: str) -> bool:
    """Whether ``sql`` executes the statement it names (ANALYZE, EXPLAIN ANALYZE).

    Example:
        >>> is_analyze("EXPLAIN ANALYZE SELECT 1"), is_analyze("EXPLAIN SELECT 1")
        (True, False)
    """
    text = sql.strip()
    limited = _SET_STATEMENT_RE.match(text)
    if limited:
        text = limited.group("rest").strip()
    explain = _EXPLAIN_RE.match(text)
    return bool(_ANALYZE_RE.match(text) or (explain and explain.group("analyze")))


def with_limits(sql: str, *, mariadb: bool, limits: StatementLimits) -> str:
    """The statement with the limits the server enforces written into it.

    MariaDB: ``SET STATEMENT max_statement_time=N, lock_wait_timeout=N,
    optimizer_search_depth=N FOR ...`` (any statement). MySQL: the ``MAX_EXECUTION_TIME``
    optimizer hint after a leading SELECT; the session variables, sent again before every
    statement (:meth:`StatementLimits.mysql_session`), cover the rest.

    Example:
        >>> limits = StatementLimits(2.5, 1, 7)
        >>> with_limits("SELECT 1", mariadb=False, limits=limits)
        'SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1'
        >>> with_limits("SELECT 1", mariadb=True, limits=limits)  # doctest: +ELLIPSIS
        'SET STATEMENT max_statement_time=2.5, lock_wait_timeout=1, ... FOR SELECT 1'
    """
    if mariadb:
        return limits.mariadb_prefix() + sql
    match = _LEADING_SELECT_RE.match(sql)
    if not match:
        return sql
    hint = f"SELECT /*+ MAX_EXECUTION_TIME({limits.milliseconds}) */"
    return f"{match.group('lead')}{hint}{sql[match.end() :]}"


def _refuse_if(reason: str | None) -> None:
    if reason is not None:
        raise StatementRefused(f"{_REFUSED}: {reason}")
