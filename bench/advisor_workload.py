"""Workload index plan against every per-query suggestion, on a real MariaDB (issue 29).

Starts a throw-away MariaDB, builds a shop schema (5 tables, about 1.3 million rows by default,
one existing secondary index besides the primary keys and a UNIQUE one) and runs a workload of
34 query shapes with realistic frequencies (lookups by key, a customer's latest orders, a
category page, counts, reports on a time range, joins) and writes (inserts, status updates,
deletes), in a seeded random order, each run inside one transaction that is rolled back so
that every configuration reads the same data. The workload runs three times:

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

The last line is ``RESULT plan_benefit_share=X plan_index_share=Y``: X is the plan's reduction
of rows examined as a share of the per-query suggestions' reduction, Y the plan's new index
count as a share of theirs (target X >= 0.9 with Y <= 0.5).

Usage: .venv/bin/python bench/advisor_workload.py [--scale K] [--statements N] [--seed S]
       [--repeats R]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymysql

from quanta.analysis.advisor import Action, AdviceError, advise, parse_schema
from quanta.analysis.advisor.engine import alter_table_ddl
from quanta.analysis.advisor.render import render_plan_text
from quanta.analysis.advisor.schema import Schema
from quanta.analysis.advisor.workload import PlanRules, TablePlan, plan_workload
from quanta.digest.runner import DigestOptions, digest_files
from quanta.digest.workload import DigestWorkload, workload_from_digest
from tests.fixtures.servers import MariaDBServer, started_mariadb

DATABASE = "shopbench"
# A buffer pool that holds the data: rows examined, not disk reads, is what differs.
SERVER_ARGS = ("--innodb-buffer-pool-size=512M", "--log-slow-verbosity=")
DEFAULT_SCALE = 0.5
DEFAULT_STATEMENTS = 1000
DEFAULT_SEED = 29
# Runs of each indexed configuration; its fastest is reported (the machine is shared: the
# best of a few is the least noisy figure). The baseline, of full scans, runs once.
DEFAULT_REPEATS = 3
# Rows per table at scale 1.
CUSTOMERS = 20_000
PRODUCTS = 5_000
ORDERS = 150_000
ORDER_ITEMS = 450_000
EVENTS = 300_000
# The handler counters whose deltas are the rows a statement read.
HANDLER_READS = (
    "Handler_read_first", "Handler_read_key", "Handler_read_last", "Handler_read_next",
    "Handler_read_prev", "Handler_read_rnd", "Handler_read_rnd_next",
)  # fmt: skip


@dataclass(frozen=True)
class Sizes:
    """Rows per table for one scale."""

    customers: int
    products: int
    orders: int
    order_items: int
    events: int

    @classmethod
    def scaled(cls, scale: float) -> Sizes:
        return cls(*(max(100, round(n * scale)) for n in
                     (CUSTOMERS, PRODUCTS, ORDERS, ORDER_ITEMS, EVENTS)))  # fmt: skip


# --------------------------------------------------------------------------- schema and data


def create_schema(conn: pymysql.Connection[Any], sizes: Sizes) -> None:
    """The five tables, filled from MariaDB's sequence engine with deterministic values."""
    c, p, o, oi, e = (sizes.customers, sizes.products, sizes.orders, sizes.order_items,
                      sizes.events)  # fmt: skip
    statements = [
        f"CREATE DATABASE {DATABASE}",
        f"USE {DATABASE}",
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
    with conn.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
        for table in ("customers", "products", "orders", "order_items", "events"):
            cursor.execute(f"ANALYZE TABLE {table} PERSISTENT FOR ALL")
            cursor.fetchall()


def read_schema(conn: pymysql.Connection[Any]) -> Schema:
    """The advisor's snapshot of the bench tables, with exact row and distinct counts."""
    tables: dict[str, Any] = {}
    with conn.cursor() as cursor:
        cursor.execute("SELECT VERSION()")
        version = str(cursor.fetchone()[0])
        cursor.execute(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s",
            (DATABASE,),
        )
        for (name,) in sorted(cursor.fetchall()):
            cursor.execute(
                "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                (DATABASE, name),
            )
            columns = [(str(c), str(t)) for c, t in cursor.fetchall()]
            counts = ", ".join(f"COUNT(DISTINCT `{c}`)" for c, _ in columns)
            cursor.execute(f"SELECT COUNT(*), {counts} FROM {DATABASE}.{name}")
            row = cursor.fetchone()
            cursor.execute(f"SHOW INDEX FROM {DATABASE}.{name}")
            keys: dict[str, dict[str, Any]] = {}
            for index in cursor.fetchall():
                key = keys.setdefault(index[2], {"name": index[2], "columns": [],
                                                 "unique": not index[1]})  # fmt: skip
                key["columns"].append(index[4])
            primary = keys.pop("PRIMARY")
            tables[f"{DATABASE}.{name}"] = {
                "rows": int(row[0]),
                "primary_key": primary["columns"],
                "columns": {
                    c: {"type": t, "distinct": int(n)}
                    for (c, t), n in zip(columns, row[1:], strict=True)
                },
                "indexes": list(keys.values()),
            }
    return parse_schema({"server": {"flavor": "mariadb", "version": version}, "tables": tables})


# --------------------------------------------------------------------------- the workload


@dataclass(frozen=True)
class Shape:
    """One query shape: its weight (calls per 1,000 statements) and its parameters."""

    weight: float
    sql: str
    params: Callable[[random.Random, Sizes], tuple[Any, ...]]


def _day(rng: random.Random) -> str:
    return f"2024-{1 + rng.randrange(12):02d}-{1 + rng.randrange(28):02d}"


def _recent(rng: random.Random) -> str:
    return f"2025-12-{1 + rng.randrange(20):02d}"


STATUSES = ("new", "paid", "packed", "shipped", "delivered", "returned")
CHANNELS = ("web", "ios", "android", "store", "phone")

SHAPES: tuple[Shape, ...] = (
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


def statements(count: int, seed: int, sizes: Sizes) -> list[tuple[str, tuple[Any, ...]]]:
    """``count`` statements drawn by weight, with their parameters, in a seeded order."""
    rng = random.Random(seed)
    total = sum(shape.weight for shape in SHAPES)
    drawn: list[tuple[str, tuple[Any, ...]]] = []
    for shape in SHAPES:
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
    server: MariaDBServer, workload: list[tuple[str, tuple[Any, ...]]], log: Path | None = None
) -> Run:
    """Run the statements in one transaction (rolled back), counting the handler reads."""
    run = Run()
    with contextlib.closing(server.connect(DATABASE, autocommit=False)) as conn:
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
def applied(server: MariaDBServer, indexes: IndexSet) -> Iterator[float]:
    """The indexes built (yields the seconds it took), then the bench tables as they were."""
    with contextlib.closing(server.connect(DATABASE)) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS "
            "WHERE TABLE_SCHEMA = %s AND SEQ_IN_INDEX = 1",
            (DATABASE,),
        )
        original = set(cursor.fetchall())
        started = time.perf_counter()
        for ddl in indexes.ddl:
            cursor.execute(ddl)
        for table in {name for name, _ in original}:
            cursor.execute(f"ANALYZE TABLE {table}")
            cursor.fetchall()
        built = time.perf_counter() - started
        try:
            yield built
        finally:
            _restore(cursor, original)


