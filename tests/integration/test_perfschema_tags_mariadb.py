"""Query tags from performance_schema alone, end to end on a real MariaDB: the slow log off,
the statement history on; the agent's collector polls, the API stores, filters and groups.

Statements of one digest carry sqlcommenter tags, a plain ``key=value`` list or none; the
digest's rows per tag are what the history measured, its untagged row the rest, and a
statement is counted in one poll only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.queries.models import QueryBucketMinute
from quanta_agent.config import InstanceSettings
from quanta_agent.perfschema import PerfSchemaCollector, make_perfschema_collector
from tests.fixtures.servers import OwnMariaDB, started_mariadb
from tests.helpers import process_all, wait_until

services = pytest.mark.services

CART = "/*action='checkout',route='%2Fcart'*/ SELECT * FROM orders WHERE customer_id = {}"
BILLING = "SELECT * FROM orders WHERE customer_id = {} /* service=billing, team=payments */"
PLAIN = "SELECT * FROM orders WHERE customer_id = {}"
QUERY_ID = query_id(fingerprint(PLAIN.format(1)))
CART_TAGS = "action=checkout,route=/cart"
BILLING_TAGS = "service=billing,team=payments"
WINDOW = {"from": "now-1h", "search": "from orders where customer_id"}


@pytest.fixture(scope="module")
def own() -> Iterator[OwnMariaDB]:
    # performance_schema only: no slow log (the history_long consumer is on by default here).
    with started_mariadb(["--slow-query-log=OFF"]) as own:
        with contextlib.closing(own.server.connect("test")) as conn, conn.cursor() as cursor:
            cursor.execute("SELECT @@global.slow_query_log")
            assert cursor.fetchall()[0][0] == 0
            cursor.execute("CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT)")
            cursor.execute("INSERT INTO orders VALUES (1, 1), (2, 2), (3, 3)")
        yield own


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(env="test", data_dir=tmp_path / "data", database_url=None, redis_url=None)


def collector(own: OwnMariaDB, examples: str = "full") -> PerfSchemaCollector:
    server = own.server
    instance = InstanceSettings(
        name="db1",
        dsn=f"mysql://root@{server.host}:{server.port}/",
        sources=("perfschema",),
        examples=examples,
    )
    return make_perfschema_collector(instance)


def run(own: OwnMariaDB, sql: str, times: int) -> None:
    with contextlib.closing(own.server.connect("test")) as conn, conn.cursor() as cursor:
        for n in range(times):
            cursor.execute(sql.format(n))  # no args: the % of the tags stays as written
            cursor.fetchall()


def post(client: TestClient, factory: sessionmaker[Session], body: dict[str, Any], n: int) -> None:
    response = client.post(
        "/api/v1/ingest",
        json={"batch_id": f"tags-{n}", "instance": "db1", "source": "perfschema", **body},
    )
    assert response.status_code == 202, response.text
    process_all(factory)


def orders_rows(body: dict[str, Any]) -> dict[str, int]:
    """count_star per tags of the orders digest's wire rows."""
    digests = body.get("digests", [])
    rows = [d for d in digests if "`orders` WHERE `customer_id`" in d["digest_text"]]
    out: dict[str, int] = {}
    for row in rows:
        tags = row.get("tags", "")
        assert tags not in out, "one row per digest and tags"
        out[tags] = row["count_star"]
    return out


def counts(client: TestClient, **params: Any) -> dict[str, int]:
    response = client.get("/api/v1/queries", params={**WINDOW, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    if body["group_by"] != "query":
        return {row["value"]: row["count"] for row in body["groups"]}
    return {row["query_id"]: row["count"] for row in body["rows"]}


def stored(factory: sessionmaker[Session]) -> dict[str, int]:
    with session_scope(factory) as session:
        rows = session.execute(
            select(QueryBucketMinute.tags, func.sum(QueryBucketMinute.count))
            .where(QueryBucketMinute.query_id == QUERY_ID)
            .group_by(QueryBucketMinute.tags)
        ).all()
    return {tags: int(n) for tags, n in rows}


@services
def test_tags_from_sql_text_with_the_slow_log_off(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    col = collector(own)
    col.poll()  # the baseline (and the first cut)
    run(own, CART, 4)
    run(own, BILLING, 3)
    run(own, PLAIN, 5)
    body = col.poll()
    assert orders_rows(body) == {"": 5, CART_TAGS: 4, BILLING_TAGS: 3}
    (cart,) = [d for d in body["digests"] if d.get("tags") == CART_TAGS]
    assert cart["sum_rows_sent"] == 3  # customer_id 0 matches no row
    assert 0 < cart["min_timer_wait"] <= cart["max_timer_wait"] <= cart["sum_timer_wait"]
    post(client, session_factory, body, 1)

    assert counts(client, tag="route:/cart") == {QUERY_ID: 4}
    assert counts(client, tag="team:payments") == {QUERY_ID: 3}
    assert counts(client, group_by="tag:action") == {"checkout": 4, "": 8}
    assert counts(client, group_by="tag:team") == {"payments": 3, "": 9}
    assert stored(session_factory) == {"": 5, CART_TAGS: 4, BILLING_TAGS: 3}

    # Polled again with nothing run: nothing of the orders digest, nothing counted twice.
    again = col.poll()
    assert orders_rows(again) == {}
    if again:
        post(client, session_factory, again, 2)
    run(own, CART, 2)
    run(own, PLAIN, 1)
    third = col.poll()
    assert orders_rows(third) == {"": 1, CART_TAGS: 2}
    post(client, session_factory, third, 3)
    assert counts(client, group_by="tag:action") == {"checkout": 6, "": 9}
    assert stored(session_factory) == {"": 6, CART_TAGS: 6, BILLING_TAGS: 3}


@services
def test_restart_resets_the_cut_and_no_text_leaves_the_agent(own: OwnMariaDB) -> None:
    col = collector(own, examples="off")
    col.poll()
    run(own, BILLING, 2)
    run(own, PLAIN, 1)
    body = col.poll()
    assert orders_rows(body) == {"": 1, BILLING_TAGS: 2}
    # Examples off: the tags are the only trace of the comments in what is shipped.
    assert "/*" not in str(body)
    assert "billing" not in str(body).replace(f"'tags': '{BILLING_TAGS}'", "")

    # Uptime (whole seconds) tells the agent of a restart: let the server be old enough.
    wait_until(lambda: own.uptime() >= 2, 5, "the server two seconds old")
    own.restart()  # timers start over, below the previous cut
    run(own, CART, 3)
    run(own, PLAIN, 2)
    body = col.poll()
    assert orders_rows(body) == {"": 2, CART_TAGS: 3}
    assert orders_rows(col.poll()) == {}
