"""A deterministic, realistic slow-log generator for the benchmarks.

The same ``(events, seed, flavor)`` always gives the same bytes. The log is written as it is
generated, a few thousand entries at a time, so a file of millions of events needs no more
memory than a small one.

The workload is an e-commerce / SaaS application with four databases (``shop``, ``auth``,
``billing``, ``analytics``) seen from six kinds of clients (web app, background workers,
reporting, ETL, monitoring, a DBA):

* about 235 distinct statement shapes: point selects, joins of two to four tables, IN lists
  of 1 to 40 values, subqueries, aggregates and reports, single and multi-row INSERT,
  INSERT IGNORE / REPLACE / INSERT ... SELECT / single-row ON DUPLICATE KEY UPDATE, UPDATE,
  DELETE, transactions (BEGIN or START TRANSACTION ... COMMIT, sometimes ROLLBACK), SET and
  SHOW statements, CALL, administrator commands (``# administrator command: Quit;``);
* each shape sent by one or two client libraries, so the same query arrives spelled
  differently: upper or lower case keywords, ``id = 1`` or ``id=1``, backticked names,
  several lines, trailing ``/*controller:...*/`` or sqlcommenter comments, a leading
  ``-- name:`` comment line, optimizer hints;
* query tags as applications write them: an ORM statement names the controller and action
  of one of the one to three places its shape is called from, and a tenth of the plain ones
  carry sqlcommenter's per-request ``traceparent``;
* Zipf-like popularity (a few shapes make most of the events), log-normal latency per
  shape, rare slow outliers (lock waits, cold caches) hundreds of times the median;
* ``use db;`` written only when the database changes, as the server does; connections that
  quit and come back with a new thread id and a session preamble (``SET NAMES`` ...).

It deliberately avoids statement features where pt-query-digest is known to put different
queries in one class: digits inside identifiers (it turns ``t1`` into ``t?``), an
``ON DUPLICATE KEY UPDATE`` after a multi-row ``VALUES`` (it drops the clause), ``IS TRUE``
beside ``IS NULL`` (both become ``is ?``), two shapes differing only by ``+`` or ``-`` (both
become ``?``), names starting with ``asc`` after ORDER BY, and ``#`` inside statements. So a
disagreement with pt-query-digest on this corpus is a real one.

Three flavors, with the attribute lines those servers write (as in percona-toolkit's and
go-mysql's sample logs and MariaDB 10.11's own, tests/analysis/data/slowlogs):

* ``"mysql80"``: MySQL 8.0, ISO ``# Time:`` on every entry, ``Id:`` on the User@Host line.
* ``"percona"``: Percona Server 8.0 with ``log_slow_verbosity=full`` and
  ``log_slow_rate_limit``: ``# Schema:``/``Last_errno:``, ``Rows_affected``/``Bytes_sent`` on
  the Query_time line, ``# Tmp_tables:``, ``# InnoDB_trx_id:``, ``# QC_Hit:``/``Full_scan:``
  ..., ``# Filesort:``, the three ``#   InnoDB_...`` lines and
  ``# Log_slow_rate_type: query  Log_slow_rate_limit: 10``.
* ``"mariadb"``: MariaDB 10.11 with ``log_slow_verbosity=query_plan,innodb,explain``:
  ``# Time: 240102  3:04:05`` at most once a second, ``# Thread_id:``/``Schema:``/``QC_hit:``,
  ``# Rows_affected:``/``Bytes_sent:``, the ``# Pages_accessed:`` and ``# Pages_read_time:``
  lines of statements that touch tables, the query-plan lines of plans with a full scan,
  temporary table or filesort, and the ``# explain:`` block of SELECTs.

Example:
    >>> from bench._slowlog_corpus import write_slow_log
    >>> write_slow_log("/tmp/slow.log", events=1000, seed=7)
"""

from __future__ import annotations

import math
import os
import random
import re
import string
import time
from bisect import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Literal

__all__ = [
    "DEFAULT_CACHE_DIR",
    "FLAVORS",
    "GENERATOR_VERSION",
    "Flavor",
    "cached_slow_log",
    "iter_slow_log",
    "statement_templates",
    "write_slow_log",
]

Flavor = Literal["mysql80", "percona", "mariadb"]
FLAVORS: tuple[Flavor, ...] = ("mysql80", "percona", "mariadb")
# Part of every cache file name: bump it whenever the output for a given seed changes.
GENERATOR_VERSION = 3
DEFAULT_CACHE_DIR = Path(__file__).resolve().parent.parent / ".bench-cache"

Progress = Callable[[int], None]
Slot = Callable[[random.Random], str]

# 2024-03-04T00:00:00Z: every log starts here, whatever the seed.
_START_EPOCH = 1_709_510_400.0
_EVENTS_PER_SECOND = 60.0
_OUTLIER_RATE = 0.0006
_ZIPF_EXPONENT = 1.05
_CHUNK_EVENTS = 2_000

# ---------------------------------------------------------------------------------------
# Literals. Each slot name in a template is filled by the function of that name.

# fmt: off
_FIRST = (
    "anna", "ben", "chloe", "david", "emma", "farid", "grace", "hugo", "ines", "jon", "kira",
    "liam", "maya", "noah", "olga", "pavel", "quinn", "rosa", "sam", "tara"
)
_LAST = (
    "smith", "garcia", "muller", "rossi", "dubois", "novak", "kowalski", "jensen", "silva",
    "tanaka", "kim", "nguyen", "brown", "cohen", "ivanova", "okafor"
)
# Names with a quote, written both ways clients escape it.
_QUOTED_LAST = ("O''Brien", "O\\'Neil", "D''Angelo")
_DOMAINS = ("example.com", "mail.example.org", "corp.example.net", "shop.example")
_ORDER_STATUS = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
_WORDS = (
    "blue", "cotton", "shirt", "lamp", "desk", "chair", "coffee", "mug", "leather", "wallet",
    "garden", "hose", "kettle", "steel", "bottle", "wool", "scarf", "phone", "case", "charger",
    "cable", "speaker", "notebook", "pencil", "backpack"
)
_EVENTS = (
    "signup", "login", "add_to_cart", "checkout_started", "checkout_completed", "search",
    "view_product", "apply_coupon", "logout"
)
_PATHS = (
    "/", "/cart", "/checkout", "/search", "/account", "/orders", "/products/view",
    "/category/list", "/help", "/wishlist"
)
_CARRIERS = ("ups", "dhl", "fedex", "usps", "colissimo")
_PROVIDERS = ("stripe", "paypal", "adyen")
_METRICS = ("api_calls", "seats", "storage_gb", "emails_sent")
_EXPERIMENTS = ("new_checkout", "free_shipping_banner", "search_ranking", "pricing_page")
# fmt: on


def _id(rng: random.Random) -> str:
    # Skewed: recent rows are read more often than old ones.
    return str(int(5_000_000 * rng.random() ** 0.35) + 1)


def _small(rng: random.Random) -> str:
    return str(rng.randint(1, 250))


def _ids(rng: random.Random) -> str:
    n = min(40, int(rng.expovariate(0.18)) + 1)
    return rng.choice((", ", ",")).join(_id(rng) for _ in range(n))


def _qty(rng: random.Random) -> str:
    return str(rng.randint(1, 5))


def _count(rng: random.Random) -> str:
    return str(rng.randint(0, 5000))


def _money(rng: random.Random) -> str:
    return f"{rng.lognormvariate(3.5, 1.0):.2f}"


def _bool(rng: random.Random) -> str:
    return rng.choice(("0", "1"))


def _limit(rng: random.Random) -> str:
    return rng.choice(("10", "20", "20", "25", "50", "100"))


def _offset(rng: random.Random) -> str:
    return str(rng.randint(0, 20) * 20)


def _quote(text: str) -> str:
    return "'" + text + "'"


def _name(rng: random.Random) -> str:
    if rng.random() < 0.02:
        return _quote(rng.choice(_QUOTED_LAST))
    return _quote(rng.choice(_LAST).capitalize())


def _first(rng: random.Random) -> str:
    return _quote(rng.choice(_FIRST).capitalize())


def _email(rng: random.Random) -> str:
    user = f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}{rng.randint(1, 9999)}"
    return _quote(f"{user}@{rng.choice(_DOMAINS)}")