def _restore(cursor: Any, original: set[tuple[str, str]]) -> None:
    """Drop the bench's indexes; put back an original one a plan dropped (idx_orders_customer)."""
    cursor.execute(
        "SELECT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS "
        "WHERE TABLE_SCHEMA = %s AND SEQ_IN_INDEX = 1",
        (DATABASE,),
    )
    now = set(cursor.fetchall())
    for table, name in sorted(now - original):
        cursor.execute(f"ALTER TABLE {table} DROP INDEX `{name}`")
    if ("orders", "idx_orders_customer") not in now:
        cursor.execute("ALTER TABLE orders ADD INDEX idx_orders_customer (customer_id)")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; the last line is the RESULT line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=DEFAULT_SCALE, help="rows x K")
    parser.add_argument("--statements", type=int, default=DEFAULT_STATEMENTS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument(
        "--min-gain-share", type=float, default=PlanRules().min_gain_share,
        help="the plan's rule: the share of the workload's rows examined a new index must save",
    )  # fmt: skip
    args = parser.parse_args(argv)
    sizes = Sizes.scaled(args.scale)
    workload = statements(args.statements, args.seed, sizes)
    with started_mariadb(SERVER_ARGS) as own:
        server = own.server
        started = time.perf_counter()
        with contextlib.closing(server.connect()) as conn:
            create_schema(conn, sizes)
            schema = read_schema(conn)
        rows = sum(t.rows or 0 for t in schema.tables.values())
        version = ".".join(map(str, schema.server.version))
        print(
            f"MariaDB {version}: {len(schema.tables)} tables, {rows:,} rows, "
            f"built in {time.perf_counter() - started:.1f} s; workload of {len(SHAPES)} shapes, "
            f"{len(workload)} statements (seed {args.seed})",
            flush=True,
        )
        log = server.slow_log_path.parent / "baseline-slow.log"
        baseline = run_workload(server, workload, log)
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
            with applied(server, indexes) as built:
                repeated = [run_workload(server, workload) for _ in range(max(1, args.repeats))]
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
    benefit = plan_cut / suggested_cut if suggested_cut else 0.0
    index_share = plan.added / suggestions.added if suggestions.added else 0.0
    latency = (
        runs["workload plan"][0].total_seconds / runs["per-query suggestions"][0].total_seconds
    )
    print()
    print(
        f"rows examined cut: per-query {suggested_cut:,} ({suggested_cut / base:.1%}), plan "
        f"{plan_cut:,} ({plan_cut / base:.1%}); plan latency / per-query latency {latency:.2f}"
    )
    print(f"RESULT plan_benefit_share={benefit:.3f} plan_index_share={index_share:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
