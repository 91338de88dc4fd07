"""The statement gate of quanta.monitored, without a server: what may be sent, and how."""

from __future__ import annotations

from typing import Any

import pytest

from quanta.analysis.sqlkind import StatementKind, classify_statement
from quanta.analysis.sqltext import SESSION_SQL_MODE
from quanta.monitored.errors import StatementRefused
from quanta.monitored.guard import (
    StatementLimits,
    check_session_statement,
    check_statement,
    is_analyze,
    with_limits,
)
from tests.analysis.test_sqlkind import BENIGN, HOSTILE

ALLOWED = [
    "SELECT * FROM orders WHERE id = 7",
    "EXPLAIN SELECT * FROM orders",
    "EXPLAIN FORMAT=JSON SELECT * FROM orders WHERE id = 7",
    "DESCRIBE SELECT * FROM orders WHERE id = 7",
    "ANALYZE FORMAT=JSON SELECT * FROM orders",
    "EXPLAIN ANALYZE SELECT * FROM orders",
    "SET STATEMENT max_statement_time=10 FOR SELECT * FROM orders",
    "SET STATEMENT max_statement_time=2.5 FOR ANALYZE FORMAT=JSON SELECT 1",
    "SET STATEMENT max_statement_time=2, lock_wait_timeout=1, optimizer_search_depth=7 FOR "
    "EXPLAIN SELECT 1",
    "SELECT /*+ MAX_EXECUTION_TIME(2500) */ * FROM orders",
    "SHOW INDEX FROM `shop`.`my;table`",
    "SHOW PROFILE FOR QUERY 3",
    "SHOW VARIABLES WHERE Variable_name IN ('version', 'version_comment')",
    "SELECT CURRENT_USER() AS u",
    "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop'",
]
REFUSED = [
    "UPDATE orders SET a = 1",
    "DELETE FROM orders",
    "EXPLAIN FORMAT=JSON UPDATE orders SET a = 1 WHERE id = 7",
    "DESCRIBE DELETE FROM orders WHERE id = 7",
    "EXPLAIN FORMAT=JSON INSERT INTO a SELECT * FROM b",
    "EXPLAIN SELECT * FROM orders WHERE id = 1 FOR UPDATE",
    "ANALYZE FORMAT=JSON DELETE FROM orders",
    "EXPLAIN ANALYZE UPDATE orders SET a = 1",
    "ANALYZE TABLE orders",
    "SET STATEMENT max_statement_time=10 FOR DELETE FROM orders",
    "SET STATEMENT sql_log_bin=0 FOR SELECT 1",
    "SET STATEMENT max_statement_time=2, sql_log_bin=0 FOR SELECT 1",
    "SET STATEMENT max_statement_time=2, optimizer_search_depth=7, lock_wait_timeout=1 FOR "
    "SELECT 1",
    "SET STATEMENT max_statement_time=2 FOR SET SESSION sql_mode = 'ANSI_QUOTES'",
    "EXPLAIN SELECT 1; DROP TABLE t",
    "SHOW TABLES; DROP TABLE t",
    "SHOW VARIABLES WHERE SLEEP(1) = 0",
    "SHOW VARIABLES LIKE @x",
    "SELECT * FROM orders FOR UPDATE",
    "SELECT 1 INTO OUTFILE '/tmp/x'",
    "EXPLAIN SET @a = 1",
    "SET GLOBAL read_only = 0",
    "CALL purge()",
    "DO SLEEP(10)",
    "SELECT @@version_comment",
    "EXPLAIN\u00a0SELECT 1",
    "SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1 UNION SELECT /*+ SET_VAR(a=1) */ 2",
    "SELECT /*+ MAX_EXECUTION_TIME(2500) */ /*+ SET_VAR(max_connections=1) */ 1",
    "/* x */ SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1",
]
WRAPPERS = [
    "{}",
    "EXPLAIN {}",
    "EXPLAIN FORMAT=JSON {}",
    "EXPLAIN ANALYZE {}",
    "ANALYZE FORMAT=JSON {}",
    "SET STATEMENT max_statement_time=1 FOR EXPLAIN {}",
    "SET STATEMENT max_statement_time=1 FOR {}",
]


@pytest.mark.parametrize("sql", ALLOWED)
def test_allowed(sql: str) -> None:
    check_statement(sql)


@pytest.mark.parametrize("sql", REFUSED)
def test_refused(sql: str) -> None:
    with pytest.raises(StatementRefused, match=r"^refused to send to a monitored server: "):
        check_statement(sql)


# A captured SHOW or ANALYZE is refused by the classifier (tests/analysis), but the gate lets
# Quanta's own SHOW through, and ANALYZE on an execution target: those cases do not apply here.
GATED = [c for c in HOSTILE if c["sql"].split()[0].upper() not in ("SHOW", "ANALYZE")]


