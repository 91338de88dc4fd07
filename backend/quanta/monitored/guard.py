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
* any of the above behind MariaDB's ``SET STATEMENT max_statement_time=N FOR`` or with the
  ``MAX_EXECUTION_TIME`` hint Quanta writes for MySQL;
* a fixed list of session statements (sql_mode, time zone, read-only transactions, time
  limits, profiling), matched whole.
"""

from __future__ import annotations

import re

from quanta.analysis.sqlkind import plain_select_refusal, show_refusal
from quanta.analysis.sqllexer import SESSION_SQL_MODE
from quanta.monitored.errors import StatementRefused

__all__ = [
    "check_session_statement",
    "check_statement",
    "is_analyze",
    "with_time_limit",
]

# re.ASCII: \s is the server's whitespace only, not U+00A0 and kin.
_FLAGS = re.IGNORECASE | re.DOTALL | re.ASCII
_SET_STATEMENT_RE = re.compile(
    r"\ASET\s+STATEMENT\s+max_statement_time\s*=\s*\d+(?:\.\d+)?\s+FOR\s+(?P<rest>.+)\Z", _FLAGS
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
        r"\ASET SESSION profiling = [01]\Z",
        r"\ASET SESSION profiling_history_size = \d+\Z",
        r"\ASTART TRANSACTION READ ONLY\Z",
        r"\AROLLBACK\Z",
    )
)
_REFUSED = "refused to send to a monitored server"
MILLISECONDS_PER_SECOND = 1000


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
    if not any(pattern.match(sql) for pattern in _SESSION_STATEMENTS):
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


def with_time_limit(sql: str, *, mariadb: bool, seconds: float) -> str:
    """The statement with a per-statement time limit the server enforces.

    MariaDB: ``SET STATEMENT max_statement_time=N FOR ...`` (any statement). MySQL: the
    ``MAX_EXECUTION_TIME`` optimizer hint after a leading SELECT; a statement that does
    not start with SELECT (WITH, parentheses, a comment) keeps the session's
    max_execution_time.

    Example:
        >>> with_time_limit("SELECT 1", mariadb=False, seconds=2.5)
        'SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1'
        >>> with_time_limit("SELECT 1", mariadb=True, seconds=2.5)
        'SET STATEMENT max_statement_time=2.5 FOR SELECT 1'
    """
    if mariadb:
        return f"SET STATEMENT max_statement_time={seconds:g} FOR {sql}"
    match = _LEADING_SELECT_RE.match(sql)
    if not match:
        return sql
    hint = f"SELECT /*+ MAX_EXECUTION_TIME({int(seconds * MILLISECONDS_PER_SECOND)}) */"
    return f"{match.group('lead')}{hint}{sql[match.end() :]}"


def _refuse_if(reason: str | None) -> None:
    if reason is not None:
        raise StatementRefused(f"{_REFUSED}: {reason}")
