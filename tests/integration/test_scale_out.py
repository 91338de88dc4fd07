"""Scale-out: two API processes (`quanta serve` on two ports) and two worker processes
(`quanta worker`, two pool processes each) against one PostgreSQL and one Redis store
exactly what one API and one worker store from the same slow log, even when every batch
reaches both APIs at the same moment (one of them gets a duplicate)."""

from __future__ import annotations

import random
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.cluster import ADMIN_TOKEN, VENV_BIN, Api, cluster
from tests.fixtures.servers import PostgresServer, RedisServer
from tests.fixtures.slowlogs import LoggedQuery, write_slow_log

pytestmark = [pytest.mark.services, pytest.mark.long(seconds=55)]

EVENTS = 4000
INSTANCE = "scaled"
TEMPLATES = (
    "SELECT * FROM orders WHERE customer_id = {i}",
    "UPDATE stock SET qty = qty - 1 WHERE sku = 'x{i}'",
    "SELECT name FROM products WHERE sku IN ('a{i}', 'b{i}')",
    "DELETE FROM carts WHERE updated < '2024-01-{d:02d}'",
)


def known_log(path: Path) -> Path:
    """Events over the last two hours, log-normal latencies in microseconds (exact sums)."""
    rng = random.Random(7)
    start = datetime.now(UTC) - timedelta(hours=2)
    return write_slow_log(
        path,
        [
            LoggedQuery(
                sql=TEMPLATES[i % len(TEMPLATES)].format(i=i, d=i % 28 + 1),
                ts=start + timedelta(seconds=i),
                query_time=round(rng.lognormvariate(-5, 1), 6),
                rows_examined=i % 100,
            )
            for i in range(EVENTS)
        ],
    )


def import_log(api: Api, log: Path) -> None:
    result = subprocess.run(
        [str(VENV_BIN / "quanta-agent"), "import", str(log), "--server", api.url,
         "--token", ADMIN_TOKEN, "--instance", INSTANCE, "--batch-size", "100"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def top_queries(api: Api) -> tuple[dict[str, Any], dict[str, tuple[int, float, int]]]:
    now = datetime.now(UTC)
    body = api.get(
        "/api/v1/queries",
        instance=INSTANCE,
        limit=100,
        **{"from": (now - timedelta(hours=3)).isoformat(), "to": now.isoformat()},
    ).json()
    rows = {r["query_id"]: (r["count"], round(r["query_time"], 6), r["rows_examined"])
            for r in body["rows"]}  # fmt: skip
    return body["totals"], rows


def deployment(
    base: Path, database_url: str, redis_url: str, log: Path, *, apis: int, workers: int
) -> tuple[dict[str, Any], dict[str, tuple[int, float, int]], list[str]]:
    """Run `apis` APIs and `workers` workers; send the whole log to every API at once."""
    with cluster(base, database_url, redis_url) as c:
        # Workers first: they start up while the APIs do (c.api() waits until it answers).
        pool = [c.worker(f"worker-{n}") for n in range(workers)]
        started = [c.api() for _ in range(apis)]
        threads = [threading.Thread(target=import_log, args=(api, log)) for api in started]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for api in started:
            api.wait_counted(INSTANCE, EVENTS)
        answers = [top_queries(api) for api in started]
        assert all(answer == answers[0] for answer in answers)  # every API reads the same
        return *answers[0], [worker.log() for worker in pool]


def test_two_apis_and_two_workers_store_what_one_of_each_stores(
    tmp_path: Path, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    log = known_log(tmp_path / "slow.log")
    redis_base = redis_server.url.rsplit("/", 1)[0]
    one_totals, one_rows, _ = deployment(
        tmp_path / "one", postgres_server.create_database("scale_one"), f"{redis_base}/1", log,
        apis=1, workers=1,
    )  # fmt: skip
    two_totals, two_rows, worker_logs = deployment(
        tmp_path / "two", postgres_server.create_database("scale_two"), f"{redis_base}/2", log,
        apis=2, workers=2,
    )  # fmt: skip
    assert one_totals["count"] == two_totals["count"] == EVENTS
    assert two_totals["query_time"] == pytest.approx(one_totals["query_time"], rel=1e-9)
    assert two_rows == one_rows
    assert len(one_rows) == len(TEMPLATES)
    # Both workers took part.
    for worker_log in worker_logs:
        assert "events counted" in worker_log