def _hex(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(digits * 4):0{digits}x}"


def _token(rng: random.Random) -> str:
    return _quote(_hex(rng, 40))


def _uuid(rng: random.Random) -> str:
    h = _hex(rng, 32)
    return _quote(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")


def _sku(rng: random.Random) -> str:
    return _quote(f"SKU-{rng.randint(10000, 99999)}-{rng.choice('ABCDEFGH')}")


def _code(rng: random.Random) -> str:
    return _quote("".join(rng.choice(string.ascii_uppercase) for _ in range(8)))


def _word(rng: random.Random) -> str:
    return _quote(rng.choice(_WORDS))


def _title(rng: random.Random) -> str:
    return _quote(f"{rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}")


def _text(rng: random.Random) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 14)))
    return _quote(words.capitalize() + rng.choice((".", "!", ", would buy again.")))


def _prefix(rng: random.Random) -> str:
    return _quote(rng.choice(_WORDS)[: rng.randint(2, 4)] + "%")


def _slug(rng: random.Random) -> str:
    return _quote(f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}")


def _status(rng: random.Random) -> str:
    return _quote(rng.choice(_ORDER_STATUS))


def _ip(rng: random.Random) -> str:
    return _quote(
        f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    )


def _date(rng: random.Random) -> str:
    return _quote(
        time.strftime("%Y-%m-%d", time.gmtime(_START_EPOCH - rng.randint(0, 400) * 86400))
    )


def _datetime(rng: random.Random) -> str:
    moment = time.gmtime(_START_EPOCH - rng.randint(0, 90 * 86400))
    return _quote(time.strftime("%Y-%m-%d %H:%M:%S", moment))


def _event(rng: random.Random) -> str:
    return _quote(rng.choice(_EVENTS))


def _path(rng: random.Random) -> str:
    return _quote(rng.choice(_PATHS))


def _json(rng: random.Random) -> str:
    return _quote(f'{{"source":"{rng.choice(_PATHS)}","value":{rng.randint(1, 500)}}}')


def _carrier(rng: random.Random) -> str:
    return _quote(rng.choice(_CARRIERS))


def _provider(rng: random.Random) -> str:
    return _quote(rng.choice(_PROVIDERS))


def _metric(rng: random.Random) -> str:
    return _quote(rng.choice(_METRICS))


def _experiment(rng: random.Random) -> str:
    return _quote(rng.choice(_EXPERIMENTS))


def _variant(rng: random.Random) -> str:
    return _quote(rng.choice(("control", "treatment")))


def _hash(rng: random.Random) -> str:
    return _quote("$argon2id$v=19$m=65536$" + _hex(rng, 43))


_SLOTS: dict[str, Slot] = {
    "id": _id, "id_b": _id, "id_c": _id, "small": _small, "small_b": _small, "ids": _ids,
    "ids_b": _ids, "qty": _qty, "count": _count, "count_b": _count, "money": _money,
    "money_b": _money, "bool": _bool, "limit": _limit, "offset": _offset, "name": _name,
    "first": _first, "email": _email, "token": _token, "uuid": _uuid, "sku": _sku,
    "code": _code, "word": _word, "title": _title, "text": _text, "prefix": _prefix,
    "slug": _slug, "status": _status, "ip": _ip, "date": _date, "date_b": _date,
    "datetime": _datetime, "datetime_b": _datetime, "event": _event, "path": _path,
    "json": _json, "carrier": _carrier, "provider": _provider, "metric": _metric,
    "experiment": _experiment, "variant": _variant, "hash": _hash,
}  # fmt: skip


# ---------------------------------------------------------------------------------------
# Statement shapes. Templates write keywords and functions in upper case and names in lower
# case (without digits), so that a client style can rewrite them; {slot} is a literal.


@dataclass(frozen=True, slots=True)
class _Cost:
    """Latency and row counts of a kind of statement."""

    median_lo: float  # seconds; each shape draws its median log-uniformly in [lo, hi]
    median_hi: float
    sigma: float  # of the log-normal latency around the median
    scan_rate: float  # rows examined per second of query time, beyond the rows sent
    sent_hi: int  # rows sent drawn in [0, sent_hi] (1 for point reads)


_COSTS: dict[str, _Cost] = {
    "trivial": _Cost(0.000006, 0.00003, 0.35, 0, 0),
    "show": _Cost(0.0002, 0.004, 0.5, 0, 400),
    "point": _Cost(0.00004, 0.0003, 0.5, 0, 1),
    "small": _Cost(0.0002, 0.003, 0.6, 20_000, 30),
    "write": _Cost(0.00008, 0.0012, 0.6, 0, 0),
    "commit": _Cost(0.0002, 0.003, 0.8, 0, 0),
    "join": _Cost(0.001, 0.02, 0.7, 150_000, 50),
    "scan": _Cost(0.02, 0.4, 0.8, 600_000, 500),
    "bulk": _Cost(0.01, 0.3, 0.7, 300_000, 0),
    "report": _Cost(0.3, 4.0, 0.9, 1_500_000, 200),
}


@dataclass(frozen=True, slots=True)
class _Shape:
    """One statement shape as the application writes it."""

    db: str
    cost: str
    sql: str
    # Client styles that send it; the first sends most of it.
    styles: tuple[str, ...] = ("plain",)
    # Row template of a multi-row VALUES ({rows} in sql) and the range of its row count.
    row: str = ""
    rows: tuple[int, int] = (1, 1)
    writes: bool = False
    admin: bool = False  # an administrator command, not a statement


def _s(
    db: str, cost: str, styles: str, sql: str, *, row: str = "", rows: tuple[int, int] = (1, 1)
) -> _Shape:
    """A shape; ``styles`` names its client styles, space-separated, the main one first."""
    writes = sql.split(None, 1)[0] in ("INSERT", "UPDATE", "DELETE", "REPLACE")
    return _Shape(db, cost, " ".join(sql.split()), tuple(styles.split()), row, rows, writes)


def _admin(command: str) -> _Shape:
    return _Shape("", "trivial", f"administrator command: {command}", ("raw",), admin=True)


# Session and transaction statements, written as clients send them (no restyling).
BEGIN = _s("", "trivial", "raw", "BEGIN")
START = _s("", "trivial", "raw", "START TRANSACTION")
COMMIT = _s("", "commit", "raw lower", "COMMIT")
ROLLBACK = _s("", "trivial", "raw", "ROLLBACK")
QUIT = _admin("Quit")

# Table name -> (database, columns other than id). The column name picks its literal.
_TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "customers": ("shop", ("email", "first_name", "last_name", "status", "created_at")),
    "addresses": ("shop", ("customer_id", "street", "city", "country", "postal_code")),
    "products": ("shop", ("sku", "name", "price", "category_id", "is_active", "stock")),
    "categories": ("shop", ("name", "parent_id", "slug")),
    "product_categories": ("shop", ("product_id", "category_id")),
    "warehouses": ("shop", ("name", "city")),
    "inventory": ("shop", ("product_id", "warehouse_id", "quantity", "updated_at")),
    "carts": ("shop", ("customer_id", "status", "created_at", "updated_at")),
    "cart_items": ("shop", ("cart_id", "product_id", "quantity", "price")),
    "orders": ("shop", ("customer_id", "status", "total", "coupon_id", "created_at")),
    "order_items": ("shop", ("order_id", "product_id", "quantity", "price")),
    "payments": ("shop", ("order_id", "amount", "provider", "status", "created_at")),
    "shipments": ("shop", ("order_id", "carrier", "tracking_code", "status", "shipped_at")),
    "reviews": ("shop", ("product_id", "customer_id", "rating", "body", "created_at")),
    "coupons": ("shop", ("code", "discount", "expires_at", "uses")),
    "wishlists": ("shop", ("customer_id", "product_id", "created_at")),
    "accounts": ("auth", ("email", "password_hash", "status", "created_at", "last_login_at")),
    "sessions": ("auth", ("account_id", "token", "ip", "user_agent", "expires_at")),
    "api_keys": ("auth", ("account_id", "key_hash", "created_at", "last_used_at")),
    "login_attempts": ("auth", ("email", "ip", "success", "created_at")),
    "roles": ("auth", ("name", "description")),
    "account_roles": ("auth", ("account_id", "role_id")),
    "password_resets": ("auth", ("account_id", "token", "expires_at")),
    "plans": ("billing", ("name", "price", "billing_period", "is_active")),
    "subscriptions": ("billing", ("account_id", "plan_id", "status", "current_period_end")),
    "invoices": ("billing", ("account_id", "subscription_id", "amount", "status", "due_at")),
    "invoice_lines": ("billing", ("invoice_id", "description", "amount", "quantity")),
    "charges": ("billing", ("invoice_id", "amount", "status", "provider_ref", "created_at")),
    "refunds": ("billing", ("charge_id", "amount", "reason", "created_at")),
    "usage_records": ("billing", ("subscription_id", "metric", "quantity", "recorded_at")),
    "page_views": ("analytics", ("session_key", "path", "referrer", "customer_id", "viewed_at")),
    "events": ("analytics", ("name", "customer_id", "properties", "created_at")),
    "daily_sales": ("analytics", ("day", "product_id", "units", "revenue")),
    "product_stats": ("analytics", ("product_id", "views", "purchases", "updated_at")),
    "ab_assignments": ("analytics", ("experiment", "customer_id", "variant", "assigned_at")),
    "search_queries": ("analytics", ("term", "results", "customer_id", "searched_at")),
}

