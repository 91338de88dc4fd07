"""Workload index plan against every per-query suggestion, on a real MariaDB (issues 29, 41).

Starts a throw-away MariaDB and runs two cases, each on its own database:

* ``shop`` (issue 29): 5 tables (462,500 rows at the default scale), one existing secondary
  index besides the primary keys and a UNIQUE one, and a workload of 34 query shapes with
  realistic frequencies (lookups by key, a customer's latest orders, a category page, counts,
  reports on a time range, joins) and writes (inserts, status updates, deletes);
* ``join`` (issue 41): customers, orders and order_items (50k, 500k and 1.5M rows at scale 1;
  a fifth of that by default) with nothing indexed but the primary keys, read as Quanta's
  snapshot of a monitored server reads them (distinct counts of indexed columns only), and 8
  shapes, two of them joins whose per-table estimates multiply across the join (the
  advisor's estimate of a call is orders of magnitude above what the server measures), so a
  plan weighed on estimates sets its floor far too high and leaves out indexes chat already
  suggested.

Each case's statements run in a seeded random order, each run inside one transaction that is
rolled back so that every configuration reads the same data. The workload runs three times:

1. with no new index (the server's slow log, ``long_query_time=0``, records this run);
2. with every per-query suggestion applied: ``advise()`` on each query class of that log;
3. with the workload plan applied: ``quanta advise --workload``'s path, the digest of the same
   log (:func:`quanta.digest.workload.workload_from_digest`) into
   :func:`quanta.analysis.advisor.workload.plan_workload`.

Each run measures the rows examined (the sum of the session's ``Handler_read_*`` deltas, what
the server really read) and the latency (the statements' summed wall time, and p95; the
fastest of ``--repeats`` runs for the indexed configurations, the baseline runs once). The
schema snapshot is read from the server (information_schema, SHOW INDEX) with exact distinct
counts per column, as engine-independent statistics (ANALYZE TABLE ... PERSISTENT FOR ALL)
would give.

For the join case it also prints, per query class, the rows examined per call the slow log
measured next to the advisor's estimate (the sum of its per-table estimates).

The last line is ``RESULT plan_benefit_share=X plan_index_share=Y join_plan_benefit_share=Z
join_plan_index_share=W join_estimate_over_measured=E``: X is the shop plan's reduction of rows
examined as a share of the per-query suggestions' reduction, Y the plan's new index count as a
share of theirs (target X >= 0.9 with Y <= 0.5); Z and W the same for the join case, E the
join case's estimated rows examined per second over the measured ones (what a plan weighed on
estimates would take as the workload).

Usage: .venv/bin/python bench/advisor_workload.py [--case shop|join] [--scale K]
       [--statements N] [--seed S] [--repeats R]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymysql

from quanta.analysis.advisor import Action, AdviceError, advise, parse_schema
from quanta.analysis.advisor.engine import access_rows, alter_table_ddl
from quanta.analysis.advisor.render import render_plan_text
from quanta.analysis.advisor.schema import Schema
from quanta.analysis.advisor.statement import table_accesses
from quanta.analysis.advisor.workload import (
    PlanRules,
    TablePlan,
    WorkloadQuery,
    plan_workload,
)
from quanta.digest.runner import DigestOptions, digest_files
from quanta.digest.workload import DigestWorkload, workload_from_digest
from tests.fixtures.servers import MariaDBServer, started_mariadb

# A buffer pool that holds the data: rows examined, not disk reads, is what differs.
SERVER_ARGS = ("--innodb-buffer-pool-size=512M", "--log-slow-verbosity=")
DEFAULT_SEED = 29
# Runs of each indexed configuration; its fastest is reported (the machine is shared: the
# best of a few is the least noisy figure). The baseline, of full scans, runs once.
DEFAULT_REPEATS = 3
# The handler counters whose deltas are the rows a statement read.
HANDLER_READS = (
    "Handler_read_first", "Handler_read_key", "Handler_read_last", "Handler_read_next",
    "Handler_read_prev", "Handler_read_rnd", "Handler_read_rnd_next",
)  # fmt: skip


# Rows per table at scale 1, by name: ``sizes.orders`` in a shape's parameters.
Sizes = SimpleNamespace


def scaled(rows: dict[str, int], scale: float) -> Sizes:
    """Rows per table for one scale (at least 100)."""
    return Sizes(**{name: max(100, round(count * scale)) for name, count in rows.items()})


# --------------------------------------------------------------------------- the shop case


SHOP_ROWS = {"customers": 20_000, "products": 5_000, "orders": 150_000,
             "order_items": 450_000, "events": 300_000}  # fmt: skip


def shop_schema(sizes: Sizes) -> list[str]:
    """The five tables, filled from MariaDB's sequence engine with deterministic values."""
    c, p, o, oi, e = (sizes.customers, sizes.products, sizes.orders, sizes.order_items,
                      sizes.events)  # fmt: skip
    return [
        """CREATE TABLE customers (id INT NOT NULL PRIMARY KEY, email VARCHAR(64) NOT NULL,
            country CHAR(2) NOT NULL, segment VARCHAR(16) NOT NULL, score INT NOT NULL,
            created_at DATETIME NOT NULL, UNIQUE KEY uq_email (email))""",
        """CREATE TABLE products (id INT NOT NULL PRIMARY KEY, category_id INT NOT NULL,
            brand VARCHAR(32) NOT NULL, price DECIMAL(10,2) NOT NULL, active TINYINT NOT NULL,
            created_at DATETIME NOT NULL)""",
        """CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, customer_id INT NOT NULL,
            shop_id INT NOT NULL, status VARCHAR(16) NOT NULL, channel VARCHAR(10) NOT NULL,
            total DECIMAL(10,2) NOT NULL, created_at DATETIME NOT NULL,
            KEY idx_orders_customer (customer_id))""",
        """CREATE TABLE order_items (id INT NOT NULL PRIMARY KEY, order_id INT NOT NULL,
            product_id INT NOT NULL, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL)""",
        """CREATE TABLE events (id INT NOT NULL PRIMARY KEY, customer_id INT NOT NULL,
            kind VARCHAR(20) NOT NULL, ref_id INT NOT NULL, created_at DATETIME NOT NULL,
            payload VARCHAR(200) NOT NULL)""",
        f"""INSERT INTO customers SELECT seq, CONCAT('user', seq, '@example.com'),
            CONCAT(CHAR(65 + seq * 7 % 10), CHAR(65 + seq * 13 % 5)), CONCAT('seg', seq * 31 % 10),
            seq * 7919 % 1000, '2020-01-01' + INTERVAL (seq * 104729 % 2000) DAY
            FROM seq_1_to_{c}""",
        f"""INSERT INTO products SELECT seq, seq * 7 % 100 + 1, CONCAT('brand', seq * 13 % 200),
            (seq * 7919 % 100000) / 100, IF(seq % 10 = 0, 0, 1),
            '2021-01-01' + INTERVAL (seq % 1000) DAY FROM seq_1_to_{p}""",
        f"""INSERT INTO orders SELECT seq, (seq * 7919) % {c} + 1, seq * 31 % 50 + 1,
            ELT(1 + seq * 17 % 6, 'new', 'paid', 'packed', 'shipped', 'delivered', 'returned'),
            ELT(1 + seq * 11 % 5, 'web', 'ios', 'android', 'store', 'phone'),
            (seq * 104729 % 50000) / 100,
            '2024-01-01' + INTERVAL (seq * 86400 * 730 DIV {o}) SECOND FROM seq_1_to_{o}""",
        f"""INSERT INTO order_items SELECT seq, (seq - 1) DIV 3 % {o} + 1,
            (seq * 7919) % {p} + 1, seq % 5 + 1, (seq * 104729 % 20000) / 100
            FROM seq_1_to_{oi}""",
        f"""INSERT INTO events SELECT seq, (seq * 104729) % {c} + 1,
            CONCAT('kind', seq * 7 % 30), (seq * 7919) % 100000 + 1,
            '2024-01-01' + INTERVAL (seq * 86400 * 365 DIV {e}) SECOND, REPEAT('x', 100)
            FROM seq_1_to_{e}""",
    ]


