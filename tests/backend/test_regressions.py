"""Regressions through the store (SQLite), fed with slow-log events through the ingest API and
the batch service: found with their cause, announced once, resolved once; the API."""

import gzip
import itertools
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.advice.models import Suggestion
from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.fingerprint import query_id as fingerprint_id
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import BatchStatus, IngestBatch
from quanta.instances.models import Instance
from quanta.notify import formats
from quanta.notify.events import RegressionNotice
from quanta.notify.models import Delivery
from quanta.notify.publish import publish_regression
from quanta.regressions.service import check_regressions
from tests.backend.test_notify_service import (  # noqa: F401
    Receiver,
    add_channel,
    attempt,
    delivery,
    receiver,
)

# The change, on a whole minute; two hours of baseline before it.
T = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)
LOOKUP = "SELECT * FROM shop.orders WHERE note = 'n{i}'"
CONTROL = "SELECT * FROM shop.customers WHERE id = {i}"
DROP = "DROP INDEX idx_note ON shop.orders"
PUBLIC_URL = "http://quanta.test"


def ev(minute: float, sql: str, query_time: float, rows_examined: int) -> dict[str, Any]:
    return {
        "ts": (T + timedelta(minutes=minute)).isoformat(),
        "query": sql,
        "query_time": query_time,
        "lock_time": 0.0,
        "rows_sent": 1,
        "rows_examined": rows_examined,
        "db": "shop",
        "user": "app",
        "host": "web1",
    }


def events(first: int, last: int, *, slow: bool) -> list[dict[str, Any]]:
    """Ten lookups and ten control reads a minute from ``first`` to ``last`` (exclusive)."""
    rng = random.Random(first)
    out = []
    for minute in range(first, last):
        for k in range(10):
            at = minute + k / 10
            lookup = rng.uniform(0.040, 0.060) if slow else rng.uniform(0.0015, 0.0025)
            out.append(ev(at, LOOKUP.format(i=k), lookup, 30_000 if slow else 1))
            out.append(ev(at + 0.05, CONTROL.format(i=k), rng.uniform(0.002, 0.004), 1))
    return out


def feed(client: TestClient, factory: sessionmaker[Session], settings: Settings, batch: str,
         items: list[dict[str, Any]]) -> None:  # fmt: skip
    body = json.dumps({"batch_id": batch, "instance": "db1", "events": items}).encode()
    response = client.post(
        "/api/v1/ingest", content=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )
    assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        queued = list(
            session.scalars(select(IngestBatch.id).where(IngestBatch.status == BatchStatus.QUEUED))
        )
    for batch_pk in queued:
        with session_scope(factory) as session:
            ingest.process_batch(session=session, settings=settings, batch_pk=batch_pk)


_databases = itertools.count()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The store of the `client` fixture: SQLite, and a fresh database on PostgreSQL."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"regressions_{next(_databases)}")
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=url,
        allow_private_webhooks=True,
        public_url=PUBLIC_URL,
        regression_baseline_minutes=120,
        regression_min_minutes=15,
    )


def qid(sql: str) -> str:
    return fingerprint_id(fingerprint(sql.format(i=1)))


def deliveries(factory: sessionmaker[Session]) -> list[tuple[str, dict[str, Any]]]:
    with session_scope(factory) as session:
        rows = session.scalars(select(Delivery).order_by(Delivery.id)).all()
        return [(d.event, dict(d.payload)) for d in rows]


def check(factory: sessionmaker[Session], settings: Settings, minute: float) -> Any:
    with session_scope(factory) as session:
        return check_regressions(
            session=session, settings=settings, now=T + timedelta(minutes=minute)
        )


