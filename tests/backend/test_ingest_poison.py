"""Poison at the ingest edge: each batch below gets a 422 naming the field (and the row), is
not stored, and leaves the totals as they were. A batch that still fails in the worker (one
stored before these checks existed) is marked failed with its reason, counted in /metrics,
and not re-queued."""

import base64
import copy
import gzip
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.slowlog import SlowLogEvent
from quanta.core.config import Settings
from quanta.core.db import session_scope, utcnow
from quanta.ingest import service
from quanta.ingest.models import BatchStatus, IngestBatch
from quanta_agent.aggregates import aggregates
from quanta_agent.policy import ExamplePolicy
from tests.helpers import process_all, rows_as_sent

NOW = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)
MINUTE = NOW.isoformat()
WINDOW_END = NOW + timedelta(minutes=3)  # fixed: the load of a range is per second of it
EVENT = {"ts": MINUTE, "query": "SELECT * FROM t WHERE id = 1", "query_time": 0.5,
         "lock_time": 0.001, "rows_sent": 1, "rows_examined": 10}  # fmt: skip
INTERVAL = {"interval_start": (NOW - timedelta(minutes=1)).isoformat(), "interval_end": MINUTE}
DIGEST = {"schema_name": "shop", "digest": "ab12", "digest_text": "SELECT ?", **INTERVAL,
          "count_star": 3, "sum_timer_wait": 0.25,
          "histogram": [{"low": 0.0, "high": 0.1, "count": 3}]}  # fmt: skip
TABLE = {"origin": "perfschema", "schema_name": "shop", "table_name": "t", **INTERVAL,
         "count_star": 5, "sum_timer_wait": 0.5}  # fmt: skip
USER = {"user": "app", **INTERVAL, "busy_time": 2.0, "cpu_time": 1.0}


def folded_buckets() -> dict[str, Any]:
    """An agent's aggregates (queries, bucket columns, picks) of two statements."""
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for seconds in (0.5, 1.5):
        folder.add(
            SlowLogEvent("SELECT 1", NOW, seconds, 0.001, 1, 10, None, "shop", "app", "h", 1, {}),
            {},
        )
    return rows_as_sent(aggregates(folder.fold(), policy=ExamplePolicy.FULL, max_length=10_000))


def histogram_of(*values: float) -> str:
    histogram = LatencyHistogram()
    for value in values:
        histogram.add(value)
    return base64.b64encode(histogram.to_bytes()).decode()