# fmt: off
_COLUMN_SLOTS = {
    "email": "email", "first_name": "first", "last_name": "name", "status": "status",
    "street": "title", "city": "word", "country": "code", "postal_code": "code",
    "sku": "sku", "name": "title", "price": "money", "is_active": "bool", "stock": "count",
    "slug": "slug", "quantity": "qty", "total": "money", "amount": "money",
    "provider": "provider", "carrier": "carrier", "tracking_code": "code", "rating": "qty",
    "body": "text", "code": "code", "discount": "money", "uses": "count",
    "password_hash": "hash", "token": "token", "ip": "ip", "user_agent": "text",
    "key_hash": "token", "success": "bool", "description": "text", "billing_period": "word",
    "provider_ref": "uuid", "reason": "text", "metric": "metric", "session_key": "uuid",
    "path": "path", "referrer": "path", "properties": "json", "day": "date", "units": "count",
    "revenue": "money", "views": "count", "purchases": "count", "experiment": "experiment",
    "variant": "variant", "term": "word", "results": "count",
}
# fmt: on


def _column_slot(column: str) -> str:
    if column.endswith("_id"):
        return "{id}"
    if column.endswith(("_at", "_end")):
        return "{datetime}"
    return "{" + _COLUMN_SLOTS[column] + "}"


def _crud(table: str, ops: str, styles: str) -> list[tuple[str, _Shape]]:
    """Shapes an ORM generates for a table: get, list by parent, insert, update, delete.

    ``ops`` holds the letters of the operations the application uses (g, l, i, u, d).
    """
    db, columns = _TABLES[table]
    listed = ", ".join(("id", *columns))
    shapes: list[tuple[str, _Shape]] = []
    if "g" in ops:
        sql = f"SELECT {listed} FROM {table} WHERE id = {{id}}"
        shapes.append(("g", _s(db, "point", styles, sql)))
    parent = next((c for c in columns if c.endswith("_id")), None)
    if "l" in ops and parent:
        order = next((c for c in columns if c.endswith("_at")), "id")
        sql = (
            f"SELECT {listed} FROM {table} WHERE {parent} = {{id}} "
            f"ORDER BY {order} DESC LIMIT {{limit}}"
        )
        shapes.append(("l", _s(db, "small", styles, sql)))
    if "i" in ops:
        values = ", ".join(
            "NOW()" if c.endswith("_at") and i % 2 else _column_slot(c)
            for i, c in enumerate(columns)
        )
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values})"
        shapes.append(("i", _s(db, "write", styles, sql)))
    if "u" in ops:
        changed = [c for c in columns if not c.endswith("_id")][:2]
        sets = ", ".join(f"{c} = {_column_slot(c)}" for c in changed)
        sql = f"UPDATE {table} SET {sets} WHERE id = {{id}}"
        shapes.append(("u", _s(db, "write", styles, sql)))
    if "d" in ops:
        shapes.append(("d", _s(db, "write", styles, f"DELETE FROM {table} WHERE id = {{id}}")))
    return shapes


# (table, operations, client styles) of the statements the ORM generates.
# fmt: off
_CRUD_TABLES = (
    ("customers", "glud", "orm lower"), ("addresses", "gliud", "orm"),
    ("products", "gliu", "orm plain"), ("categories", "giu", "orm"),
    ("product_categories", "gld", "orm"), ("warehouses", "gi", "plain"),
    ("inventory", "gli", "orm"), ("carts", "gliud", "orm"),
    ("cart_items", "glidu", "orm lower"), ("orders", "glu", "orm pretty"),
    ("order_items", "gl", "orm"), ("payments", "gliu", "orm"),
    ("shipments", "gliu", "orm"), ("reviews", "glid", "orm"),
    ("coupons", "giu", "plain"), ("wishlists", "gl", "orm"),
    ("accounts", "giu", "lower"), ("sessions", "gli", "lower"),
    ("api_keys", "glid", "lower"), ("login_attempts", "gl", "lower"),
    ("roles", "gi", "lower"), ("account_roles", "lid", "lower"),
    ("password_resets", "gid", "lower"), ("plans", "gu", "plain"),
    ("subscriptions", "gliu", "plain pretty"), ("invoices", "glu", "plain"),
    ("invoice_lines", "gli", "plain"), ("charges", "gliu", "plain"),
    ("refunds", "gli", "plain"), ("usage_records", "gl", "plain"),
    ("page_views", "g", "plain"), ("events", "gl", "plain"),
    ("daily_sales", "gi", "pretty"), ("product_stats", "gu", "plain"),
    ("ab_assignments", "gl", "plain"), ("search_queries", "gi", "plain"),
)
# fmt: on

# How hot each kind of CRUD statement is: 0 hottest, 3 coldest.
_CRUD_TIER = {"g": 1, "l": 1, "i": 2, "u": 2, "d": 3}


@dataclass(frozen=True, slots=True)
class _Unit:
    """What a client does in one go: one statement, or a transaction of several."""

    role: str
    tier: int  # popularity tier, 0 hottest
    steps: tuple[tuple[_Shape, int, int], ...]  # (shape, min repeats, max repeats)


def _one(role: str, tier: int, shape: _Shape) -> _Unit:
    return _Unit(role, tier, ((shape, 1, 1),))


def _tx(role: str, tier: int, *steps: tuple[_Shape, int, int], start: _Shape = BEGIN) -> _Unit:
    return _Unit(role, tier, ((start, 1, 1), *steps, (COMMIT, 1, 1)))