def create_schema(conn: pymysql.Connection[Any], case: BenchCase, sizes: Sizes) -> None:
    """The case's database and tables, with engine-independent statistics."""
    with conn.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {case.database}")
        cursor.execute(f"USE {case.database}")
        for statement in case.schema(sizes):
            cursor.execute(statement)
        cursor.execute("SHOW TABLES")
        for (table,) in cursor.fetchall():
            cursor.execute(f"ANALYZE TABLE {table} PERSISTENT FOR ALL")
            cursor.fetchall()


def read_schema(
    conn: pymysql.Connection[Any], database: str, *, exact_distinct: bool = True
) -> Schema:
    """The advisor's snapshot of the bench tables, with exact row counts and exact distinct
    counts per column; without ``exact_distinct``, distinct counts of indexed columns only
    (SHOW INDEX's cardinality), as Quanta's snapshot of a monitored server has them."""
    tables: dict[str, Any] = {}
    with conn.cursor() as cursor:
        cursor.execute("SELECT VERSION()")
        version = str(cursor.fetchone()[0])
        cursor.execute(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s",
            (database,),
        )
        for (name,) in sorted(cursor.fetchall()):
            cursor.execute(
                "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                (database, name),
            )
            columns = [(str(c), str(t)) for c, t in cursor.fetchall()]
            counts = ", ".join(f"COUNT(DISTINCT `{c}`)" for c, _ in columns)
            cursor.execute(f"SELECT COUNT(*), {counts} FROM {database}.{name}")
            row = cursor.fetchone()
            cursor.execute(f"SHOW INDEX FROM {database}.{name}")
            keys: dict[str, dict[str, Any]] = {}
            for index in cursor.fetchall():
                key = keys.setdefault(index[2], {"name": index[2], "columns": [],
                                                 "unique": not index[1]})  # fmt: skip
                key["columns"].append(index[4])
            indexed = {str(k["columns"][0]) for k in keys.values()}
            primary = keys.pop("PRIMARY")
            tables[f"{database}.{name}"] = {
                "rows": int(row[0]),
                "primary_key": primary["columns"],
                "columns": {
                    c: {"type": t, "distinct": int(n)}
                    if exact_distinct or c in indexed
                    else {"type": t}
                    for (c, t), n in zip(columns, row[1:], strict=True)
                },
                "indexes": list(keys.values()),
            }
    return parse_schema({"server": {"flavor": "mariadb", "version": version}, "tables": tables})


