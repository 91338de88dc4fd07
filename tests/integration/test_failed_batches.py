"""A batch the worker cannot process, through real processes (`quanta serve`, `quanta worker`,
`quanta beat` on PostgreSQL and Redis): marked failed once with its reason, counted in
/metrics, never re-queued by beat, and the store's totals untouched.

The edge now refuses such a batch with a 422, so the test stores it the way a version without
those checks did (straight into ingest_batches), which is also what an upgrade finds."""

import gzip
import json
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from quanta.core.tasks import REQUEUE_STALE_BATCHES_TASK
from tests.fixtures.cluster import ADMIN_TOKEN, cluster, wait_for
from tests.fixtures.servers import PostgresServer, RedisServer
from tests.helpers import HTTP

pytestmark = [pytest.mark.services, pytest.mark.long]

NOW = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=2)
# The worker's line for each of beat's checks for lost batches that it has run.
REQUEUE_DONE = re.compile(rf"Task {re.escape(REQUEUE_STALE_BATCHES_TASK)}\[[^\]]+\] succeeded")
EVENT = {"ts": NOW.isoformat(), "query": "SELECT * FROM t WHERE id = 1", "query_time": 0.5}


def test_a_poisoned_batch_fails_once_and_is_left_alone(
    tmp_path: Path, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    url = postgres_server.create_database(f"failed_batches_{time.monotonic_ns()}")
    fast_requeue = {
        "QUANTA_INGEST_REQUEUE_AFTER_SECONDS": "1",
        "QUANTA_INGEST_REQUEUE_CHECK_SECONDS": "1",
    }
    with cluster(tmp_path, url, redis_server.url, **fast_requeue) as c:
        # The worker and beat start while the API does (none waits for another).
        worker, _beat = c.worker(), c.beat()
        api = c.api()
        good = {"batch_id": "good", "instance": "db1", "events": [EVENT]}
        answer = HTTP.post(
            api.url + "/api/v1/ingest",
            json=good,
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=30,
        )
        assert answer.status_code == 202, answer.text
        api.wait_counted("db1", 1)
        before = api.get("/api/v1/queries", instance="db1").json()["totals"]

        huge = {**EVENT, "query_time": 1.7e308}
        poison = {"batch_id": "old-poison", "instance": "db1", "events": [huge, huge]}
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO ingest_batches (token_id, batch_id, instance_id, source, "
                    "payload_gzip, event_count, status, received_at, attempts) "
                    "SELECT token_id, 'old-poison', instance_id, 'slowlog', :payload, 2, "
                    "'queued', :received, 0 FROM ingest_batches WHERE batch_id = 'good'"
                ),
                {
                    "payload": gzip.compress(json.dumps(poison).encode()),
                    "received": datetime.now(UTC) - timedelta(hours=1),
                },
            )

        def row() -> tuple[str, int, str | None]:
            with engine.connect() as conn:
                status, attempts, error = conn.execute(
                    text(
                        "SELECT status, attempts, error FROM ingest_batches "
                        "WHERE batch_id = 'old-poison'"
                    )
                ).one()
            return status, attempts, error

        def rounds() -> int:
            """Beat's re-queue checks the worker has run so far."""
            return len(REQUEUE_DONE.findall(worker.log()))

        # beat finds it queued long ago and re-queues it; the worker gives up at once.
        wait_for(lambda: row()[0] == "failed", 60, "the poisoned batch to fail")
        failed_at = rounds()
        # Five more beat rounds: none of them touches it again.
        wait_for(lambda: rounds() >= failed_at + 5, 60, "five more re-queue checks")

        status, attempts, error = row()
        assert (status, attempts) == ("failed", 1)
        assert error is not None
        assert error.startswith("Invalid batch: events.0.query_time: Input should be less than")
        shown = HTTP.get(
            api.url + "/api/v1/ingest/old-poison",
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=30,
        ).json()
        assert (shown["status"], shown["error"]) == ("failed", error)
        assert api.metric("quanta_ingest_batches_failed_total", source="slowlog") == 1
        assert api.metric("quanta_ingest_failed_batches") == 1
        assert api.metric("quanta_ingest_queue_depth") == 0
        after = api.get("/api/v1/queries", instance="db1").json()["totals"]
        assert after["count"] == before["count"] == 1
        assert after["query_time"] == before["query_time"] == 0.5
        log = worker.log()
        assert log.count("failed: Invalid batch") == 1  # one line, once
        assert "Traceback" not in log
        engine.dispose()
