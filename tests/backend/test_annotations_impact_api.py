"""GET /annotations/{id}/impact on SQLite and PostgreSQL stores, fed through the ingest API
and the batch service."""

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

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.fingerprint import query_id as fingerprint_id
from quanta.annotations.service import annotation_impact, announce_impacts
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import BatchStatus, IngestBatch
from quanta.notify.models import Delivery

# The change, on a whole minute two hours ago; 30-minute windows either side.
T = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=2)
MINUTES = 30

SCAN = "SELECT * FROM shop.orders WHERE note = 'n{i}'"
CONTROL = "SELECT * FROM shop.customers WHERE id = {i}"
NEW = "SELECT sku FROM shop.stock WHERE qty < {i}"
GONE = "SELECT COUNT(*) FROM shop.legacy WHERE x = {i}"
OWN = "EXPLAIN SELECT * FROM shop.orders WHERE note = 'n{i}'"
OTHER_SERVER = "SELECT * FROM shop.audit WHERE id = {i}"


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


def workload() -> dict[str, list[dict[str, Any]]]:
    """Events per instance: minutes -30..-1 before the change, 0..29 after."""
    rng = random.Random(11)
    db1: list[dict[str, Any]] = []
    db2: list[dict[str, Any]] = []
    for minute in range(-MINUTES, MINUTES):
        after = minute >= 0
        for k in range(10):
            at = minute + k / 10
            # The index: 40-60 ms and 20,000 rows per call before, 1-2 ms and 1 row after.
            scan_time = rng.uniform(0.001, 0.002) if after else rng.uniform(0.040, 0.060)
            db1.append(ev(at, SCAN.format(i=k), scan_time, 1 if after else 20_000))
            db1.append(ev(at + 0.05, CONTROL.format(i=k), rng.uniform(0.002, 0.004), 1))
            db1.append(ev(at + 0.02, NEW.format(i=k) if after else GONE.format(i=k), 0.003, 100))
            if after:  # Quanta's own EXPLAIN of the new plan: never part of an impact
                db1.append(ev(at + 0.03, OWN.format(i=k), 0.001, 1))
            # Another server gets slower at the same time: not this annotation's business.
            slow = rng.uniform(0.2, 0.3) if after else rng.uniform(0.010, 0.012)
            db2.append(ev(at, OTHER_SERVER.format(i=k), slow, 5))
    return {"db1": db1, "db2": db2}


def feed(client: TestClient, factory: sessionmaker[Session], settings: Settings) -> None:
    for instance, events in workload().items():
        for n in range(0, len(events), 1000):
            payload = {"batch_id": f"{instance}-{n}", "instance": instance}
            body = json.dumps({**payload, "events": events[n : n + 1000]}).encode()
            response = client.post(
                "/api/v1/ingest",
                content=gzip.compress(body),
                headers={"Content-Encoding": "gzip"},
            )
            assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        ids = list(session.scalars(select(IngestBatch.id).order_by(IngestBatch.id)))
    for batch_pk in ids:
        with session_scope(factory) as session:
            ingest.process_batch(session=session, settings=settings, batch_pk=batch_pk)
    with session_scope(factory) as session:
        statuses = set(session.scalars(select(IngestBatch.status)))
    assert statuses == {BatchStatus.DONE}


def query_id(sql: str) -> str:
    return fingerprint_id(fingerprint(sql.format(i=1)))


def iso(ts: datetime) -> str:
    return ts.isoformat().replace("+00:00", "Z")


def impact(client: TestClient, annotation_id: int, window: str = "30m") -> dict[str, Any]:
    response = client.get(f"/api/v1/annotations/{annotation_id}/impact", params={"window": window})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


_databases = itertools.count()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The store of the `client` fixture: SQLite, and a fresh database on PostgreSQL."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"annotations_impact_{next(_databases)}")
    # The announce test's channel points at 127.0.0.1: private webhook addresses allowed.
    return Settings(
        env="test", data_dir=tmp_path / "data", database_url=url, allow_private_webhooks=True
    )


