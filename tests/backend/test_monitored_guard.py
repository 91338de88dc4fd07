"""The statement gate of quanta.monitored, without a server: what may be sent, and how."""

from __future__ import annotations

import pytest

from quanta.monitored.errors import StatementRefused
from quanta.monitored.guard import (
    check_session_statement,
    check_statement,
    is_explain,
    with_time_limit,
)

ALLOWED = [
    "SELECT * FROM orders WHERE id = 7",
    "EXPLAIN SELECT * FROM orders",
    "EXPLAIN FORMAT=JSON UPDATE orders SET a = 1 WHERE id = 7",
    "DESCRIBE DELETE FROM orders WHERE id = 7",
    "EXPLAIN FORMAT=JSON INSERT INTO a SELECT * FROM b",
    "ANALYZE FORMAT=JSON SELECT * FROM orders",
    "EXPLAIN ANALYZE SELECT * FROM orders",
    "SET STATEMENT max_statement_time=10 FOR SELECT * FROM orders",
    "SET STATEMENT max_statement_time=2.5 FOR ANALYZE FORMAT=JSON SELECT 1",
    "SHOW INDEX FROM `shop`.`my;table`",
    "SHOW PROFILE FOR QUERY 3",
]
REFUSED = [
    "UPDATE orders SET a = 1",
    "DELETE FROM orders",
    "ANALYZE FORMAT=JSON DELETE FROM orders",
    "EXPLAIN ANALYZE UPDATE orders SET a = 1",
    "ANALYZE TABLE orders",
    "SET STATEMENT max_statement_time=10 FOR DELETE FROM orders",
    "SET STATEMENT sql_log_bin=0 FOR SELECT 1",
    "EXPLAIN SELECT 1; DROP TABLE t",
    "SHOW TABLES; DROP TABLE t",
    "SELECT * FROM orders FOR UPDATE",
    "SELECT 1 INTO OUTFILE '/tmp/x'",
    "EXPLAIN SET @a = 1",
    "SET GLOBAL read_only = 0",
    "CALL purge()",
    "DO SLEEP(10)",
]


@pytest.mark.parametrize("sql", ALLOWED)
def test_allowed(sql: str) -> None:
    check_statement(sql)


@pytest.mark.parametrize("sql", REFUSED)
def test_refused(sql: str) -> None:
    with pytest.raises(StatementRefused, match=r"^refused to send to a monitored server: "):
        check_statement(sql)


@pytest.mark.parametrize(
    ("sql", "allowed"),
    [
        ("START TRANSACTION READ ONLY", True),
        ("ROLLBACK", True),
        ("SET SESSION max_statement_time = 2.5", True),
        ("SET SESSION profiling = 1", True),
        ("COMMIT", False),
        ("SET SESSION sql_log_bin = 0", False),
        ("SET SESSION profiling = 1; DROP TABLE t", False),
        ("START TRANSACTION", False),
    ],
)
def test_session_statements_are_a_fixed_list(sql: str, allowed: bool) -> None:
    if allowed:
        check_session_statement(sql)
    else:
        with pytest.raises(StatementRefused):
            check_session_statement(sql)


def test_is_explain() -> None:
    assert is_explain("EXPLAIN FORMAT=JSON UPDATE t SET a = 1")
    assert not is_explain("EXPLAIN ANALYZE SELECT 1")
    assert not is_explain("ANALYZE FORMAT=JSON SELECT 1")
    assert not is_explain("SELECT 1")


@pytest.mark.parametrize(
    ("sql", "mariadb", "expected"),
    [
        ("SELECT 1", True, "SET STATEMENT max_statement_time=2.5 FOR SELECT 1"),
        ("SELECT 1", False, "SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1"),
        ("/* app */ select a FROM t", False,
         "/* app */ SELECT /*+ MAX_EXECUTION_TIME(2500) */ a FROM t"),
        ("WITH c AS (SELECT 1) SELECT * FROM c", False, "WITH c AS (SELECT 1) SELECT * FROM c"),
    ],
)  # fmt: skip
def test_time_limit(sql: str, mariadb: bool, expected: str) -> None:
    assert with_time_limit(sql, mariadb=mariadb, seconds=2.5) == expected