def _day(rng: random.Random) -> str:
    return f"2024-{1 + rng.randrange(12):02d}-{1 + rng.randrange(28):02d}"


def _recent(rng: random.Random) -> str:
    return f"2025-12-{1 + rng.randrange(20):02d}"


STATUSES = ("new", "paid", "packed", "shipped", "delivered", "returned")
CHANNELS = ("web", "ios", "android", "store", "phone")


@dataclass(frozen=True)
class Shape:
    """One query shape: its weight (calls per 1,000 statements) and its parameters."""

    weight: float
    sql: str
    params: Callable[[random.Random, Sizes], tuple[Any, ...]]


SHOP_SHAPES: tuple[Shape, ...] = (
    # customers
    Shape(60, "SELECT * FROM customers WHERE email = %s",
          lambda r, s: (f"user{r.randint(1, s.customers)}@example.com",)),
    Shape(20, "SELECT id, email FROM customers WHERE country = %s AND segment = %s "
              "ORDER BY created_at DESC LIMIT 20",
          lambda r, s: (f"{chr(65 + r.randrange(10))}{chr(65 + r.randrange(5))}",
                        f"seg{r.randrange(10)}")),
    Shape(8, "SELECT COUNT(*) FROM customers WHERE country = %s",
          lambda r, s: (f"{chr(65 + r.randrange(10))}{chr(65 + r.randrange(5))}",)),
    Shape(10, "SELECT id FROM customers WHERE country = %s AND segment = %s",
          lambda r, s: (f"{chr(65 + r.randrange(10))}{chr(65 + r.randrange(5))}",
                        f"seg{r.randrange(10)}")),
    Shape(4, "SELECT id FROM customers WHERE score > %s AND country = %s",
          lambda r, s: (r.randrange(900, 1000), f"{chr(65 + r.randrange(10))}A")),
    Shape(4, "SELECT * FROM customers WHERE segment = %s AND country = %s AND score >= %s",
          lambda r, s: (f"seg{r.randrange(10)}", f"{chr(65 + r.randrange(10))}B",
                        r.randrange(500, 1000))),
    # orders
    Shape(90, "SELECT * FROM orders WHERE customer_id = %s ORDER BY created_at DESC LIMIT 10",
          lambda r, s: (r.randint(1, s.customers),)),
    Shape(30, "SELECT COUNT(*) FROM orders WHERE customer_id = %s",
          lambda r, s: (r.randint(1, s.customers),)),
    Shape(25, "SELECT id, total FROM orders WHERE customer_id = %s AND status = %s",
          lambda r, s: (r.randint(1, s.customers), r.choice(STATUSES))),
    Shape(12, "SELECT SUM(total) FROM orders WHERE customer_id = %s AND created_at >= %s",
          lambda r, s: (r.randint(1, s.customers), _day(r))),
    Shape(20, "SELECT id FROM orders WHERE status = %s AND created_at >= %s "
              "ORDER BY created_at LIMIT 50",
          lambda r, s: (r.choice(STATUSES), _recent(r))),
    Shape(12, "SELECT COUNT(*) FROM orders WHERE shop_id = %s AND status = %s",
          lambda r, s: (r.randint(1, 50), r.choice(STATUSES))),
    Shape(6, "SELECT id FROM orders WHERE shop_id = %s AND status = %s AND created_at >= %s",
          lambda r, s: (r.randint(1, 50), r.choice(STATUSES), _recent(r))),
    Shape(10, "SELECT * FROM orders WHERE shop_id = %s ORDER BY created_at DESC LIMIT 20",
          lambda r, s: (r.randint(1, 50),)),
    Shape(2, "SELECT channel, COUNT(*) FROM orders WHERE created_at >= %s AND created_at < %s "
             "GROUP BY channel",
          lambda r, s: ("2025-11-01", "2025-11-08")),
    Shape(30, "UPDATE orders SET status = %s WHERE id = %s",
          lambda r, s: (r.choice(STATUSES), r.randint(1, s.orders))),
    Shape(30, "INSERT INTO orders (id, customer_id, shop_id, status, channel, total, created_at) "
              "VALUES (%s, %s, %s, 'new', %s, %s, NOW())",
          lambda r, s: (s.orders + r.randint(1, 10**8), r.randint(1, s.customers),
                        r.randint(1, 50), r.choice(CHANNELS), r.randint(100, 50000) / 100)),
    # order_items
    Shape(90, "SELECT * FROM order_items WHERE order_id = %s",
          lambda r, s: (r.randint(1, s.orders),)),
    Shape(15, "SELECT SUM(qty) FROM order_items WHERE product_id = %s",
          lambda r, s: (r.randint(1, s.products),)),
    Shape(6, "SELECT order_id FROM order_items WHERE product_id = %s AND qty > %s",
          lambda r, s: (r.randint(1, s.products), 3)),
    Shape(30, "SELECT oi.qty, p.price FROM order_items oi JOIN products p ON p.id = oi.product_id "
              "WHERE oi.order_id = %s",
          lambda r, s: (r.randint(1, s.orders),)),
    Shape(60, "INSERT INTO order_items (id, order_id, product_id, qty, price) "
              "VALUES (%s, %s, %s, %s, %s)",
          lambda r, s: (s.order_items + r.randint(1, 10**8), r.randint(1, s.orders),
                        r.randint(1, s.products), r.randint(1, 5), r.randint(100, 20000) / 100)),
    # products
    Shape(30, "SELECT id, price FROM products WHERE category_id = %s AND active = 1 "
              "ORDER BY price LIMIT 20",
          lambda r, s: (r.randint(1, 100),)),
    Shape(10, "SELECT COUNT(*) FROM products WHERE category_id = %s",
          lambda r, s: (r.randint(1, 100),)),
    Shape(6, "SELECT id FROM products WHERE brand = %s AND category_id = %s",
          lambda r, s: (f"brand{r.randrange(200)}", r.randint(1, 100))),
    Shape(6, "SELECT * FROM products WHERE brand = %s",
          lambda r, s: (f"brand{r.randrange(200)}",)),
    # events
    Shape(45, "SELECT * FROM events WHERE customer_id = %s ORDER BY created_at DESC LIMIT 50",
          lambda r, s: (r.randint(1, s.customers),)),
    Shape(18, "SELECT COUNT(*) FROM events WHERE customer_id = %s AND kind = %s",
          lambda r, s: (r.randint(1, s.customers), f"kind{r.randrange(30)}")),
    Shape(9, "SELECT id FROM events WHERE kind = %s AND created_at >= %s",
          lambda r, s: (f"kind{r.randrange(30)}", "2024-12-20")),
    Shape(12, "SELECT ref_id FROM events WHERE kind = %s AND customer_id = %s AND created_at >= %s",
          lambda r, s: (f"kind{r.randrange(30)}", r.randint(1, s.customers), _day(r))),
    Shape(6, "SELECT COUNT(*) FROM events WHERE ref_id = %s",
          lambda r, s: (r.randint(1, 100000),)),
    Shape(90, "INSERT INTO events (id, customer_id, kind, ref_id, created_at, payload) "
              "VALUES (%s, %s, %s, %s, NOW(), REPEAT('y', 100))",
          lambda r, s: (s.events + r.randint(1, 10**8), r.randint(1, s.customers),
                        f"kind{r.randrange(30)}", r.randint(1, 100000))),
    Shape(6, "DELETE FROM events WHERE id = %s",
          lambda r, s: (r.randint(1, s.events),)),
    # a report joining two tables
    Shape(3, "SELECT o.id, c.email FROM orders o JOIN customers c ON c.id = o.customer_id "
             "WHERE o.status = %s AND o.created_at >= %s LIMIT 100",
          lambda r, s: (r.choice(STATUSES), _recent(r))),
)  # fmt: skip