def good_batches() -> dict[str, dict[str, Any]]:
    """One valid batch of each kind (the body without batch_id and instance)."""
    return {
        "events": {"events": [dict(EVENT), dict(EVENT)]},
        "buckets": folded_buckets(),
        "digests": {"source": "perfschema", "digests": [dict(DIGEST)]},
        "stats": {"source": "stats", "tables": [dict(TABLE)], "users": [dict(USER)]},
    }


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets body[path] (dotted, list indexes as numbers) to ``value``."""

    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = body
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


RAW = object()  # the value is spliced into the JSON text as it is (NaN, Infinity, 1e400)

# (kind, path set, value, the field the 422 must name, what it must say)
POISON: list[tuple[str, str, Any, str, str]] = [
    ("events", "events.1.query_time", (RAW, "Infinity"), "events.1.query_time", "finite"),
    ("events", "events.1.query_time", (RAW, "NaN"), "events.1.query_time", "finite"),
    ("events", "events.0.query_time", (RAW, "1e400"), "events.0.query_time", "finite"),
    ("events", "events.0.query_time", "inf", "events.0.query_time", "finite"),
    ("events", "events.0.query_time", "Infinity", "events.0.query_time", "finite"),
    ("events", "events.1.query_time", 1.7e308, "events.1.query_time", "less than"),
    ("events", "events.0.query_time", -1.0, "events.0.query_time", "greater than"),
    ("events", "events.0.lock_time", 40 * 86400.0, "events.0.lock_time", "less than"),
    ("events", "events.0.innodb_io_r_wait", 1e300, "events.0.innodb_io_r_wait", "less than"),
    ("events", "events.1.ts", "9999-12-31T23:59:59Z", "events.1.ts", "ahead"),
    ("events", "events.1.ts", "9999-12-31T23:59:59-01:00", "events.1.ts", "ahead"),
    ("events", "events.1.ts", "10000-01-01T00:00:00Z", "events.1.ts", "datetime"),
    ("events", "events.0.ts", "1970-01-01T00:00:00Z", "events.0.ts", "before 2000"),
    ("events", "events.0.rows_examined", 2**63, "events.0.rows_examined", "less than"),
    ("events", "events.0.rows_examined", 2**53, "body", "events.rows_examined adds up"),
    ("buckets", "buckets.query_time_sum.0", (RAW, "Infinity"), "buckets.query_time_sum.0",
     "finite"),
    ("buckets", "buckets.query_time_sum.0", 1e200, "buckets.query_time_sum.0", "less than"),
    ("buckets", "buckets.query_time_sum.0", 1e9, "buckets", "count x query_time_max"),
    ("buckets", "buckets.query_time_max.0", (RAW, "NaN"), "buckets.query_time_max.0", "finite"),
    ("buckets", "buckets.start.0", "9999-12-31T23:59:00Z", "buckets", "bucket 0: start"),
    ("buckets", "buckets.start.0", "1999-12-31T23:59:00Z", "buckets", "before 2000"),
    ("buckets", "buckets.histogram.0", histogram_of(0.5, 1e9), "buckets.histogram.0",
     "histogram holds"),
    ("buckets", "buckets.count.0", 2**53, "buckets", "count"),
    ("buckets", "queries.0.first_seen", "1999-12-31T23:59:59Z", "queries.0.first_seen",
     "before 2000"),
    ("buckets", "picks.0.slowest.query_time", (RAW, "-Infinity"), "picks.0.slowest.query_time",
     "finite"),
    ("digests", "digests.0.sum_timer_wait", 1e30, "digests.0.sum_timer_wait", "less than"),
    ("digests", "digests.0.sum_timer_wait", (RAW, "Infinity"), "digests.0.sum_timer_wait",
     "finite"),
    ("digests", "digests.0.interval_end", "9999-01-01T00:00:00Z", "digests.0.interval_end",
     "ahead"),
    ("digests", "digests.0.histogram.0.high", (RAW, "NaN"), "digests.0.histogram.0.high",
     "finite"),
    ("digests", "digests.0.histogram",
     [{"low": 0.0, "high": 0.1, "count": 0}] * 451, "digests.0.histogram", "at most 450"),
    ("stats", "users.0.busy_time", (RAW, "Infinity"), "users.0.busy_time", "finite"),
    ("stats", "tables.0.sum_timer_wait", 1e300, "tables.0.sum_timer_wait", "less than"),
    ("stats", "tables.0.interval_start", "1970-01-01T00:00:00Z", "tables.0.interval_start",
     "before 2000"),
]  # fmt: skip


def poisoned_body(kind: str, path: str, value: Any, batch_id: str) -> bytes:
    body = copy.deepcopy(good_batches()[kind])
    body = {"batch_id": batch_id, "instance": "db1", **body}
    if isinstance(value, tuple) and value[0] is RAW:
        marker = "__raw_value__"
        _set(path, marker)(body)
        return json.dumps(body).replace(f'"{marker}"', value[1]).encode()
    _set(path, value)(body)
    return json.dumps(body).encode()


def post(client: TestClient, body: bytes) -> Any:
    return client.post(
        "/api/v1/ingest", content=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )


def totals(client: TestClient) -> dict[str, Any]:
    window = {"from": (NOW - timedelta(hours=1)).isoformat(), "to": WINDOW_END.isoformat()}
    body: dict[str, Any] = client.get("/api/v1/queries", params=window).json()["totals"]
    return body


def stored_batches(factory: sessionmaker[Session]) -> int:
    with session_scope(factory) as session:
        return int(session.scalar(select(func.count()).select_from(IngestBatch)) or 0)


@pytest.mark.parametrize("kind", ["events", "buckets", "digests", "stats"])
def test_the_good_batches_are_accepted(client: TestClient, kind: str) -> None:
    body = {"batch_id": f"good-{kind}", "instance": "db1", **good_batches()[kind]}
    response = post(client, json.dumps(body).encode())
    assert response.status_code == 202, response.text


@pytest.mark.parametrize(
    ("kind", "path", "value", "field", "says"),
    POISON,
    ids=[f"{p}={str(v[1] if isinstance(v, tuple) else v)[:24]}" for _, p, v, _, _ in POISON],
)
def test_poison_gets_a_422_naming_the_field_and_nothing_is_stored(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    kind: str,
    path: str,
    value: Any,
    field: str,
    says: str,
) -> None:
    good = {"batch_id": "good", "instance": "db1", "events": [dict(EVENT)]}
    assert post(client, json.dumps(good).encode()).status_code == 202
    process_all(session_factory, settings)
    before = totals(client)
    assert (before["count"], before["query_time"]) == (1, 0.5)

    response = post(client, poisoned_body(kind, path, value, batch_id="poison"))

    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert f"{field}: " in detail or (field == "body" and says in detail), detail
    assert says in detail, detail
    assert stored_batches(session_factory) == 1  # the good one only
    after = totals(client)
    assert after == before
    assert None not in (after["query_time"], after["load"])


def test_sums_of_the_largest_accepted_values_stay_finite(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    """Statements at every bound, in many batches: the totals are large, never null."""
    biggest = {**EVENT, "query_time": 30 * 86400.0, "lock_time": 30 * 86400.0,
               "rows_examined": 2**53 // 4, "rows_sent": 2**53 // 4}  # fmt: skip
    for n in range(8):
        body = {"batch_id": f"big{n}", "instance": "db1", "events": [biggest] * 4}
        assert post(client, json.dumps(body).encode()).status_code == 202
    assert process_all(session_factory, settings) == 32
    result = totals(client)
    assert result["count"] == 32
    assert result["query_time"] == 32 * 30 * 86400.0
    assert result["rows_examined"] == 8 * 2**53
    assert result["load"] == pytest.approx(32 * 30 * 86400.0 / (63 * 60))  # 1 h + 3 min


# --------------------------------------------------------------------------- worker


@pytest.fixture
def worker_on_this_store(
    client: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Celery task functions, called in process, on the test's store and settings."""
    from quanta_worker.tasks import ingest as tasks

    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    monkeypatch.setattr(tasks, "session_factory", lambda: factory)
    monkeypatch.setattr(tasks, "get_settings", lambda: settings)
    monkeypatch.setattr(tasks, "fingerprinter", Fingerprinter)