# The hand-written statements. A header line gives: role, popularity tier (0 hottest, "-" for a
# statement only used inside the transactions below), database ("-" for none), cost, client
# styles, then optionally @name (to refer to it below) and rows=lo-hi (row count of a
# multi-row VALUES). Indented lines are the statement; a line starting with "|" is the row
# template of its {rows}.
_STATEMENTS = """
app 0 shop point orm,lower
    SELECT * FROM products WHERE id = {id}
app 0 shop small orm,plain
    SELECT * FROM products WHERE id IN ({ids})
app 1 shop point plain
    SELECT id, name, price, stock FROM products WHERE sku = {sku}
app 1 shop join orm,pretty
    SELECT p.id, p.name, p.price FROM products p
    JOIN product_categories pc ON pc.product_id = p.id
    WHERE pc.category_id = {small} AND p.is_active = 1
    ORDER BY p.price LIMIT {limit} OFFSET {offset}
app 1 shop join orm
    SELECT p.id, p.name, p.price FROM products p
    JOIN product_categories pc ON pc.product_id = p.id
    WHERE pc.category_id = {small} AND p.is_active = 1
    ORDER BY p.price DESC LIMIT {limit} OFFSET {offset}
app 1 shop scan plain,lower
    SELECT id, name, price FROM products WHERE name LIKE {prefix} AND is_active = 1 LIMIT 20
app 1 shop small orm
    SELECT COUNT(*) FROM orders WHERE customer_id = {id} AND status = {status}
app 1 shop join orm,pretty
    SELECT o.id, o.total, o.created_at, COUNT(oi.id) AS items
    FROM orders o JOIN order_items oi ON oi.order_id = o.id WHERE o.customer_id = {id}
    GROUP BY o.id, o.total, o.created_at ORDER BY o.created_at DESC LIMIT {limit}
app 0 shop join orm
    SELECT ci.product_id, ci.quantity, p.name, p.price
    FROM cart_items ci JOIN products p ON p.id = ci.product_id WHERE ci.cart_id = {id}
app 0 shop point orm,lower
    SELECT * FROM carts WHERE customer_id = {id} AND status = 'open'
    ORDER BY updated_at DESC LIMIT 1
app 1 shop point orm,lower
    SELECT * FROM customers WHERE email = {email} LIMIT 1
app 2 shop small plain
    SELECT id, email, first_name FROM customers WHERE last_name = {name}
    ORDER BY first_name LIMIT 50
app 1 shop write orm
    UPDATE customers SET last_login_at = NOW() WHERE id = {id}
app 1 shop join orm
    SELECT r.rating, r.body, r.created_at, c.first_name
    FROM reviews r JOIN customers c ON c.id = r.customer_id WHERE r.product_id = {id}
    ORDER BY r.created_at DESC LIMIT {limit}
app 1 shop small plain
    SELECT AVG(rating), COUNT(*) FROM reviews WHERE product_id = {id}
app 2 shop point plain
    SELECT * FROM coupons WHERE code = {code} AND expires_at > NOW()
app 2 shop small orm
    SELECT s.* FROM shipments s WHERE s.order_id IN ({ids})
app 2 shop point orm
    SELECT * FROM categories WHERE slug = {slug}
app 1 shop small orm
    SELECT * FROM categories WHERE parent_id IS NULL ORDER BY name
app 2 shop small orm
    SELECT id, name, slug FROM categories WHERE parent_id = {small} ORDER BY name ASC
app 2 shop small plain
    SELECT DISTINCT category_id FROM product_categories WHERE product_id IN ({ids})
app 2 shop join orm
    SELECT w.product_id, p.name, p.price FROM wishlists w
    JOIN products p ON p.id = w.product_id WHERE w.customer_id = {id}
app 2 shop write orm
    INSERT INTO wishlists (customer_id, product_id, created_at) VALUES ({id}, {id_b}, NOW())
app 3 shop write orm
    DELETE FROM wishlists WHERE customer_id = {id} AND product_id = {id_b}
app 2 shop small orm
    SELECT * FROM payments WHERE order_id = {id} ORDER BY created_at DESC
app 2 shop join plain
    SELECT o.id FROM orders o WHERE o.customer_id = {id}
    AND o.id IN (SELECT oi.order_id FROM order_items oi WHERE oi.product_id = {id_b}) LIMIT 1
app 2 shop write plain
    INSERT IGNORE INTO product_categories (product_id, category_id) VALUES ({id}, {small})
app 1 shop write orm
    INSERT INTO cart_items (cart_id, product_id, quantity, price)
    VALUES ({id}, {id_b}, {qty}, {money})
    ON DUPLICATE KEY UPDATE quantity = quantity + VALUES(quantity)
app 2 shop point orm
    SELECT quantity FROM inventory WHERE product_id = {id} AND warehouse_id = {small}
app 3 shop scan pretty
    SELECT c.id, c.email, SUM(o.total) AS spent FROM customers c
    JOIN orders o ON o.customer_id = c.id WHERE o.created_at >= {date}
    GROUP BY c.id, c.email HAVING SUM(o.total) > {money} ORDER BY spent DESC LIMIT 100
app 1 shop point raw
    /* ping */ SELECT 1
app 2 shop small plain
    SELECT p.id, p.name FROM products p WHERE EXISTS
    (SELECT 1 FROM inventory i WHERE i.product_id = p.id AND i.quantity > 0)
    AND p.category_id = {small} LIMIT {limit}
app 3 shop small lower
    SELECT id, name, price FROM products
    WHERE price BETWEEN {money} AND {money_b} AND is_active = 1 ORDER BY price LIMIT {limit}
app - shop point orm @lock_stock
    SELECT quantity FROM inventory WHERE product_id = {id} AND warehouse_id = {small}
    FOR UPDATE
app - shop write orm @new_order
    INSERT INTO orders (customer_id, status, total, coupon_id, created_at)
    VALUES ({id}, 'pending', {money}, NULL, NOW())
app - shop write orm,lower @new_items rows=1-12
    INSERT INTO order_items (order_id, product_id, quantity, price) VALUES {rows}
    | ({id}, {id_b}, {qty}, {money})
app - shop write orm @take_stock
    UPDATE inventory SET quantity = quantity - {qty}, updated_at = NOW()
    WHERE product_id = {id} AND warehouse_id = {small}
app - shop write orm @new_payment
    INSERT INTO payments (order_id, amount, provider, status, created_at)
    VALUES ({id}, {money}, {provider}, 'authorized', NOW())
app - shop write plain @use_coupon
    UPDATE coupons SET uses = uses + 1 WHERE id = {id}
app - shop write orm @clear_cart
    DELETE FROM cart_items WHERE cart_id = {id}
app 1 shop write orm,lower @set_status
    UPDATE orders SET status = {status}, updated_at = NOW() WHERE id = {id}
worker - shop write orm @ship
    INSERT INTO shipments (order_id, carrier, tracking_code, status, shipped_at)
    VALUES ({id}, {carrier}, {code}, 'in_transit', NOW())
worker - shop write plain @capture
    UPDATE payments SET status = 'captured', updated_at = NOW() WHERE id = {id}

worker 2 shop join plain
    SELECT o.*, c.email FROM orders o JOIN customers c ON c.id = o.customer_id
    WHERE o.status = 'pending' AND o.created_at < NOW() - INTERVAL 1 HOUR LIMIT 500
worker 2 shop scan plain
    SELECT id FROM carts WHERE status = 'open' AND updated_at < {datetime} LIMIT 1000
worker 2 shop bulk plain
    DELETE FROM cart_items WHERE cart_id IN ({ids})
worker 3 shop bulk plain
    DELETE FROM carts WHERE status = 'open' AND updated_at < {datetime} LIMIT 1000
worker 3 shop scan plain
    SELECT c.id, c.email FROM customers c WHERE NOT EXISTS
    (SELECT 1 FROM orders o WHERE o.customer_id = c.id) AND c.created_at < {date} LIMIT 1000
worker 2 shop write plain
    INSERT INTO inventory (product_id, warehouse_id, quantity, updated_at)
    VALUES ({id}, {small}, {count}, NOW())
    ON DUPLICATE KEY UPDATE quantity = VALUES(quantity), updated_at = NOW()
worker 3 shop write plain
    UPDATE products SET stock = {count} WHERE id IN ({ids})
worker 3 shop write plain
    REPLACE INTO analytics.product_stats (product_id, views, purchases, updated_at)
    VALUES ({id}, {count}, {count_b}, NOW())

app 0 auth point lower,orm
    SELECT * FROM sessions WHERE token = {token} AND expires_at > NOW()
app 0 auth write lower
    UPDATE sessions SET expires_at = {datetime} WHERE token = {token}
app 0 auth point lower
    SELECT a.id, a.email, a.status FROM accounts a WHERE a.id = {id}
app 1 auth join lower
    SELECT r.name FROM roles r JOIN account_roles ar ON ar.role_id = r.id
    WHERE ar.account_id = {id}
app 1 auth write lower
    INSERT INTO login_attempts (email, ip, success, created_at)
    VALUES ({email}, {ip}, {bool}, NOW())
app 1 auth small lower
    SELECT COUNT(*) FROM login_attempts WHERE ip = {ip} AND success = 0
    AND created_at > NOW() - INTERVAL 15 MINUTE
app 1 auth point lower
    SELECT id, account_id FROM api_keys WHERE key_hash = {token} AND revoked_at IS NULL
app 1 auth write lower
    UPDATE api_keys SET last_used_at = NOW() WHERE id = {id}
app 2 auth point lower,orm
    SELECT * FROM accounts WHERE email = {email} AND status = 'active'
app 2 auth write lower
    UPDATE accounts SET last_login_at = NOW() WHERE id = {id}
app 3 auth point lower
    SELECT * FROM password_resets WHERE token = {token} AND expires_at > NOW()
app 2 auth write lower
    DELETE FROM sessions WHERE token = {token}
worker 2 auth bulk plain
    DELETE FROM sessions WHERE expires_at < NOW() LIMIT 5000
worker 3 auth bulk plain
    DELETE FROM login_attempts WHERE created_at < {datetime} LIMIT 10000
app - auth write lower @new_account
    INSERT INTO accounts (email, password_hash, status, created_at)
    VALUES ({email}, {hash}, 'active', NOW())
app - auth write lower @grant
    INSERT INTO account_roles (account_id, role_id) VALUES ({id}, {small})

app 1 billing join plain,pretty
    SELECT s.id, s.status, p.name, p.price FROM subscriptions s
    JOIN plans p ON p.id = s.plan_id WHERE s.account_id = {id}
    AND s.status IN ('active', 'trialing')
app 2 billing small plain
    SELECT SUM(amount) FROM invoice_lines WHERE invoice_id = {id}
app 2 billing small plain
    SELECT metric, SUM(quantity) FROM usage_records WHERE subscription_id = {id}
    AND recorded_at BETWEEN {date} AND {date_b} GROUP BY metric
app 2 billing point plain
    SELECT * FROM plans WHERE is_active = 1 ORDER BY price
worker 2 billing small plain
    SELECT id FROM subscriptions WHERE status = 'active' AND current_period_end < NOW()
    ORDER BY current_period_end LIMIT 100
worker 1 billing write plain rows=2-30
    INSERT INTO usage_records (subscription_id, metric, quantity, recorded_at) VALUES {rows}
    | ({id}, {metric}, {count}, {datetime})
worker 2 billing write plain
    UPDATE invoices SET status = 'paid', paid_at = NOW() WHERE id = {id}
worker - billing write plain @renew
    UPDATE subscriptions SET current_period_end = {datetime} WHERE id = {id}
worker - billing write plain @invoice
    INSERT INTO invoices (account_id, subscription_id, amount, status, due_at, created_at)
    VALUES ({id}, {id_b}, {money}, 'open', {datetime}, NOW())
worker - billing write plain @invoice_lines rows=1-6
    INSERT INTO invoice_lines (invoice_id, description, amount, quantity) VALUES {rows}
    | ({id}, {text}, {money}, {qty})
worker - billing write plain @charge
    INSERT INTO charges (invoice_id, amount, status, provider_ref, created_at)
    VALUES ({id}, {money}, 'succeeded', {uuid}, NOW())
report 3 billing report pretty
    SELECT i.id, i.amount, a.email FROM invoices i JOIN auth.accounts a ON a.id = i.account_id
    WHERE i.status = 'overdue' AND i.due_at < {date}
report 3 billing report pretty
    SELECT DATE(created_at) AS day, SUM(amount) AS revenue FROM charges
    WHERE status = 'succeeded' AND created_at >= {date}
    GROUP BY DATE(created_at) ORDER BY day
report 3 billing report pretty
    SELECT p.name, COUNT(*) AS subscribers, SUM(p.price) AS mrr
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.status = 'active'
    GROUP BY p.name ORDER BY mrr DESC
worker 3 billing write plain
    INSERT INTO refunds (charge_id, amount, reason, created_at)
    SELECT id, amount, 'duplicate', NOW() FROM charges WHERE id = {id}

etl 0 analytics bulk plain rows=5-60
    INSERT INTO page_views (session_key, path, referrer, customer_id, viewed_at) VALUES {rows}
    | ({uuid}, {path}, {path}, {id}, {datetime})
app 0 analytics write plain,lower
    INSERT INTO events (name, customer_id, properties, created_at)
    VALUES ({event}, {id}, {json}, NOW())
app 1 analytics point lower
    SELECT variant FROM ab_assignments WHERE experiment = {experiment} AND customer_id = {id}
app 2 analytics write lower
    INSERT IGNORE INTO ab_assignments (experiment, customer_id, variant, assigned_at)
    VALUES ({experiment}, {id}, {variant}, NOW())
app 1 analytics write plain
    INSERT INTO search_queries (term, results, customer_id, searched_at)
    VALUES ({word}, {count}, {id}, NOW())
report 2 analytics report pretty,plain
    SELECT path, COUNT(*) AS views FROM page_views WHERE viewed_at >= {datetime}
    GROUP BY path ORDER BY views DESC LIMIT 20
report 2 analytics scan pretty
    SELECT day, SUM(revenue) FROM daily_sales WHERE day BETWEEN {date} AND {date_b}
    GROUP BY day
report 3 analytics report pretty
    SELECT term, COUNT(*) FROM search_queries
    WHERE searched_at > NOW() - INTERVAL 1 DAY AND results = 0
    GROUP BY term ORDER BY COUNT(*) DESC LIMIT 50
report 3 analytics report plain
    SELECT COUNT(DISTINCT customer_id) FROM events
    WHERE name = {event} AND created_at BETWEEN {datetime} AND {datetime_b}
report 3 analytics report pretty
    SELECT e.name, COUNT(*) FROM events e WHERE e.customer_id IN
    (SELECT customer_id FROM ab_assignments
    WHERE experiment = {experiment} AND variant = {variant}) GROUP BY e.name
report 3 analytics scan plain
    SELECT 'page' AS kind, COUNT(*) FROM page_views WHERE viewed_at > {datetime}
    UNION ALL SELECT 'event', COUNT(*) FROM events WHERE created_at > {datetime_b}
report 3 analytics report pretty
    SELECT /*+ MAX_EXECUTION_TIME(30000) */ p.id, p.name, SUM(oi.quantity) AS sold
    FROM shop.order_items oi JOIN shop.products p ON p.id = oi.product_id
    JOIN shop.orders o ON o.id = oi.order_id WHERE o.created_at >= {date}
    AND o.status IN ('paid', 'shipped', 'delivered') GROUP BY p.id, p.name
    ORDER BY sold DESC LIMIT 10
etl 2 analytics report pretty
    INSERT INTO daily_sales (day, product_id, units, revenue)
    SELECT DATE(o.created_at), oi.product_id, SUM(oi.quantity), SUM(oi.quantity * oi.price)
    FROM shop.orders o JOIN shop.order_items oi ON oi.order_id = o.id
    WHERE o.created_at >= {date} AND o.created_at < {date_b}
    GROUP BY DATE(o.created_at), oi.product_id
etl 2 analytics bulk plain
    DELETE FROM page_views WHERE viewed_at < {date} LIMIT 10000
etl 2 analytics bulk plain
    UPDATE product_stats ps JOIN daily_sales ds ON ds.product_id = ps.product_id
    SET ps.purchases = ds.units, ps.updated_at = NOW() WHERE ds.day = {date}
etl 3 analytics report raw
    CALL refresh_funnels({small})
etl 3 analytics bulk raw
    ANALYZE TABLE page_views

app 1 - trivial raw
    SELECT 1
app 2 - trivial raw
    SET autocommit=0
app 2 - trivial raw
    SET autocommit=1
monitor 2 - show raw
    SHOW GLOBAL STATUS
monitor 2 - show raw
    SHOW GLOBAL VARIABLES
monitor 2 - show raw
    SHOW ENGINE INNODB STATUS
monitor 2 - show raw
    SHOW FULL PROCESSLIST
monitor 2 - show raw
    SHOW REPLICA STATUS
monitor 2 - show raw
    SHOW BINARY LOGS
monitor 2 - show raw
    SHOW VARIABLES LIKE 'max_connections'
monitor 2 - show raw
    SELECT @@global.read_only
monitor 2 - show raw
    SELECT COUNT(*) FROM information_schema.processlist WHERE command <> 'Sleep'
monitor 2 - show raw
    SELECT schema_name, digest, digest_text, count_star, sum_timer_wait
    FROM performance_schema.events_statements_summary_by_digest
    ORDER BY sum_timer_wait DESC LIMIT 200
monitor 2 - show raw
    SELECT table_schema, table_name, data_length, index_length FROM information_schema.tables
    WHERE table_schema NOT IN ('mysql', 'sys')
dba 3 shop show raw,lower
    SHOW CREATE TABLE orders
dba 3 shop show raw,lower
    SHOW INDEX FROM orders
dba 3 shop show raw,lower
    SHOW TABLE STATUS LIKE 'order_items'
dba 3 shop show raw,lower
    SHOW TABLES
dba 3 shop show raw,lower
    SHOW WARNINGS
dba 3 shop show raw,lower
    SELECT * FROM sys.schema_unused_indexes
dba 3 shop show raw,lower
    EXPLAIN SELECT * FROM orders WHERE customer_id = 42
"""