# --------------------------------------------------------------------------- the join case


JOIN_ROWS = {"customers": 50_000, "orders": 500_000, "order_items": 1_500_000}


def join_schema(sizes: Sizes) -> list[str]:
    """Customers, their orders and the orders' items: nothing indexed but the primary keys."""
    c, o, oi = sizes.customers, sizes.orders, sizes.order_items
    return [
        """CREATE TABLE customers (id INT NOT NULL PRIMARY KEY, email VARCHAR(64) NOT NULL,
            name VARCHAR(64) NOT NULL, country CHAR(2) NOT NULL, created_at DATETIME NOT NULL)""",
        """CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, customer_id INT NOT NULL,
            status VARCHAR(16) NOT NULL, total DECIMAL(10,2) NOT NULL,
            created_at DATETIME NOT NULL)""",
        """CREATE TABLE order_items (id INT NOT NULL PRIMARY KEY, order_id INT NOT NULL,
            product_id INT NOT NULL, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL)""",
        f"""INSERT INTO customers SELECT seq, CONCAT('user', seq, '@example.com'),
            CONCAT('name', seq), CONCAT(CHAR(65 + seq * 7 % 10), CHAR(65 + seq * 13 % 5)),
            '2020-01-01' + INTERVAL (seq * 104729 % 2000) DAY FROM seq_1_to_{c}""",
        f"""INSERT INTO orders SELECT seq, (seq * 7919) % {c} + 1,
            ELT(1 + seq * 17 % 6, 'new', 'paid', 'packed', 'shipped', 'delivered', 'returned'),
            (seq * 104729 % 50000) / 100,
            '2024-01-01' + INTERVAL (seq * 86400 * 730 DIV {o}) SECOND FROM seq_1_to_{o}""",
        f"""INSERT INTO order_items SELECT seq, (seq - 1) DIV 3 % {o} + 1,
            (seq * 7919) % 5000 + 1, seq % 5 + 1, (seq * 104729 % 20000) / 100
            FROM seq_1_to_{oi}""",
    ]