@pytest.mark.parametrize("case", GATED, ids=[ascii(c["sql"][:60]) for c in GATED])
def test_the_gate_refuses_the_hostile_corpus_however_it_is_wrapped(case: dict[str, Any]) -> None:
    """The gate owns no parser of its own: it refuses what the classifier refuses."""
    if "refused" in case or "execute_refused" in case:
        for wrapper in WRAPPERS:
            with pytest.raises(StatementRefused):
                check_statement(wrapper.format(case["sql"]))
    else:  # harmless as it is: what the server runs is what the classifier read
        check_statement(f"EXPLAIN {case['sql']}")


@pytest.mark.parametrize("case", BENIGN, ids=[ascii(c["sql"][:60]) for c in BENIGN])
def test_the_gate_passes_what_quanta_explains_for_the_benign_corpus(case: dict[str, Any]) -> None:
    check_statement(f"EXPLAIN {case['explain']}")
    check_statement(f"EXPLAIN FORMAT=JSON {case['explain']}")
    if classify_statement(case["sql"]).kind is StatementKind.DML:
        with pytest.raises(StatementRefused, match="explained as its equivalent SELECT"):
            check_statement(f"EXPLAIN {case['sql']}")


@pytest.mark.parametrize(
    ("sql", "allowed"),
    [
        ("START TRANSACTION READ ONLY", True),
        ("ROLLBACK", True),
        ("SET SESSION max_statement_time = 2.5", True),
        ("SET SESSION profiling = 1", True),
        (f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'", True),
        ("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'", False),
        ("SET SESSION sql_mode = 'ANSI_QUOTES'", False),
        ("START TRANSACTION READ WRITE", False),
        ("COMMIT", False),
        ("SET SESSION sql_log_bin = 0", False),
        ("SET SESSION profiling = 1; DROP TABLE t", False),
        ("START TRANSACTION", False),
        ("KILL QUERY 42", True),
        ("KILL 42", False),
        ("KILL QUERY 42; SELECT 1", False),
        (
            "SET SESSION max_execution_time = 2000, lock_wait_timeout = 1, "
            "optimizer_search_depth = 7",
            True,
        ),
        ("SET SESSION lock_wait_timeout = 1, sql_log_bin = 0", False),
        (
            "SET STATEMENT max_statement_time=2, lock_wait_timeout=1, optimizer_search_depth=7 "
            "FOR START TRANSACTION READ ONLY",
            True,
        ),
        ("SET STATEMENT max_statement_time=2 FOR COMMIT", False),
    ],
)
def test_session_statements_are_a_fixed_list(sql: str, allowed: bool) -> None:
    if allowed:
        check_session_statement(sql)
    else:
        with pytest.raises(StatementRefused):
            check_session_statement(sql)


def test_is_analyze() -> None:
    assert is_analyze("EXPLAIN ANALYZE SELECT 1")
    assert is_analyze("ANALYZE FORMAT=JSON SELECT 1")
    assert is_analyze("SET STATEMENT max_statement_time=1 FOR ANALYZE FORMAT=JSON SELECT 1")
    assert not is_analyze("EXPLAIN FORMAT=JSON SELECT 1")
    assert not is_analyze("SELECT 1")


LIMITS = StatementLimits(2.5, 1, 7)
MARIADB_PREFIX = (
    "SET STATEMENT max_statement_time=2.5, lock_wait_timeout=1, optimizer_search_depth=7 FOR "
)


@pytest.mark.parametrize(
    ("sql", "mariadb", "expected"),
    [
        ("SELECT 1", True, f"{MARIADB_PREFIX}SELECT 1"),
        ("EXPLAIN SELECT 1", True, f"{MARIADB_PREFIX}EXPLAIN SELECT 1"),
        ("SHOW INDEX FROM `t`", True, f"{MARIADB_PREFIX}SHOW INDEX FROM `t`"),
        ("SELECT 1", False, "SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1"),
        ("/* app */ select a FROM t", False, "/* app */ select a FROM t"),
        ("WITH c AS (SELECT 1) SELECT * FROM c", False, "WITH c AS (SELECT 1) SELECT * FROM c"),
    ],
)  # fmt: skip
def test_limits_are_written_into_every_statement(sql: str, mariadb: bool, expected: str) -> None:
    assert with_limits(sql, mariadb=mariadb, limits=LIMITS) == expected
    check_statement(with_limits(sql, mariadb=mariadb, limits=LIMITS))


def test_mysql_gets_the_limits_as_session_values_before_every_statement() -> None:
    session = LIMITS.mysql_session()
    assert session == (
        "SET SESSION max_execution_time = 2500, lock_wait_timeout = 1, optimizer_search_depth = 7"
    )
    check_session_statement(session)
