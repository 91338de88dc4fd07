"""The ingest endpoint and the batch processing service, without a broker."""

import gzip
import json
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.slowlog import SlowLogEvent
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service
from quanta.ingest.models import IngestBatch
from quanta.queries.models import QueryBucketMinute
from quanta_agent.aggregates import aggregates
from quanta_agent.policy import ExamplePolicy
from tests.helpers import process_all, rows_as_sent

SETTINGS = Settings(env="test")
NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


def make_event(sql: str, query_time: float, minutes_ago: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "ts": (NOW - timedelta(minutes=minutes_ago)).isoformat(),
        "query": sql,
        "query_time": query_time,
        "lock_time": 0.001,
        "rows_sent": 1,
        "rows_examined": 10,
        "db": "shop",
        "user": "app",
        "host": "10.0.0.1",
        **extra,
    }


def post_batch(client: TestClient, events: list[dict[str, Any]], batch_id: str = "b1") -> Any:
    body = json.dumps({"batch_id": batch_id, "instance": "db1", "events": events}).encode()
    return client.post(
        "/api/v1/ingest", content=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )


def test_batch_is_stored_then_counted_once(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    events = [
        make_event("SELECT * FROM orders WHERE id = 1", 0.5),
        make_event("SELECT * FROM orders WHERE id = 2", 1.5, minutes_ago=1),
        make_event("UPDATE stock SET n = n - 1 WHERE sku = 'a'", 0.25),
    ]
    first = post_batch(client, events)
    assert first.status_code == 202, first.text
    assert first.json()["status"] == "queued"
    assert first.json()["events"] == 3

    again = post_batch(client, events)
    assert again.status_code == 200
    assert again.json()["batch_id"] == "b1"

    assert process_all(session_factory, SETTINGS) == 3
    # A re-delivered task finds the batch already claimed and counts nothing.
    assert process_all(session_factory, SETTINGS) == 0

    body = client.get("/api/v1/queries").json()
    assert body["totals"]["count"] == 3
    assert abs(body["totals"]["query_time"] - 2.25) < 1e-9
    top = body["rows"][0]
    assert top["count"] == 2
    assert abs(top["query_time"] - 2.0) < 1e-9
    assert abs(top["share"] - 2.0 / 2.25) < 1e-9
    assert abs(top["load"] - 2.0 / body["seconds"]) < 1e-12
    assert len(top["sparkline"]) == 60
    assert abs(sum(p["load"] for p in top["sparkline"]) * body["seconds"] / 60 - 2.0) < 1e-6
    assert client.get("/api/v1/ingest/b1").json()["status"] == "done"

    with session_scope(session_factory) as session:
        buckets = session.scalar(select(func.count()).select_from(QueryBucketMinute))
    assert buckets == 3  # two minutes for the SELECT, one for the UPDATE


def test_uncompressed_json_is_accepted(client: TestClient) -> None:
    body = {"batch_id": "plain", "instance": "db1", "events": [make_event("SELECT 1", 0.1)]}
    assert client.post("/api/v1/ingest", json=body).status_code == 202


def test_missing_or_wrong_token_is_401(client: TestClient) -> None:
    no_auth = client.get("/api/v1/queries", headers={"Authorization": ""})
    assert no_auth.status_code == 401
    assert "Missing API token" in no_auth.json()["detail"]
    wrong = client.get("/api/v1/queries", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert "Unknown or revoked" in wrong.json()["detail"]


def test_bad_bodies_get_a_4xx_that_says_why(client: TestClient) -> None:
    not_gzip = client.post(
        "/api/v1/ingest", content=b"not gzip", headers={"Content-Encoding": "gzip"}
    )
    assert not_gzip.status_code == 422
    assert "not valid gzip" in not_gzip.json()["detail"]

    wrong_type = post_batch(client, [make_event("SELECT 1", query_time=-1)])
    assert wrong_type.status_code == 422
    assert "events.0.query_time" in wrong_type.json()["detail"]

    no_tz = post_batch(client, [make_event("SELECT 1", 0.1, ts="2026-01-01T00:00:00")])
    assert no_tz.status_code == 422
    assert "events.0.ts" in no_tz.json()["detail"]

    brotli = client.post("/api/v1/ingest", content=b"{}", headers={"Content-Encoding": "br"})
    assert brotli.status_code == 422
    assert "Unsupported Content-Encoding" in brotli.json()["detail"]


def test_limits_give_413(client: TestClient) -> None:
    settings = client.app.state.settings  # type: ignore[attr-defined]
    settings.ingest_max_events = 2
    too_many = post_batch(client, [make_event("SELECT 1", 0.1)] * 3)
    assert too_many.status_code == 413
    assert "limit is 2" in too_many.json()["detail"]

    settings.ingest_max_decoded_bytes = 1000
    bomb = gzip.compress(b'{"batch_id":"x","instance":"i","events":[' + b" " * 10_000 + b"]}")
    too_big = client.post("/api/v1/ingest", content=bomb, headers={"Content-Encoding": "gzip"})
    assert too_big.status_code == 413


def test_inverted_range_is_400(client: TestClient) -> None:
    response = client.get(
        "/api/v1/queries", params={"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}
    )
    assert response.status_code == 400
    assert "must be before" in response.json()["detail"]


def test_unknown_batch_is_404(client: TestClient) -> None:
    assert client.get("/api/v1/ingest/nope").status_code == 404


def test_batches_left_queued_are_found_again(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    assert post_batch(client, [make_event("SELECT 1", 0.1)], batch_id="lost").status_code == 202
    assert post_batch(client, [make_event("SELECT 2", 0.1)], batch_id="fresh").status_code == 202
    settings = client.app.state.settings  # type: ignore[attr-defined]
    with session_scope(session_factory) as session:
        lost = session.scalars(select(IngestBatch).where(IngestBatch.batch_id == "lost")).one()
        lost.received_at = datetime.now(UTC) - timedelta(hours=1)
    with session_scope(session_factory) as session:
        assert service.requeue_stale_batches(session=session, settings=settings) == [lost.id]
    process_all(session_factory, SETTINGS)
    with session_scope(session_factory) as session:
        assert service.requeue_stale_batches(session=session, settings=settings) == []


def test_the_same_batch_sent_concurrently_is_stored_once(client: TestClient) -> None:
    events = [make_event("SELECT 1", 0.1)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(lambda _: post_batch(client, events, "race").status_code, range(8)))
    assert sorted(codes) == [200] * 7 + [202]


def test_an_agents_minute_buckets_count_as_its_events(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    """The same statements sent as events (db1) and folded by the agent (db2) read the same."""
    statements = [
        ("SELECT * FROM orders WHERE id = 1", 0.5, 0),
        ("SELECT * FROM orders WHERE id = 2", 1.5, 1),
        ("SELECT * FROM orders WHERE id = 3", 0.75, 1),
        ("UPDATE stock SET n = 1", 0.25, 0),
    ]
    assert post_batch(client, [make_event(*s) for s in statements]).status_code == 202
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for sql, seconds, minutes_ago in statements:
        ts = NOW - timedelta(minutes=minutes_ago)
        event = SlowLogEvent(sql, ts, seconds, 0.001, 1, 10, None, "shop", "app", "10.0.0.1", 1, {})
        folder.add(event, {})
    content = rows_as_sent(aggregates(folder.fold(), policy=ExamplePolicy.FULL, max_length=10_000))
    body = {"batch_id": "agg", "instance": "db2", **content}
    answer = client.post(
        "/api/v1/ingest", content=gzip.compress(json.dumps(body).encode()),
        headers={"Content-Encoding": "gzip"},
    )  # fmt: skip
    assert answer.status_code == 202, answer.text
    assert answer.json()["events"] == 4
    assert process_all(session_factory, SETTINGS) == 8

    def read(instance: str) -> list[tuple[Any, ...]]:
        # A window holding both minutes whole (NOW may fall on the start of a minute).
        window = {
            "from": (NOW - timedelta(hours=1)).isoformat(),
            "to": (NOW + timedelta(minutes=1)).isoformat(),
        }
        rows = client.get("/api/v1/queries", params={"instance": instance, **window}).json()["rows"]
        return [
            (r["query_id"], r["count"], round(r["query_time"], 9), r["query_time_p95"],
             r["rows_examined"], r["sparkline"])
            for r in rows
        ]  # fmt: skip

    assert read("db2") == read("db1")
    assert len(read("db2")) == 2
    qid = read("db2")[0][0]
    examples = client.get(f"/api/v1/queries/{qid}/examples", params={"instance": "db2"}).json()
    assert {e["text"] for e in examples["examples"]} >= {"SELECT * FROM orders WHERE id = 2"}