def _email(rng: random.Random, sizes: Sizes) -> str:
    return f"user{rng.randint(1, sizes.customers)}@example.com"


JOIN_SHAPES: tuple[Shape, ...] = (
    # a customer's orders, found by the customer's email: the join the estimates multiply
    Shape(25, "SELECT o.id, o.status, o.total FROM customers c "
              "JOIN orders o ON o.customer_id = c.id WHERE c.email = %s",
          lambda r, s: (_email(r, s),)),
    # the fulfilment queue: one status, the last days, oldest first
    Shape(15, "SELECT id, customer_id, total FROM orders WHERE status = %s AND created_at >= %s "
              "ORDER BY created_at LIMIT 50",
          lambda r, s: (r.choice(STATUSES), _recent(r))),
    Shape(20, "SELECT * FROM customers WHERE email = %s", lambda r, s: (_email(r, s),)),
    Shape(20, "SELECT product_id, qty, price FROM order_items WHERE order_id = %s",
          lambda r, s: (r.randint(1, s.orders),)),
    # a customer's items: orders by customer, then items by order
    Shape(8, "SELECT o.id, oi.product_id, oi.qty FROM orders o "
             "JOIN order_items oi ON oi.order_id = o.id WHERE o.customer_id = %s",
          lambda r, s: (r.randint(1, s.customers),)),
    Shape(5, "SELECT COUNT(*) FROM orders WHERE customer_id = %s",
          lambda r, s: (r.randint(1, s.customers),)),
    Shape(15, "UPDATE orders SET status = %s WHERE id = %s",
          lambda r, s: (r.choice(STATUSES), r.randint(1, s.orders))),
    Shape(15, "INSERT INTO orders (id, customer_id, status, total, created_at) "
              "VALUES (%s, %s, 'new', %s, NOW())",
          lambda r, s: (s.orders + r.randint(1, 10**8), r.randint(1, s.customers),
                        r.randint(100, 50000) / 100)),
)  # fmt: skip