def store_as_an_older_version_did(
    factory: sessionmaker[Session], body: dict[str, Any], *, attempts: int = 0
) -> int:
    """A batch stored unchecked (before the edge refused poison), queued long ago."""
    with session_scope(factory) as session:
        first = session.scalars(select(IngestBatch)).first()
        assert first is not None  # a good batch made the token and instance rows
        row = IngestBatch(
            token_id=first.token_id,
            batch_id=body["batch_id"],
            instance_id=first.instance_id,
            source="slowlog",
            payload_gzip=gzip.compress(json.dumps(body).encode()),
            event_count=len(body["events"]),
            status=BatchStatus.QUEUED,
            received_at=utcnow() - timedelta(hours=1),
            attempts=attempts,
        )
        session.add(row)
        session.flush()
        return row.id


def metric(client: TestClient, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def batch_row(factory: sessionmaker[Session], batch_pk: int) -> IngestBatch:
    with session_scope(factory) as session:
        row = session.get_one(IngestBatch, batch_pk)
        session.expunge(row)
        return row


def test_a_batch_failing_in_the_worker_is_marked_failed_counted_and_not_requeued(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    worker_on_this_store: None,
) -> None:
    from quanta_worker.tasks.ingest import process_batch, requeue_stale_batches

    good = {"batch_id": "good", "instance": "db1", "events": [dict(EVENT)]}
    assert post(client, json.dumps(good).encode()).status_code == 202
    assert process_batch(1) == 1
    before = totals(client)
    failed_before = metric(client, 'quanta_ingest_batches_failed_total{source="slowlog"}')
    huge = {**EVENT, "query_time": 1.7e308}
    poison = {"batch_id": "old-poison", "instance": "db1", "events": [huge, huge]}
    batch_pk = store_as_an_older_version_did(session_factory, poison)

    assert process_batch(batch_pk) == 0  # no exception: nothing for Celery to retry

    row = batch_row(session_factory, batch_pk)
    assert row.status == BatchStatus.FAILED
    assert row.attempts == 1
    assert row.payload_gzip is None  # transient, like a processed batch's
    assert row.error is not None
    assert "\n" not in row.error
    assert row.error.startswith("Invalid batch: events.0.query_time: Input should be less than")
    answer = client.get("/api/v1/ingest/old-poison").json()
    assert (answer["status"], answer["error"]) == ("failed", row.error)
    after = metric(client, 'quanta_ingest_batches_failed_total{source="slowlog"}')
    assert after == failed_before + 1
    assert metric(client, "quanta_ingest_failed_batches") == 1
    assert metric(client, "quanta_ingest_queue_depth") == 0
    # Beat's re-queue job no longer sees it; a re-delivered task leaves it alone.
    assert requeue_stale_batches() == 0
    assert process_batch(batch_pk) == 0
    assert batch_row(session_factory, batch_pk).attempts == 1
    assert totals(client) == before


def test_a_batch_that_keeps_killing_its_worker_is_given_up(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    worker_on_this_store: None,
) -> None:
    """A worker killed mid-batch never records a failure: the attempts it started count."""
    from quanta_worker.tasks.ingest import process_batch, requeue_stale_batches

    good = {"batch_id": "good", "instance": "db1", "events": [dict(EVENT)]}
    assert post(client, json.dumps(good).encode()).status_code == 202
    assert process_batch(1) == 1
    batch_pk = store_as_an_older_version_did(
        session_factory,
        {"batch_id": "killer", "instance": "db1", "events": [dict(EVENT)]},
        attempts=settings.ingest_max_attempts,
    )
    assert requeue_stale_batches() == 1  # still queued: beat sends it once more

    assert process_batch(batch_pk) == 0

    row = batch_row(session_factory, batch_pk)
    assert row.status == BatchStatus.FAILED
    assert row.error == f"gave up after {settings.ingest_max_attempts} attempts"
    assert requeue_stale_batches() == 0


def test_a_transient_failure_is_retried_then_given_up(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    """Not the batch's fault (a bug, a lost connection): the reason is kept, the batch stays
    queued for a retry until it has had its attempts."""
    good = {"batch_id": "good", "instance": "db1", "events": [dict(EVENT)]}
    assert post(client, json.dumps(good).encode()).status_code == 202
    with session_scope(session_factory) as session:
        batch_pk = session.scalars(select(IngestBatch.id)).one()
    statuses = []
    for _ in range(settings.ingest_max_attempts):
        with session_scope(session_factory) as session:
            assert service.begin_attempt(session=session, settings=settings, batch_pk=batch_pk)
        with session_scope(session_factory) as session:
            statuses.append(
                service.record_failure(
                    session=session,
                    settings=settings,
                    batch_pk=batch_pk,
                    error=RuntimeError("worker bug\nwith a second line"),
                )
            )
    assert statuses == [BatchStatus.QUEUED] * (settings.ingest_max_attempts - 1) + [
        BatchStatus.FAILED
    ]
    row = batch_row(session_factory, batch_pk)
    assert (row.status, row.error) == (BatchStatus.FAILED, "RuntimeError: worker bug")