# Transactions: role, tier, the statement that starts it, then the steps as "name lo-hi".
_TRANSACTIONS = (
    ("app", 1, BEGIN, "lock_stock 1-4, new_order, new_items, take_stock 1-4, use_coupon 0-1, "
     "new_payment, clear_cart"),
    ("worker", 1, START, "set_status, ship"),
    ("worker", 2, BEGIN, "capture, set_status"),
    ("worker", 2, START, "renew, invoice, invoice_lines, charge 0-1"),
    ("app", 3, BEGIN, "new_account, grant 1-2"),
)  # fmt: skip


def _parse_statements(text: str) -> tuple[list[tuple[str, int, _Shape]], dict[str, _Shape]]:
    """Read :data:`_STATEMENTS`: the (role, tier, shape) units, and the shapes by name."""
    units: list[tuple[str, int, _Shape]] = []
    named: dict[str, _Shape] = {}
    for block in re.split(r"\n(?=\S)", text.strip()):
        header, *body = block.splitlines()
        role, tier, db, cost, styles, *options = header.split()
        sql = [line.strip() for line in body if line.strip() and not line.strip().startswith("|")]
        row = "".join(line.strip()[1:].strip() for line in body if line.strip().startswith("|"))
        rows = (1, 1)
        name = ""
        for option in options:
            if option.startswith("@"):
                name = option[1:]
            elif option.startswith("rows="):
                lo, hi = option[5:].split("-")
                rows = (int(lo), int(hi))
        shape = _s("" if db == "-" else db, cost, styles.replace(",", " "), " ".join(sql),
                   row=row, rows=rows)  # fmt: skip
        if name:
            named[name] = shape
        if tier != "-":
            units.append((role, int(tier), shape))
    return units, named