@dataclass(frozen=True)
class BenchCase:
    """One database, its tables and its workload."""

    name: str
    database: str
    rows: dict[str, int]  # per table at scale 1
    schema: Callable[[Sizes], list[str]]
    shapes: tuple[Shape, ...]
    scale: float  # default scale
    statements: int  # default statement count
    # Distinct counts of every column (engine-independent statistics), or of indexed columns
    # only, as Quanta's snapshot of a monitored server has them.
    exact_distinct: bool = True


CASES = {
    "shop": BenchCase("shop", "shopbench", SHOP_ROWS, shop_schema, SHOP_SHAPES, 0.5, 1000),
    "join": BenchCase(
        "join", "joinbench", JOIN_ROWS, join_schema, JOIN_SHAPES, 0.2, 300, exact_distinct=False
    ),
}


def statements(
    shapes: Sequence[Shape], count: int, seed: int, sizes: Sizes
) -> list[tuple[str, tuple[Any, ...]]]:
    """``count`` statements drawn by weight, with their parameters, in a seeded order."""
    rng = random.Random(seed)
    total = sum(shape.weight for shape in shapes)
    drawn: list[tuple[str, tuple[Any, ...]]] = []
    for shape in shapes:
        calls = max(1, round(count * shape.weight / total))
        drawn += [(shape.sql, shape.params(rng, sizes)) for _ in range(calls)]
    rng.shuffle(drawn)
    return drawn


@dataclass
class Run:
    """What one run of the workload measured."""

    rows_examined: int = 0
    seconds: list[float] = field(default_factory=list)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds)

    @property
    def p95_ms(self) -> float:
        return statistics.quantiles(self.seconds, n=20)[-1] * 1000


def run_workload(
    server: MariaDBServer,
    database: str,
    workload: list[tuple[str, tuple[Any, ...]]],
    log: Path | None = None,
) -> Run:
    """Run the statements in one transaction (rolled back), counting the handler reads."""
    run = Run()
    with contextlib.closing(server.connect(database, autocommit=False)) as conn:
        with conn.cursor() as cursor:
            if log is not None:
                cursor.execute(f"SET GLOBAL slow_query_log_file = '{log}'")
            before = _handler_reads(cursor)
            for sql, params in workload:
                started = time.perf_counter()
                cursor.execute(sql, params)
                cursor.fetchall()
                run.seconds.append(time.perf_counter() - started)
            run.rows_examined = _handler_reads(cursor) - before
            if log is not None:
                cursor.execute(f"SET GLOBAL slow_query_log_file = '{log.with_suffix('.rest')}'")
        conn.rollback()
    return run


def _handler_reads(cursor: Any) -> int:
    cursor.execute("SHOW SESSION STATUS LIKE 'Handler_read%%'")
    return sum(int(value) for name, value in cursor.fetchall() if name in HANDLER_READS)


# --------------------------------------------------------------------------- the indexes


@dataclass(frozen=True)
class IndexSet:
    """Indexes to add (and existing ones to drop) as one ALTER TABLE per table."""

    ddl: tuple[str, ...]
    added: int


def per_query_suggestions(found: DigestWorkload, schema: Schema) -> IndexSet:
    """Every query class's own suggestion (the first per table access), each index once."""
    wanted: dict[str, dict[tuple[str, ...], Any]] = {}
    for query in found.queries:
        try:
            advice = advise(query.sql, schema, query.default_db)
        except AdviceError:
            continue
        for item in advice:
            if item.action is not Action.NONE:
                key = tuple(c.name for c in item.columns)
                wanted.setdefault(item.table, {}).setdefault(key, item)
    ddl = []
    for table, items in sorted(wanted.items()):
        adds = []
        for number, (key, item) in enumerate(sorted(items.items()), 1):
            adds.append((f"bench_q{number}_{'_'.join(key)}"[:64], item.columns))
        ddl.append(alter_table_ddl(table, adds))
    return IndexSet(tuple(ddl), sum(len(items) for items in wanted.values()))


def plan_indexes(plans: list[TablePlan]) -> IndexSet:
    return IndexSet(tuple(p.ddl for p in plans if p.ddl), sum(len(p.adds) for p in plans))


@contextlib.contextmanager
def applied(server: MariaDBServer, database: str, indexes: IndexSet) -> Iterator[float]:
    """The indexes built (yields the seconds it took), then the bench tables as they were."""
    with contextlib.closing(server.connect(database)) as conn, conn.cursor() as cursor:
        original = _secondary_indexes(cursor, database)
        started = time.perf_counter()
        for ddl in indexes.ddl:
            cursor.execute(ddl)
        for table in sorted({name for name, _ in original} | _tables(cursor)):
            cursor.execute(f"ANALYZE TABLE {table}")
            cursor.fetchall()
        built = time.perf_counter() - started
        try:
            yield built
        finally:
            _restore(cursor, database, original)