@pytest.fixture
def fed(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> TestClient:
    feed(client, session_factory, settings)
    return client


def test_impact_of_an_index_on_one_instance(fed: TestClient) -> None:
    created = fed.post(
        "/api/v1/annotations",
        json={"text": "add index", "instances": ["db1"], "time": T.isoformat()},
    ).json()
    body = impact(fed, created["id"])
    assert body["annotation"] == created
    assert body["window_seconds"] == 1800
    assert body["before"] == {"from": iso(T - timedelta(minutes=30)), "to": iso(T)}
    assert body["after"] == {"from": iso(T), "to": iso(T + timedelta(minutes=30))}
    rows = {r["query_id"]: r for r in body["queries"]}
    # db2's query is not in a db1 annotation's impact, nor Quanta's own EXPLAIN.
    assert set(rows) == {query_id(q) for q in (SCAN, CONTROL, NEW, GONE)}
    # Sorted by the absolute change in load: the scan saved the most.
    assert body["queries"][0]["query_id"] == query_id(SCAN)
    loads = [abs(r["metrics"]["load"]["change"]) for r in body["queries"]]
    assert loads == sorted(loads, reverse=True)

    scan = rows[query_id(SCAN)]
    assert scan["fingerprint"] == fingerprint(SCAN.format(i=1))
    assert scan["instance"] == "db1"
    assert (scan["status"], scan["verdict"]) == ("changed", "improved")
    m = scan["metrics"]
    assert m["count"]["before"] == m["count"]["after"] == 300
    assert not m["count"]["significant"]
    assert m["rows_examined_per_call"]["before"] == 20_000
    assert m["rows_examined_per_call"]["after"] == 1
    for name in ("load", "avg_latency", "p95_latency", "rows_examined_per_call"):
        assert m[name]["significant"], name
        assert m[name]["change_pct"] < -0.9, name
        assert m[name]["p_value"] < 1e-6, name
    assert 0.040 <= m["avg_latency"]["before"] <= 0.060
    assert 0.001 <= m["avg_latency"]["after"] <= 0.002
    assert 0.050 <= m["p95_latency"]["before"] <= 0.061
    assert m["load"]["before"] == pytest.approx(m["avg_latency"]["before"] * 300 / 1800)

    control = rows[query_id(CONTROL)]
    assert (control["status"], control["verdict"]) == ("unchanged", "unchanged")
    assert not any(v["significant"] for v in control["metrics"].values())
    assert (rows[query_id(NEW)]["status"], rows[query_id(NEW)]["verdict"]) == ("new", "new")
    assert rows[query_id(NEW)]["metrics"]["load"]["before"] == 0
    assert (rows[query_id(GONE)]["status"], rows[query_id(GONE)]["verdict"]) == ("gone", "gone")


def test_an_annotation_for_all_instances_sees_every_server(fed: TestClient) -> None:
    created = fed.post("/api/v1/annotations", json={"text": "deploy", "time": T.isoformat()})
    body = impact(fed, created.json()["id"])
    rows = {r["query_id"]: r for r in body["queries"]}
    other = rows[query_id(OTHER_SERVER)]
    assert other["instance"] == "db2"
    assert (other["status"], other["verdict"]) == ("changed", "regressed")
    assert other["metrics"]["avg_latency"]["change_pct"] > 10
    # Its load grew by more than the scan's fell: it comes first.
    assert body["queries"][0]["query_id"] == query_id(OTHER_SERVER)


def test_ranged_annotation_compares_before_its_start_and_after_its_end(fed: TestClient) -> None:
    # The change ran from T-10m to T+10m: the windows are 20 minutes before and after it.
    created = fed.post(
        "/api/v1/annotations",
        json={
            "text": "pt-online-schema-change",
            "instances": ["db1"],
            "time": (T - timedelta(minutes=10)).isoformat(),
            "end_time": (T + timedelta(minutes=10)).isoformat(),
        },
    ).json()
    body = impact(fed, created["id"], window="20m")
    assert body["window_seconds"] == 1200
    assert body["before"]["to"] == iso(T - timedelta(minutes=10))
    assert body["after"]["from"] == iso(T + timedelta(minutes=10))
    scan = next(r for r in body["queries"] if r["query_id"] == query_id(SCAN))
    assert scan["metrics"]["count"]["before"] == scan["metrics"]["count"]["after"] == 200
    assert scan["verdict"] == "improved"


def test_one_hour_window_counts_idle_minutes_only_after_a_query_was_first_seen(
    fed: TestClient,
) -> None:
    # The workload starts 30 minutes before T: the first half of the hour before is missing
    # (not monitored), not zeros; the idle half hour after T is observed, so it counts.
    created = fed.post(
        "/api/v1/annotations",
        json={"text": "add index", "instances": ["db1"], "time": T.isoformat()},
    ).json()
    body = impact(fed, created["id"], window="1h")
    assert body["window_seconds"] == 3600
    control = next(r for r in body["queries"] if r["query_id"] == query_id(CONTROL))
    m = control["metrics"]
    # 300 calls in the 30 minutes observed: 600 over the hour at that rate.
    assert (m["count"]["before"], m["count"]["after"]) == (600, 300)
    assert m["load"]["before"] == pytest.approx(m["avg_latency"]["before"] * 300 / 1800)
    assert m["load"]["after"] == pytest.approx(m["avg_latency"]["after"] * 300 / 3600)
    # Fewer calls at the same cost per call: context, not a verdict.
    assert (control["status"], control["verdict"]) == ("changed", "unchanged")


def test_regressions_are_announced_to_subscribed_channels_once(
    fed: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    created = fed.post(
        "/api/v1/annotations", json={"text": "deploy v42", "time": T.isoformat()}
    ).json()
    channel = fed.post(
        "/api/v1/channels",
        json={"name": "ops", "type": "webhook", "url": "http://127.0.0.1:9/hook",
              "events": ["annotation_impact"]},
    )  # fmt: skip
    assert channel.status_code == 201, channel.text
    # The 30-minute window after the change ended 1.5 hours ago: within the day it is announced.
    announce = Settings(**{**settings.model_dump(), "annotation_announce_window": "30m"})
    with session_scope(session_factory) as session:
        first = announce_impacts(session=session, settings=announce, now=datetime.now(UTC))
    with session_scope(session_factory) as session:
        again = announce_impacts(session=session, settings=announce, now=datetime.now(UTC))
    assert (first, again) == ([created["id"]], [created["id"]])
    with session_scope(session_factory) as session:
        deliveries = session.scalars(select(Delivery)).all()
        assert len(deliveries) == 1  # the same regressions are not queued twice
        payload = deliveries[0].payload
    # Only db2's query got slower; db1's index made its scan faster (not a regression).
    assert [r["query_id"] for r in payload["regressions"]] == [query_id(OTHER_SERVER)]
    assert payload["regressions"][0]["instance"] == "db2"
    # The chat line names the per-call metric that decided, with the load as context.
    assert payload["regressions"][0]["metric"] == "avg_latency"
    assert payload["regressions"][0]["change"] > 10
    assert payload["regressions"][0]["load_after"] > payload["regressions"][0]["load_before"]
    assert payload["text"] == "deploy v42"


def test_an_annotation_younger_than_the_sustained_window_is_not_announced(
    fed: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    fed.post("/api/v1/annotations", json={"text": "deploy v42", "time": T.isoformat()})
    # 10 minutes after T: the window after holds fewer than QUANTA_REGRESSION_MIN_MINUTES (15).
    with session_scope(session_factory) as session:
        assert (
            announce_impacts(session=session, settings=settings, now=T + timedelta(minutes=10))
            == []
        )


def test_improvements_are_announced_too(
    fed: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    # Issue 44: an ALTER that made the top query 99% faster reached no chat.
    created = fed.post(
        "/api/v1/annotations",
        json={"text": "ALTER TABLE orders ADD INDEX", "instances": ["db1"], "time": T.isoformat()},
    ).json()
    channel = fed.post(
        "/api/v1/channels",
        json={"name": "ops", "type": "webhook", "url": "http://127.0.0.1:9/hook",
              "events": ["annotation_impact"]},
    )  # fmt: skip
    assert channel.status_code == 201, channel.text
    # 20 minutes after the change: announced then, with the 20-minute windows it really used.
    with session_scope(session_factory) as session:
        now = T + timedelta(minutes=20, seconds=30)
        assert announce_impacts(session=session, settings=settings, now=now) == [created["id"]]
        assert announce_impacts(session=session, settings=settings, now=now + timedelta(
            minutes=15)) == [created["id"]]  # fmt: skip
    with session_scope(session_factory) as session:
        [delivery] = session.scalars(select(Delivery)).all()  # once, whatever the checks
        payload = delivery.payload
    assert payload["regressions"] == []
    assert payload["window_seconds"] == 20 * 60
    improved = {r["query_id"]: r for r in payload["improvements"]}
    assert set(improved) == {query_id(SCAN)}
    assert improved[query_id(SCAN)]["metric"] == "avg_latency"
    assert improved[query_id(SCAN)]["change"] < -0.9


def test_an_impact_of_three_minutes_says_not_enough_data_instead_of_a_verdict(
    fed: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    # Issue 44: asked 3 minutes after the change, the impact said "unchanged" for a 99.5% drop.
    created = fed.post(
        "/api/v1/annotations",
        json={"text": "add index", "instances": ["db1"], "time": T.isoformat()},
    ).json()
    with session_scope(session_factory) as session:
        body = annotation_impact(
            session=session,
            settings=settings,
            annotation_id=created["id"],
            window="1h",
            now=T + timedelta(minutes=3, seconds=30),
        )
    assert body.window_seconds == 180
    assert body.note == "not enough data yet (3 minutes; 15 needed)"
    scan = next(r for r in body.queries if r.query_id == query_id(SCAN))
    assert (scan.status, scan.verdict) == ("not_enough_data", "not_enough_data")
    assert scan.metrics["avg_latency"].change_pct < -0.9  # the figures are there, no verdict
    # New and gone need no test of significance: they are said at once.
    verdicts = {r.query_id: r.verdict for r in body.queries}
    assert (verdicts[query_id(NEW)], verdicts[query_id(GONE)]) == ("new", "gone")
    with session_scope(session_factory) as session:
        later = annotation_impact(
            session=session,
            settings=settings,
            annotation_id=created["id"],
            window="1h",
            now=T + timedelta(minutes=15, seconds=30),
        )
    assert later.note is None
    assert next(r for r in later.queries if r.query_id == query_id(SCAN)).verdict == "improved"
