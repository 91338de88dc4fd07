"""Partial buckets of one minute, as the live agent ships them (a minute cut by the size
bound, or late entries going with the next minute), add up on the server: the store reads
the same as when the minute arrives whole."""

import gzip
import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.slowlog import SlowLogEvent
from quanta.core.db import session_scope
from quanta.instances.models import Instance
from quanta.queries.models import QueryBucketHour, QueryBucketMinute
from quanta_agent.aggregates import aggregates
from quanta_agent.policy import ExamplePolicy
from tests.backend.test_ingest_api import process_all
from tests.helpers import roll_up_all, rows_as_sent

MINUTE = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)


def statements(count: int) -> list[SlowLogEvent]:
    """``count`` statements of three classes over one minute, from two client hosts."""
    rng = random.Random(7)
    shapes = ["SELECT * FROM orders WHERE id = {}", "UPDATE stock SET n = {}", "SELECT {}"]
    return [
        SlowLogEvent(
            shapes[n % 3].format(n),
            MINUTE + timedelta(seconds=n * 59 / count),
            rng.lognormvariate(-4, 1.5),
            0.001 * (n % 5),
            1,
            n,
            None,
            "shop",
            "app",
            f"10.0.0.{n % 2}",
            1,
            {},
        )
        for n in range(count)
    ]


def post_folded(client: TestClient, instance: str, batch_id: str, events: list[Any]) -> None:
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for event in events:
        folder.add(event, {"bytes_sent": 100 + event.rows_examined})
    content = rows_as_sent(aggregates(folder.fold(), policy=ExamplePolicy.FULL, max_length=10_000))
    body = {"batch_id": batch_id, "instance": instance, **content}
    answer = client.post(
        "/api/v1/ingest", content=gzip.compress(json.dumps(body).encode()),
        headers={"Content-Encoding": "gzip"},
    )  # fmt: skip
    assert answer.status_code == 202, answer.text


def test_partial_buckets_of_a_minute_add_up_to_the_whole(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    events = statements(300)
    post_folded(client, "whole", "whole", events)
    # Three parts, the last holding late entries from early in the minute.
    late = events[10:40]
    rest = events[:10] + events[40:]
    post_folded(client, "parts", "p1", rest[:130])
    post_folded(client, "parts", "p2", rest[130:])
    post_folded(client, "parts", "p3", late)
    assert process_all(session_factory) == 600

    def read(instance: str) -> list[tuple[Any, ...]]:
        window = {
            "from": (MINUTE - timedelta(hours=1)).isoformat(),
            "to": (MINUTE + timedelta(minutes=2)).isoformat(),
        }
        rows = client.get("/api/v1/queries", params={"instance": instance, **window}).json()
        return sorted(
            (r["query_id"], r["count"], round(r["query_time"], 9), r["query_time_p95"])
            for r in rows["rows"]
        )

    # Appended as they came (a part is a row), summed on read...
    assert read("parts") == read("whole")
    with session_scope(session_factory) as session:
        rows = session.scalars(select(QueryBucketMinute)).all()
        assert sum(r.count for r in rows) == 600
        assert len(rows) > 12  # the parts were not merged on write
    roll_up_all(session_factory)

    # ... and merged into one row of the hour by the roll-up.
    def stored(instance: str) -> list[tuple[Any, ...]]:
        with session_scope(session_factory) as session:
            rows = session.scalars(
                select(QueryBucketHour)
                .join(Instance, Instance.id == QueryBucketHour.instance_id)
                .where(Instance.name == instance)
            ).all()
            return sorted(
                (r.query_id, r.bucket_start, r.schema_name, r.user_name, r.client_host, r.count,
                 round(r.query_time_sum, 9), r.query_time_min, r.query_time_max,
                 round(r.lock_time_sum or 0, 9), r.rows_examined_sum, r.bytes_sent_sum,
                 r.histogram)
                for r in rows
            )  # fmt: skip

    whole, parts = stored("whole"), stored("parts")
    assert len(whole) == 6  # 3 classes x 2 hosts, one hour
    assert parts == whole
    assert sum(row[5] for row in parts) == 300
    assert read("parts") == read("whole")