def _tables(cursor: Any) -> set[str]:
    cursor.execute("SHOW TABLES")
    return {str(name) for (name,) in cursor.fetchall()}


def _secondary_indexes(cursor: Any, database: str) -> dict[tuple[str, str], tuple[bool, str]]:
    """(table, index) -> (unique, its column list) of every index but the primary keys."""
    cursor.execute(
        "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, "
        "GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS "
        "WHERE TABLE_SCHEMA = %s AND INDEX_NAME <> 'PRIMARY' GROUP BY 1, 2, 3",
        (database,),
    )
    return {(t, i): (not non_unique, columns) for t, i, non_unique, columns in cursor.fetchall()}


def _restore(cursor: Any, database: str, original: dict[tuple[str, str], tuple[bool, str]]) -> None:
    """Drop the bench's indexes; put back an original one a plan dropped."""
    now = _secondary_indexes(cursor, database)
    for table, name in sorted(set(now) - set(original)):
        cursor.execute(f"ALTER TABLE {table} DROP INDEX `{name}`")
    for (table, name), (unique, columns) in sorted(original.items()):
        if (table, name) not in now:
            kind = "UNIQUE INDEX" if unique else "INDEX"
            cursor.execute(f"ALTER TABLE {table} ADD {kind} `{name}` ({columns})")


# --------------------------------------------------------------------------- one case


@dataclass(frozen=True)
class Outcome:
    """A case's figures for the RESULT line."""

    benefit_share: float
    index_share: float
    estimate_over_measured: float


def estimated_per_call(query: WorkloadQuery, schema: Schema) -> int | None:
    """The advisor's rows examined per call of a query with the existing indexes: the sum of
    its per-table estimates (an inner table's is per lookup times the lookups)."""
    try:
        accesses = table_accesses(query.sql, schema, query.default_db)
    except AdviceError:
        return None
    return sum(access_rows(a, schema.tables[a.table], schema.server) for a in accesses)


def print_estimates(found: DigestWorkload, schema: Schema) -> float:
    """Per reading class: rows examined per call measured and estimated; returns the
    estimated rows examined per second over the measured ones."""
    print(f"{'class':<17} {'calls':>6} {'measured/call':>14} {'estimated/call':>15}  statement")
    estimated_total = measured_total = 0.0
    for query in found.queries:
        estimate = estimated_per_call(query, schema)
        if not estimate or query.rows_examined is None:
            continue
        measured = query.rows_examined / query.calls
        estimated_total += estimate * query.calls
        measured_total += query.rows_examined
        print(
            f"{query.query_id:<17} {query.calls:>6.0f} {measured:>14,.0f} {estimate:>15,}  "
            f"{' '.join(query.sql.split())[:70]}"
        )
    ratio = estimated_total / measured_total if measured_total else 0.0
    print(
        f"workload: {measured_total / found.window_seconds:,.0f} rows examined/s measured, "
        f"{estimated_total / found.window_seconds:,.0f} estimated ({ratio:,.1f}x)"
    )
    return ratio


