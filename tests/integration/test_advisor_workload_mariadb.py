"""A workload plan's DDL against a real MariaDB: every query it serves uses its index.

The tables and snapshot of test_advisor_mariadb.py. The workload holds a prefix chain with its
equalities written in another order (and a sort on one row, which costs no rows examined) and
a second index with a range: the plan serves the chain with one index, drops the existing
index it extends, and EXPLAIN confirms each served query reads through the planned index, and
fewer rows than before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from quanta.analysis.advisor.workload import PlanRules, WorkloadQuery, plan_workload
from tests.fixtures.servers import started_mariadb
from tests.integration.test_advisor_mariadb import DB, TABLES, explain, snapshot

pytestmark = [pytest.mark.services, pytest.mark.timeout(180)]

WINDOW_SECONDS = 3600.0
# (query id, calls in the hour, statement)
WORKLOAD = (
    ("Q1", 36000, "SELECT id FROM orders WHERE customer_id = 17 AND status = 'paid'"),
    ("Q2", 18000, "SELECT id FROM orders WHERE status = 'paid' AND customer_id = 17"
                  " ORDER BY created_at"),
    ("Q3", 9000, "SELECT COUNT(*) FROM orders WHERE customer_id = 17"),
    ("Q4", 18000, "SELECT id FROM orders WHERE phone = '555-0042'"),
    ("Q5", 18000, "SELECT id FROM orders WHERE phone = '555-0042' AND amount > 100"),
)  # fmt: skip


@pytest.fixture(scope="module")
def connection() -> Iterator[pymysql.connections.Connection[Any]]:
    with started_mariadb() as own, contextlib.closing(own.server.connect()) as conn:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {DB}")
            cursor.execute(f"USE {DB}")
            for statement in TABLES:
                cursor.execute(statement)
            cursor.execute("ANALYZE TABLE customers, orders, order_items")
            cursor.fetchall()
        yield conn


def test_plan_indexes_serve_their_queries(
    connection: pymysql.connections.Connection[Any],
) -> None:
    schema = snapshot(connection)
    total = sum(calls for _, calls, _ in WORKLOAD)
    queries = [
        WorkloadQuery(query_id, sql, DB, calls, calls / 1000, None, calls / total)
        for query_id, calls, sql in WORKLOAD
    ]
    # Every saving counts here: the customer queries save little next to the phone scans.
    rules = PlanRules(min_gain_share=0.0)
    [plan] = plan_workload(queries, schema, rules=rules, window_seconds=WINDOW_SECONDS)
    assert plan.table == f"{DB}.orders"
    assert plan.ddl == (
        "ALTER TABLE adv.orders DROP INDEX idx_customer, ADD INDEX idx_orders_phone_amount "
        "(phone, amount), ADD INDEX idx_orders_customer_id_status "
        "(customer_id, status)"
    )
    served = {q.query_id: add.name for add in plan.adds for q in add.served}
    assert served == {
        "Q1": "idx_orders_customer_id_status",
        "Q2": "idx_orders_customer_id_status",
        "Q4": "idx_orders_phone_amount",
        "Q5": "idx_orders_phone_amount",
    }
    sql = {query_id: text for query_id, _, text in WORKLOAD}
    with connection.cursor() as cursor:
        before = {query_id: explain(cursor, text)["orders"] for query_id, text in sql.items()}
        cursor.execute(plan.ddl)
        cursor.execute("ANALYZE TABLE orders")
        cursor.fetchall()
        try:
            after = {query_id: explain(cursor, text)["orders"] for query_id, text in sql.items()}
        finally:
            cursor.execute(
                "ALTER TABLE orders DROP INDEX idx_orders_phone_amount, DROP INDEX "
                "idx_orders_customer_id_status, ADD INDEX idx_customer (customer_id)"
            )
    for query_id, name in served.items():
        assert after[query_id][0] == name, (query_id, before, after)
        assert after[query_id][1] < before[query_id][1], (query_id, before, after)
    # Q3 read idx_customer, which the plan dropped: the merged index, a prefix away, serves it.
    assert after["Q3"][0] == "idx_orders_customer_id_status"
    assert after["Q3"][1] <= before["Q3"][1]
