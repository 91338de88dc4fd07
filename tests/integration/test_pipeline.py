"""End to end through real processes: `quanta run` (API, Celery worker, beat) and
`quanta-agent import`, on the embedded defaults and on PostgreSQL + Redis."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.quanta import QuantaServer, agent_import, quanta_run, wait_until_counted
from tests.fixtures.servers import PostgresServer, RedisServer
from tests.fixtures.slowlogs import LoggedQuery, write_slow_log

pytestmark = pytest.mark.long(seconds=40)

START = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30)

# (statement template, executions, query time each)
SHAPES = [
    ("SELECT * FROM orders WHERE customer_id = {i}", 300, 0.020),
    ("SELECT name FROM products WHERE sku IN ('a{i}', 'b{i}')", 200, 0.004),
    ("UPDATE stock SET qty = qty - 1 WHERE sku = 'x{i}'", 100, 0.050),
]


def known_log(path: Path) -> Path:
    queries = [
        LoggedQuery(
            sql=template.format(i=i),
            ts=START + timedelta(seconds=i * 3),
            query_time=query_time,
            rows_examined=i,
        )
        for template, count, query_time in SHAPES
        for i in range(count)
    ]
    return write_slow_log(path, queries)


def check_totals(server: QuantaServer, log: Path) -> dict[str, Any]:
    result = agent_import(server, log, batch_size=128)
    assert "Imported 600 events in" in result.stdout
    body = wait_until_counted(server, 600)
    expected = {count: count * query_time for _t, count, query_time in SHAPES}
    rows = body["rows"]
    assert [r["count"] for r in rows] == [300, 100, 200]  # ordered by total query time
    for row in rows:
        assert row["query_time"] == pytest.approx(expected[row["count"]])
    assert body["totals"]["query_time"] == pytest.approx(sum(expected.values()))
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert "orders" in rows[0]["fingerprint"]
    return body


def test_embedded_defaults_sqlite_and_sqlite_broker(tmp_path: Path) -> None:
    log = known_log(tmp_path / "slow.log")
    with quanta_run(tmp_path / "data") as server:
        first = check_totals(server, log)
        # Re-importing the same file sends the same batch ids: nothing is counted twice.
        again = agent_import(server, log, batch_size=128)
        assert "already received" in again.stdout
        assert server.get("/api/v1/queries").json()["totals"] == first["totals"]


@pytest.mark.services
def test_postgresql_and_redis(
    tmp_path: Path, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    log = known_log(tmp_path / "slow.log")
    database_url = postgres_server.create_database("pipeline")
    with quanta_run(tmp_path / "data", database_url=database_url, redis_url=redis_server.url) as s:
        check_totals(s, log)
