"""The one gate every statement passes before it is sent to a monitored server.

Allowed, and nothing else:

* a SELECT that may be executed (see :func:`quanta.analysis.sqlkind.classify_statement`:
  no INTO, no locking read, no side-effect function, no executable comment);
* ``EXPLAIN [FORMAT=...]`` of a SELECT or a DML statement (EXPLAIN never executes it);
* ``EXPLAIN ANALYZE`` / MariaDB's ``ANALYZE [FORMAT=JSON]`` of an executable SELECT only
  (they execute the statement);
* ``SHOW ...`` (reads server state);
* any of the above behind MariaDB's ``SET STATEMENT max_statement_time=N FOR``;
* a fixed list of session statements (time zone, read-only transactions, time limits,
  profiling), matched whole.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenType

from quanta.analysis.sqlkind import classify_statement
from quanta.monitored.errors import StatementRefused

__all__ = [
    "check_session_statement",
    "check_statement",
    "is_explain",
    "with_time_limit",
]

_FLAGS = re.IGNORECASE | re.DOTALL
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
_LEADING_SELECT_RE = re.compile(r"\A(?P<lead>\s*(?:/\*[^!].*?\*/\s*)*)SELECT\b", _FLAGS)
# Session statements Quanta sends itself, matched whole: nothing else can pass as one.
_SESSION_STATEMENTS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\ASET SESSION time_zone = '\+00:00'\Z",
        r"\ASET SESSION TRANSACTION READ ONLY\Z",
        r"\ASET SESSION max_statement_time = \d+(?:\.\d+)?\Z",
        r"\ASET SESSION max_execution_time = \d+\Z",
        r"\ASET SESSION profiling = [01]\Z",
        r"\ASET SESSION profiling_history_size = \d+\Z",
        r"\ASTART TRANSACTION READ ONLY\Z",
        # Servers refuse EXPLAIN UPDATE/DELETE in a read-only transaction (error 1792), so
        # DML is explained in a read-write one that is always rolled back; only EXPLAIN
        # statements are let through while it is open (see GuardedConnection).
        r"\ASTART TRANSACTION READ WRITE\Z",
        r"\AROLLBACK\Z",
    )
)
_MYSQL = sqlglot.Dialect.get_or_raise("mysql")
MILLISECONDS_PER_SECOND = 1000


def check_statement(sql: str) -> None:
    """Raise StatementRefused unless ``sql`` (final text, parameters bound) may be sent.

    Example:
        >>> check_statement("EXPLAIN FORMAT=JSON DELETE FROM t WHERE id = 1")
        >>> check_statement("ANALYZE FORMAT=JSON DELETE FROM t WHERE id = 1")
        Traceback (most recent call last):
        ...
        quanta.monitored.errors.StatementRefused: refused to send to a monitored server: ...
    """
    text = sql.strip()
    limited = _SET_STATEMENT_RE.match(text)
    if limited:
        text = limited.group("rest").strip()
    if _SHOW_RE.match(text):
        _check_single(text)
        return
    explain = _EXPLAIN_RE.match(text)
    if explain:
        _check_explained(explain.group("rest"), executes=bool(explain.group("analyze")))
        return
    analyze = _ANALYZE_RE.match(text)
    if analyze:
        _check_explained(analyze.group("rest"), executes=True)
        return
    _check_explained(text, executes=True)


def check_session_statement(sql: str) -> None:
    """Raise StatementRefused unless ``sql`` is one of Quanta's fixed session statements.

    Example:
        >>> check_session_statement("START TRANSACTION READ ONLY")
    """
    if not any(pattern.match(sql) for pattern in _SESSION_STATEMENTS):
        raise StatementRefused(
            "refused to send to a monitored server: not one of Quanta's session statements"
        )


def is_explain(sql: str) -> bool:
    """Whether ``sql`` is a plain EXPLAIN (not EXPLAIN ANALYZE), which never executes.

    Example:
        >>> is_explain("EXPLAIN UPDATE t SET a = 1"), is_explain("EXPLAIN ANALYZE SELECT 1")
        (True, False)
    """
    match = _EXPLAIN_RE.match(sql.strip())
    return bool(match and not match.group("analyze"))


def with_time_limit(sql: str, *, mariadb: bool, seconds: float) -> str:
    """The statement with a per-statement time limit the server enforces.

    MariaDB: ``SET STATEMENT max_statement_time=N FOR ...`` (any statement). MySQL: the
    ``MAX_EXECUTION_TIME`` optimizer hint after the leading SELECT; a statement that does
    not start with SELECT (WITH, parentheses) keeps the session's max_execution_time.

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


def _check_explained(statement: str, *, executes: bool) -> None:
    classification = classify_statement(statement)
    if executes and not classification.executable:
        raise StatementRefused(
            f"refused to send to a monitored server: {classification.execute_refusal}"
        )
    if not classification.explainable:
        raise StatementRefused(
            f"refused to send to a monitored server: {classification.explain_refusal}"
        )


def _check_single(text: str) -> None:
    try:
        tokens = _MYSQL.tokenize(text)
    except TokenError as exc:
        raise StatementRefused("refused to send to a monitored server: unreadable SHOW") from exc
    body = tokens[:-1] if tokens and tokens[-1].token_type == TokenType.SEMICOLON else tokens
    if any(token.token_type == TokenType.SEMICOLON for token in body):
        raise StatementRefused("refused to send to a monitored server: several statements")