def test_a_dropped_index_is_announced_once_with_its_cause_and_resolved_once(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    channel = client.post(
        "/api/v1/channels",
        json={"name": "ops", "type": "webhook", "url": "http://127.0.0.1:9/hook",
              "events": ["regression", "regression_resolved"]},
    )  # fmt: skip
    assert channel.status_code == 201, channel.text
    feed(client, session_factory, settings, "baseline", events(-140, 0, slow=False))
    # Steady: checks during the baseline find nothing.
    for minute in (-20.5, -1.5, 0.5):
        assert check(session_factory, settings, minute).found == []
    feed(client, session_factory, settings, "drop", [ev(0.2, DROP, 0.3, 0)])
    feed(client, session_factory, settings, "slow", events(0, 16, slow=True))
    assert check(session_factory, settings, 7.5).found == []  # 7 slow minutes of 15: not yet
    found = check(session_factory, settings, 16.5)
    assert len(found.found) == 1
    assert found.announced == found.found  # no DSN: no EXPLAIN to wait for
    assert check(session_factory, settings, 16.7).found == []  # open: not found twice

    [(event, payload)] = [d for d in deliveries(session_factory) if d[0] == "regression"]
    assert event == "regression"
    message = formats.event_message("webhook", event, payload, PUBLIC_URL)
    assert list(message) == ["event", "instance", "query_id", "fingerprint", "metric", "before",
                             "after", "since", "cause"]  # fmt: skip
    assert message["event"] == "regression"
    assert message["instance"] == "db1"
    assert message["query_id"] == qid(LOOKUP)
    assert message["fingerprint"] == fingerprint(LOOKUP.format(i=1))
    assert message["metric"] == "avg_latency"
    assert 0.0015 <= message["before"] <= 0.0025  # type: ignore[operator]
    assert 0.040 <= message["after"] <= 0.060  # type: ignore[operator]
    # The first slow minute is the minute of the DROP INDEX (whose second half was slow).
    assert message["since"] == T.isoformat()
    assert "drop index idx_note on shop.orders" in str(message["cause"])
    assert "rows examined per call rose from 1 to 30,000" in str(message["cause"])

    listed = client.get("/api/v1/regressions", params={"instance": "db1"}).json()
    [regression] = listed["regressions"]
    assert (regression["status"], regression["kind"]) == ("open", "regression")
    assert regression["evidence"]["metrics"]["avg_latency"]["significant"] is True
    assert regression["evidence"]["schema_statements"][0]["statement"] == fingerprint(DROP)
    detail = client.get(f"/api/v1/regressions/{regression['id']}").json()
    assert detail == regression
    assert client.get("/api/v1/regressions/999").status_code == 404
    assert client.get("/api/v1/regressions", params={"status": "closed"}).status_code == 422

    # The index is back (a suggestion sent to the channel became applied at T+16): 15 minutes
    # within the baseline resolve it, once; the suggestion's channel hears what it did.
    suggestion_id = applied_suggestion(session_factory, channel.json()["id"], T + timedelta(
        minutes=16, seconds=10))  # fmt: skip
    feed(client, session_factory, settings, "fixed", events(16, 33, slow=False))
    assert check(session_factory, settings, 25.5).resolved == []  # the window still mixed
    assert check(session_factory, settings, 30.5).outcomes == []  # 13 minutes after: not yet
    last = check(session_factory, settings, 33.5)
    assert last.resolved == [regression["id"]]
    assert last.outcomes == [suggestion_id]
    again = check(session_factory, settings, 34.5)
    assert (again.resolved, again.outcomes) == ([], [])
    sent = deliveries(session_factory)
    assert [e for e, _ in sent] == ["regression", "new_suggestion", "regression_resolved",
                                    "suggestion_applied"]  # fmt: skip
    outcome = sent[3][1]
    assert outcome["window_seconds"] == 16 * 60
    measured = {m["name"]: m for m in outcome["metrics"]}
    assert measured["avg_latency"]["before"] > 10 * measured["avg_latency"]["after"]
    assert measured["rows_examined_per_call"]["after"] == 1
    assert "x0.0" not in json.dumps(formats.event_message("slack", *sent[3], PUBLIC_URL))
    sent = [d for d in sent if d[0].startswith("regression")]
    resolved = formats.event_message("webhook", sent[1][0], sent[1][1], PUBLIC_URL)
    assert resolved["event"] == "regression_resolved"
    assert 0.0015 <= resolved["after"] <= 0.0025  # type: ignore[operator]
    for channel_type in ("slack", "teams", "mattermost", "discord"):
        text = json.dumps(formats.event_message(channel_type, sent[0][0], sent[0][1], PUBLIC_URL))
        assert "drop index idx\\\\_note" in text or "drop index idx_note" in text
    final = client.get(f"/api/v1/regressions/{regression['id']}").json()
    assert final["status"] == "resolved"
    assert final["resolution"]["after"] == resolved["after"]


def applied_suggestion(factory: sessionmaker[Session], channel_id: int, at: datetime) -> int:
    """A suggestion for the lookup, sent to the channel and applied at ``at``."""
    with session_scope(factory) as session:
        instance_id = session.scalar(select(Instance.id).where(Instance.name == "db1"))
        row = Suggestion(
            query_id=qid(LOOKUP), instance_id=instance_id, table_name="shop.orders",
            action="add", columns=[{"name": "note", "desc": False, "rule": "equality"}],
            ddl="ALTER TABLE shop.orders ADD INDEX idx_note (note)", reason="r", notes=[],
            redundant=[], status="applied", content_hash="h", created_at=at - timedelta(
                hours=1), updated_at=at,
        )  # fmt: skip
        session.add(row)
        session.flush()
        session.add(
            Delivery(channel_id=channel_id, kind="message", event="new_suggestion",
                     suggestion_id=row.id, content_hash="h", payload={}, status="sent",
                     attempts=1, created_at=at - timedelta(hours=1))
        )  # fmt: skip
        return row.id


def test_regression_messages_keep_quiet_hours_and_the_hourly_cap(
    receiver: Receiver,  # noqa: F811
    session_factory: sessionmaker[Session],
    settings: Settings,
) -> None:
    capped = settings.model_copy(update={"notify_max_per_hour": 1})
    add_channel(session_factory, capped, receiver.url(), events=["regression"],
                quiet_start_hour=22, quiet_end_hour=6)  # fmt: skip
    notices = [
        RegressionNotice(
            regression_id=n,
            instance="db1",
            query_id="A1B2C3D4E5F60718",
            fingerprint="select 1",
            metric="avg_latency",
            before=0.001,
            after=0.1,
            since="2026-03-10T22:10:00+00:00",
            cause="c",
        )
        for n in (1, 2)
    ]
    with session_scope(session_factory) as session:
        ids = [
            delivery_id
            for notice in notices
            for delivery_id in publish_regression(session=session, settings=capped, notice=notice)
        ]
        # Published again (the next check): nothing more.
        assert publish_regression(session=session, settings=capped, notice=notices[0]) == []
    late = (datetime.now(UTC) + timedelta(days=1)).replace(hour=23, minute=15)
    morning = (late + timedelta(days=1)).replace(hour=6, minute=0, second=0, microsecond=0)
    assert attempt(session_factory, capped, ids[0], late) == morning  # quiet hours: waits
    assert receiver.requests == []
    assert attempt(session_factory, capped, ids[0], morning) is None
    assert attempt(session_factory, capped, ids[1], morning) is None
    assert [delivery(session_factory, i).status for i in ids] == ["sent", "held"]
    assert [r.body["event"] for r in receiver.requests] == ["regression"]