def run_case(server: MariaDBServer, case: BenchCase, args: argparse.Namespace) -> Outcome:
    """Build the case's tables, run its workload three times, print the figures."""
    scale = args.scale if args.scale is not None else case.scale
    count = args.statements if args.statements is not None else case.statements
    sizes = scaled(case.rows, scale)
    workload = statements(case.shapes, count, args.seed, sizes)
    started = time.perf_counter()
    with contextlib.closing(server.connect()) as conn:
        create_schema(conn, case, sizes)
        schema = read_schema(conn, case.database, exact_distinct=case.exact_distinct)
    rows = sum(t.rows or 0 for t in schema.tables.values())
    version = ".".join(map(str, schema.server.version))
    print(
        f"== case {case.name}: MariaDB {version}, {len(schema.tables)} tables, {rows:,} rows, "
        f"built in {time.perf_counter() - started:.1f} s; workload of {len(case.shapes)} "
        f"shapes, {len(workload)} statements (seed {args.seed})",
        flush=True,
    )
    log = server.slow_log_path.parent / f"{case.name}-baseline-slow.log"
    baseline = run_workload(server, case.database, workload, log)
    found = workload_from_digest(digest_files([log], DigestOptions(jobs=1)).digest, schema)
    reads = sum(1 for q in found.queries if not q.sql.lstrip().upper().startswith(
        ("INSERT", "UPDATE", "DELETE")))  # fmt: skip
    print(
        f"slow log of the baseline: {len(found.queries)} classes ({reads} reading), "
        f"{found.window_seconds:.0f} s; writes/s "
        + ", ".join(
            f"{w.table.split('.')[1]} +{w.inserted_per_s:.1f} ~{w.updated_per_s:.1f} "
            f"-{w.deleted_per_s:.1f}"
            for w in found.writes.values()
        ),
        flush=True,
    )
    ratio = print_estimates(found, schema)
    suggestions = per_query_suggestions(found, schema)
    started = time.perf_counter()
    rules = PlanRules(min_gain_share=args.min_gain_share)
    plans = plan_workload(
        found.queries, schema, found.writes, rules, window_seconds=found.window_seconds
    )
    planned_in = time.perf_counter() - started
    plan = plan_indexes(plans)
    runs = {"no new index": (baseline, 0, 0.0)}
    for label, indexes in (("per-query suggestions", suggestions), ("workload plan", plan)):
        with applied(server, case.database, indexes) as built:
            repeated = [
                run_workload(server, case.database, workload) for _ in range(max(1, args.repeats))
            ]
            counts = ", ".join(f"{r.rows_examined:,}" for r in repeated)
            print(f"{label}: rows examined per run {counts}", flush=True)
            # The first run after ANALYZE TABLE also reads the statistics tables (a hundred
            # rows or so); the later runs count the same rows to the row.
            fastest = min(repeated, key=lambda r: r.total_seconds)
            steady = Run(repeated[-1].rows_examined, fastest.seconds)
            runs[label] = (steady, indexes.added, built)
    print()
    print(f"{'configuration':<22} {'new idx':>7} {'rows examined':>14} {'latency s':>10} "
          f"{'p95 ms':>8} {'build s':>8}")  # fmt: skip
    for label, (run, added, built) in runs.items():
        print(
            f"{label:<22} {added:>7} {run.rows_examined:>14,} {run.total_seconds:>10.2f} "
            f"{run.p95_ms:>8.2f} {built:>8.1f}"
        )
    print()
    print(f"Per-query suggestions ({suggestions.added} indexes):")
    for ddl in suggestions.ddl:
        print(f"  {ddl};")
    print()
    print(f"Workload plan ({plan.added} indexes, planned in {planned_in:.2f} s):")
    print(render_plan_text(plans), end="")
    base = baseline.rows_examined
    suggested_cut = base - runs["per-query suggestions"][0].rows_examined
    plan_cut = base - runs["workload plan"][0].rows_examined
    latency = (
        runs["workload plan"][0].total_seconds / runs["per-query suggestions"][0].total_seconds
    )
    print()
    print(
        f"rows examined cut: per-query {suggested_cut:,} ({suggested_cut / base:.1%}), plan "
        f"{plan_cut:,} ({plan_cut / base:.1%}); plan latency / per-query latency {latency:.2f}"
    )
    print()
    return Outcome(
        benefit_share=plan_cut / suggested_cut if suggested_cut else 0.0,
        index_share=plan.added / suggestions.added if suggestions.added else 0.0,
        estimate_over_measured=ratio,
    )


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; the last line is the RESULT line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append",
                        help="the case to run (repeatable; default both)")  # fmt: skip
    parser.add_argument("--scale", type=float, help="rows x K (default: 0.5 shop, 0.2 join)")
    parser.add_argument("--statements", type=int, help="(default: 1,000 shop, 300 join)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument(
        "--min-gain-share", type=float, default=PlanRules().min_gain_share,
        help="the plan's rule: the share of the workload's rows examined a new index must save",
    )  # fmt: skip
    args = parser.parse_args(argv)
    names = args.case or list(CASES)
    outcomes: dict[str, Outcome] = {}
    with started_mariadb(SERVER_ARGS) as own:
        for name in names:
            outcomes[name] = run_case(own.server, CASES[name], args)
    fields = []
    for name, outcome in outcomes.items():
        prefix = "" if name == "shop" else f"{name}_"
        fields += [
            f"{prefix}plan_benefit_share={outcome.benefit_share:.3f}",
            f"{prefix}plan_index_share={outcome.index_share:.3f}",
        ]
        if name == "join":
            fields.append(f"join_estimate_over_measured={outcome.estimate_over_measured:.1f}")
    print("RESULT " + " ".join(fields))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