def _catalog() -> list[_Unit]:
    """Every unit of work the simulated application performs."""
    statements, named = _parse_statements(_STATEMENTS)
    units = [_one(role, tier, shape) for role, tier, shape in statements]
    for role, tier, start, steps in _TRANSACTIONS:
        parsed: list[tuple[_Shape, int, int]] = []
        for step in steps.split(","):
            name, _, repeats = step.strip().partition(" ")
            lo, _, hi = (repeats or "1-1").partition("-")
            parsed.append((named[name], int(lo), int(hi)))
        units.append(_tx(role, tier, *parsed, start=start))
    # A transaction that changes its mind.
    units.append(_Unit("app", 3, ((BEGIN, 1, 1), (named["lock_stock"], 1, 2), (ROLLBACK, 1, 1))))
    for table, ops, styles in _CRUD_TABLES:
        role = "app" if _TABLES[table][0] in ("shop", "auth") else "worker"
        for op, shape in _crud(table, ops, styles):
            units.append(_one(role, _CRUD_TIER[op], shape))
    units.append(_one("app", 2, _admin("Ping")))
    units.append(_one("app", 3, _admin("Reset stmt")))
    units.append(_one("monitor", 1, _admin("Ping")))
    return units


# Session preamble of a new connection, per role.
_PREAMBLES: dict[str, tuple[_Shape, ...]] = {
    "app": (
        _s("", "trivial", "raw", "SET NAMES utf8mb4"),
        _s("", "trivial", "raw", "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
        _s("", "trivial", "raw", "SET time_zone = '+00:00'"),
    ),
    "worker": (
        _s("", "trivial", "raw", "SET NAMES utf8mb4"),
        _s(
            "",
            "trivial",
            "raw",
            """
            SET @@session.sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'""",
        ),
    ),
    "report": (_s("", "trivial", "raw", "SELECT @@version_comment LIMIT 1"),),
    "etl": (
        _s("", "trivial", "raw", "SET NAMES utf8mb4"),
        _s("", "trivial", "raw", "SET unique_checks = 0"),
    ),
    "monitor": (),
    "dba": (
        _s("", "trivial", "raw", "SELECT @@version_comment LIMIT 1"),
        _s("", "trivial", "raw", "SELECT DATABASE()"),
    ),
}
# user, (host, IP) of its machines, connections in its pool, chance of quitting after a unit
_ROLES: dict[str, tuple[str, tuple[tuple[str, str], ...], int, float]] = {
    "app": ("app", tuple((f"web{i}", f"10.0.1.{10 + i}") for i in range(1, 7)), 48, 0.004),
    "worker": ("worker", tuple((f"worker{i}", f"10.0.2.{20 + i}") for i in range(1, 4)), 12, 0.002),
    "report": ("reporting", (("bi", "10.0.3.5"),), 3, 0.05),
    "etl": ("etl", (("etl", "10.0.3.9"),), 2, 0.01),
    "monitor": ("pmm", (("localhost", ""),), 1, 0.0),
    "dba": ("dba", (("bastion", "10.0.0.2"),), 1, 0.2),
}
# The database a role's statements without one of their own run in.
_ROLE_DB = {
    "app": "shop",
    "worker": "shop",
    "report": "analytics",
    "etl": "analytics",
    "monitor": "",
    "dba": "shop",
}


# ---------------------------------------------------------------------------------------
# Client styles: how a client library spells a template.

_NAME_RE = re.compile(r"(?<![\w{`'@.])([a-z_]+)(?![\w}`'(])|(?<=\.)([a-z_]+|\*)(?![\w}`'(])")
_OPERATOR_RE = re.compile(r"\s*(<=|>=|<>|=|<|>)\s*")
_CLAUSE_RE = re.compile(
    r"\s+(FROM|WHERE|AND|JOIN|LEFT JOIN|GROUP BY|HAVING|ORDER BY|LIMIT|VALUES|SET|UNION ALL"
    r"|ON DUPLICATE)\b"
)
_CONTROLLERS = ("orders", "products", "cart", "checkout", "account", "search", "admin/orders")
_ACTIONS = ("index", "show", "create", "update", "destroy")


def _backtick(match: re.Match[str]) -> str:
    name = match.group(1) or match.group(2)
    return name if name == "*" else f"`{name}`"


def _style_template(sql: str, style: str) -> str:
    """Spell a template as a client library of that style does."""
    if style == "orm":  # backticked names, trailing marginalia comment (added per event)
        return _NAME_RE.sub(_backtick, sql)
    if style == "lower":  # hand-written, lower case, compact operators and lists
        return _OPERATOR_RE.sub(r"\1", sql.lower()).replace(", ", ",")
    if style == "pretty":  # several lines, a named-query comment line first
        return _CLAUSE_RE.sub(lambda m: "\n  " + m.group(1), sql)
    return sql  # plain, raw


@dataclass(frozen=True, slots=True)
class _Spelling:
    """A shape compiled for one client style: a format string and its slot functions."""

    fmt: str
    slots: tuple[tuple[str, Slot], ...]


def _compile(shape: _Shape, style: str) -> _Spelling:
    fmt = _style_template(shape.sql, style)
    names = {name for _, name, _, _ in string.Formatter().parse(fmt) if name}
    slots: list[tuple[str, Slot]] = [(n, _SLOTS[n]) for n in sorted(names) if n != "rows"]
    if "rows" in names:
        row = _compile(_Shape(shape.db, shape.cost, shape.row), style)
        lo, hi = shape.rows
        sep = "," if style == "lower" else ", "

        def rows(rng: random.Random) -> str:
            return sep.join(
                row.fmt.format_map({n: f(rng) for n, f in row.slots})
                for _ in range(rng.randint(lo, hi))
            )

        slots.append(("rows", rows))
    return _Spelling(fmt, tuple(slots))


def _call_sites(rng: random.Random) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The controller/action pairs a shape is sent from, and their cumulative weights.

    A statement is written once in the code and called from one to three places (a
    repository method shared by a few endpoints), the first of them the busiest: drawing
    the pair per statement instead would make every shape reach all 35 pairs.
    """
    count = 1 if rng.random() < 0.6 else (2 if rng.random() < 0.75 else 3)
    pairs = rng.sample([(c, a) for c in _CONTROLLERS for a in _ACTIONS], count)
    comments = tuple(f"application:Shop,controller:{c},action:{a}" for c, a in pairs)
    return comments, tuple(accumulate(0.3**rank for rank in range(count)))


def _decorate(text: str, style: str, rng: random.Random, prepared: _Prepared) -> str:
    """Add what a client adds around the statement: its call site, or a per-request trace."""
    if style == "orm" and rng.random() < 0.7:
        weights = prepared.call_site_weights
        site = prepared.call_sites[bisect(weights, rng.random() * weights[-1])]
        return f"{text} /*{site}*/"
    if style == "pretty":
        return f"-- name: {prepared.name}\n{text}"
    if style == "plain" and rng.random() < 0.1:
        trace = _hex(rng, 16)
        return f"{text} /*traceparent='00-{trace}{trace}-{trace}-01',framework='django'*/"
    return text


# ---------------------------------------------------------------------------------------
# The log itself.


@dataclass(slots=True)
class _Connection:
    role: str
    user: str
    host: str
    ip: str
    thread_id: int
    fresh: bool = True  # its session preamble is still to be sent


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A shape ready to emit: spellings by weight, latency and row model."""

    shape: _Shape
    spellings: tuple[tuple[str, _Spelling], ...]
    cum_weights: tuple[float, ...]
    mu: float
    sigma: float
    cost: _Cost
    name: str
    call_sites: tuple[str, ...]
    call_site_weights: tuple[float, ...]


class _Generator:
    """The state of one log being written: clock, connections, last database."""

    def __init__(self, seed: int, flavor: Flavor) -> None:
        if flavor not in FLAVORS:
            raise ValueError(f"unknown flavor {flavor!r}, expected one of {FLAVORS}")
        self.rng = random.Random(seed)
        self.flavor = flavor
        self.clock = _START_EPOCH
        self.last_db = ""
        self.last_time_line = ""
        self.next_thread_id = 10
        self.prepared: dict[int, _Prepared] = {}
        units = _catalog()
        # Popularity: a seeded order within each tier, then Zipf over the whole order.
        keyed = sorted(((u.tier, self.rng.random(), i) for i, u in enumerate(units)))
        self.units = [units[i] for _, _, i in keyed]
        weights = [1.0 / (rank + 1) ** _ZIPF_EXPONENT for rank in range(len(self.units))]
        self.cum_weights = list(accumulate(weights))
        self.pools: dict[str, list[_Connection]] = {}
        for role, (user, hosts, size, _) in _ROLES.items():
            self.pools[role] = [
                self._connect(role, user, *hosts[i % len(hosts)]) for i in range(size)
            ]
            for conn in self.pools[role]:  # connected before the log begins
                conn.fresh = False

    def _connect(self, role: str, user: str, host: str, ip: str) -> _Connection:
        self.next_thread_id += self.rng.randint(1, 3)
        return _Connection(role, user, host, ip, self.next_thread_id)

    def _prepare(self, shape: _Shape) -> _Prepared:
        key = id(shape)
        prepared = self.prepared.get(key)
        if prepared is None:
            rng = self.rng
            cost = _COSTS[shape.cost]
            median = math.exp(rng.uniform(math.log(cost.median_lo), math.log(cost.median_hi)))
            styles = shape.styles
            weights = [1.0] if len(styles) == 1 else [1.0, rng.uniform(0.05, 0.4)]
            weights += [0.1] * (len(styles) - len(weights))
            spellings = tuple((s, _compile(shape, s)) for s in styles)
            words = re.findall(r"[a-z_]+", shape.sql)
            name = "_".join((shape.sql.split(None, 1)[0].lower(), *words[:2])) or "query"
            prepared = _Prepared(
                shape,
                spellings,
                tuple(accumulate(weights)),
                math.log(median),
                cost.sigma * rng.uniform(0.8, 1.2),
                cost,
                name,
                *_call_sites(rng),
            )
            self.prepared[key] = prepared
        return prepared

    def events(self, count: int) -> Iterator[str]:
        """Yield ``count`` entries, each the text of one event with its header lines."""
        rng = self.rng
        emitted = 0
        while emitted < count:
            unit = self.units[bisect(self.cum_weights, rng.random() * self.cum_weights[-1])]
            pool = self.pools[unit.role]
            slot = rng.randrange(len(pool))
            conn = pool[slot]
            steps: list[_Shape] = []
            if conn.fresh:
                conn.fresh = False
                steps.extend(_PREAMBLES[conn.role])
            for shape, lo, hi in unit.steps:
                steps.extend([shape] * (lo if lo == hi else rng.randint(lo, hi)))
            if rng.random() < _ROLES[conn.role][3]:
                steps.append(QUIT)
                pool[slot] = self._connect(conn.role, conn.user, conn.host, conn.ip)
            for shape in steps:
                if emitted == count:
                    return
                yield self._entry(conn, self._prepare(shape))
                emitted += 1

    def _entry(self, conn: _Connection, prepared: _Prepared) -> str:
        rng = self.rng
        shape = prepared.shape
        self.clock += rng.expovariate(_EVENTS_PER_SECOND)
        query_time = rng.lognormvariate(prepared.mu, prepared.sigma)
        lock_time = (
            rng.lognormvariate(-11.0, 0.6) if shape.writes else rng.lognormvariate(-12.5, 0.5)
        )
        if rng.random() < _OUTLIER_RATE:  # a lock wait, a cold buffer pool, a stalled disk
            query_time *= rng.uniform(30.0, 600.0)
            if shape.writes:
                lock_time = query_time * rng.uniform(0.5, 0.95)
        query_time = min(max(query_time, 0.000001), 120.0)
        lock_time = min(lock_time, query_time)
        cost = prepared.cost
        sent = 0
        if cost.sent_hi == 1:
            sent = 1 if rng.random() < 0.93 else 0
        elif cost.sent_hi:
            sent = int(cost.sent_hi * rng.random() ** 2)
        examined = sent + int(query_time * cost.scan_rate * rng.uniform(0.5, 1.5))
        affected = 0
        if shape.writes:
            affected = max(1, examined) if cost.scan_rate else 1
            examined = max(examined, affected if shape.sql.startswith(("UPDATE", "DELETE")) else 0)
        # The statement.
        if shape.admin:
            statement = f"# {shape.sql};\n"
        else:
            style, spelling = prepared.spellings[
                bisect(prepared.cum_weights, rng.random() * prepared.cum_weights[-1])
            ]
            text = spelling.fmt.format_map({n: f(rng) for n, f in spelling.slots})
            statement = _decorate(text, style, rng, prepared) + ";\n"
        db = shape.db or _ROLE_DB[conn.role]
        use = ""
        if db and db != self.last_db:
            use = f"use {db};\n"
            self.last_db = db
        start = int(self.clock - query_time)
        if self.flavor == "mysql80":
            seconds = int(self.clock)
            micros = int((self.clock - seconds) * 1_000_000)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
            return (
                f"# Time: {stamp}.{micros:06d}Z\n"
                f"# User@Host: {conn.user}[{conn.user}] @ {conn.host} [{conn.ip}]"
                f"  Id: {conn.thread_id:5d}\n"
                f"# Query_time: {query_time:.6f}  Lock_time: {lock_time:.6f}"
                f" Rows_sent: {sent}  Rows_examined: {examined}\n"
                f"{use}SET timestamp={start};\n{statement}"
            )
        if self.flavor == "percona":
            return self._percona_entry(
                conn,
                query_time,
                lock_time,
                sent,
                examined,
                affected,
                db,
                use,
                start,
                statement,
                shape,
            )
        # MariaDB: the time line only when the second changes.
        moment = time.gmtime(int(self.clock))
        time_line = (
            f"# Time: {moment.tm_year % 100:02d}{moment.tm_mon:02d}{moment.tm_mday:02d}"
            f" {moment.tm_hour:2d}:{moment.tm_min:02d}:{moment.tm_sec:02d}\n"
        )
        if time_line == self.last_time_line:
            time_line = ""
        else:
            self.last_time_line = time_line
        plan = ""
        full_scan = examined > 1000 and cost.scan_rate >= 300_000
        tmp_table = "GROUP BY" in shape.sql and examined > 100
        filesort = "ORDER BY" in shape.sql and sent > 1 and not shape.writes
        if full_scan or tmp_table or filesort:
            yes = {True: "Yes", False: "No"}
            plan = (
                f"# Full_scan: {yes[full_scan]}  Full_join: No  Tmp_table: {yes[tmp_table]}"
                f"  Tmp_table_on_disk: {yes[tmp_table and examined > 500_000]}\n"
                f"# Filesort: {yes[filesort]}  Filesort_on_disk: No  Merge_passes: 0"
                f"  Priority_queue: {yes[filesort and 'LIMIT' in shape.sql]}\n"
            )
        innodb = explain = ""
        if not shape.admin and " " in shape.sql and not shape.sql.startswith(("SET", "BEGIN")):
            pages = 1 + examined // 50
            innodb = (
                f"# Pages_accessed: {pages}  Pages_read: {pages // 40}  Pages_prefetched: 0"
                f"  Pages_updated: {affected}  Old_rows_read: 0\n"
                f"# Pages_read_time: {query_time * 100:.4f}  Engine_time: {query_time * 900:.4f}\n"
            )
        if shape.sql.startswith("SELECT"):
            kind = "ALL" if full_scan else "ref"
            explain = (
                "#\n# explain: id\tselect_type\ttable\ttype\tpossible_keys\tkey\tkey_len"
                "\tref\trows\tr_rows\tfiltered\tr_filtered\tExtra\n"
                f"# explain: 1\tSIMPLE\tt\t{kind}\tPRIMARY\tPRIMARY\t4\tconst\t{examined}"
                f"\t{examined}.00\t100.00\t100.00\tUsing where\n#\n"
            )
        return (
            f"{time_line}"
            f"# User@Host: {conn.user}[{conn.user}] @ {conn.host} [{conn.ip}]\n"
            f"# Thread_id: {conn.thread_id}  Schema: {db}  QC_hit: No\n"
            f"# Query_time: {query_time:.6f}  Lock_time: {lock_time:.6f}"
            f"  Rows_sent: {sent}  Rows_examined: {examined}\n"
            f"# Rows_affected: {affected}  Bytes_sent: {60 + sent * 120}\n"
            f"{innodb}{plan}{explain}{use}SET timestamp={start};\n{statement}"
        )

    def _percona_entry(
        self,
        conn: _Connection,
        query_time: float,
        lock_time: float,
        sent: int,
        examined: int,
        affected: int,
        db: str,
        use: str,
        start: int,
        statement: str,
        shape: _Shape,
    ) -> str:
        """Percona Server 8.0, log_slow_verbosity=full, log_slow_rate_limit=10."""
        seconds = int(self.clock)
        micros = int((self.clock - seconds) * 1_000_000)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        yes = {True: "Yes", False: "No"}
        full_scan = examined > 1000
        filesort = "ORDER BY" in shape.sql and sent > 1 and not shape.writes
        tmp = int("GROUP BY" in shape.sql and examined > 100)
        trx = f"{self.rng.getrandbits(28):X}" if shape.writes else "0"
        pages = 1 + examined // 50
        reads = pages // 40
        return (
            f"# Time: {stamp}.{micros:06d}Z\n"
            f"# User@Host: {conn.user}[{conn.user}] @ {conn.host} [{conn.ip}]"
            f"  Id: {conn.thread_id:5d}\n"
            f"# Schema: {db}  Last_errno: 0  Killed: 0\n"
            f"# Query_time: {query_time:.6f}  Lock_time: {lock_time:.6f}  Rows_sent: {sent}"
            f"  Rows_examined: {examined}  Rows_affected: {affected}"
            f"  Bytes_sent: {60 + sent * 120}\n"
            f"# Tmp_tables: {tmp}  Tmp_disk_tables: 0  Tmp_table_sizes: {tmp * 16384}\n"
            f"# InnoDB_trx_id: {trx}\n"
            f"# QC_Hit: No  Full_scan: {yes[full_scan]}  Full_join: No"
            f"  Tmp_table: {yes[bool(tmp)]}  Tmp_table_on_disk: No\n"
            f"# Filesort: {yes[filesort]}  Filesort_on_disk: No  Merge_passes: 0\n"
            f"#   InnoDB_IO_r_ops: {reads}  InnoDB_IO_r_bytes: {reads * 16384}"
            f"  InnoDB_IO_r_wait: {query_time * 0.1 if reads else 0:.6f}\n"
            f"#   InnoDB_rec_lock_wait: {lock_time * 0.5 if shape.writes else 0:.6f}"
            f"  InnoDB_queue_wait: 0.000000\n"
            f"#   InnoDB_pages_distinct: {pages}\n"
            "# Log_slow_rate_type: query  Log_slow_rate_limit: 10\n"
            f"{use}SET timestamp={start};\n{statement}"
        )


_BANNERS: dict[Flavor, str] = {
    "mysql80": (
        "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n"
        "Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n"
        "Time                 Id Command    Argument\n"
    ),
    "percona": (
        "/usr/sbin/mysqld, Version: 8.0.36-28 (Percona Server (GPL), Release 28). started with:\n"
        "Tcp port: 3306  Unix socket: /var/lib/mysql/mysql.sock\n"
        "Time                 Id Command    Argument\n"
    ),
    "mariadb": (
        "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (MariaDB Server). started with:\n"
        "Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n"
        "Time\t\t    Id Command\tArgument\n"
    ),
}


def iter_slow_log(events: int, seed: int, *, flavor: Flavor = "mysql80") -> Iterator[str]:
    """Yield the log as text: the server banner, then one string per event.

    Args:
        events: Number of events (entries with a ``# Query_time`` line).
        seed: Seed of the generator; the same arguments always give the same text.
        flavor: ``"mysql80"``, ``"percona"`` or ``"mariadb"``.

    Example:
        >>> text = "".join(iter_slow_log(3, seed=1))
        >>> text.count("# Query_time:")
        3
    """
    generator = _Generator(seed, flavor)
    yield _BANNERS[flavor]
    yield from generator.events(events)


def write_slow_log(
    path: str | os.PathLike[str],
    events: int,
    seed: int,
    *,
    flavor: Flavor = "mysql80",
    progress: Progress | None = None,
) -> None:
    """Write a slow log of ``events`` events to ``path``, streaming, in bounded memory.

    Args:
        path: File to create or overwrite.
        events: Number of events.
        seed: Seed of the generator; the same arguments always give the same bytes.
        flavor: ``"mysql80"`` (the default), ``"percona"`` or ``"mariadb"``.
        progress: Called now and then with the number of events written so far.

    Example:
        >>> write_slow_log("/tmp/slow.log", events=10, seed=42)
    """
    parts = iter_slow_log(events, seed, flavor=flavor)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(next(parts))
        chunk: list[str] = []
        written = 0
        for entry in parts:
            chunk.append(entry)
            if len(chunk) == _CHUNK_EVENTS:
                out.write("".join(chunk))
                written += len(chunk)
                chunk.clear()
                if progress is not None:
                    progress(written)
        out.write("".join(chunk))
        if progress is not None:
            progress(written + len(chunk))


def cached_slow_log(
    events: int,
    seed: int,
    *,
    flavor: Flavor = "mysql80",
    cache_dir: str | os.PathLike[str] = DEFAULT_CACHE_DIR,
    progress: Progress | None = None,
) -> Path:
    """Return the path of the log for these arguments, generating it first if it is missing.

    Files are named after flavor, seed, size and :data:`GENERATOR_VERSION`, and written
    under a temporary name then renamed, so an interrupted run never leaves half a file.

    Example:
        >>> cached_slow_log(100_000, seed=42).name
        'slow-mysql80-seed42-100000-v1.log'
    """
    directory = Path(cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"slow-{flavor}-seed{seed}-{events}-v{GENERATOR_VERSION}.log"
    if not path.exists():
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            write_slow_log(partial, events, seed, flavor=flavor, progress=progress)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
    return path


def statement_templates() -> list[str]:
    """Every statement template the generator uses, as written in the catalog (for tests)."""
    seen: dict[str, None] = {}
    for unit in _catalog():
        for shape, _, _ in unit.steps:
            seen[shape.sql] = None
    for preamble in _PREAMBLES.values():
        for shape in preamble:
            seen[shape.sql] = None
    seen[QUIT.sql] = None
    return list(seen)
