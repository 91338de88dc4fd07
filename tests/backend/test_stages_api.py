"""Stage profiles through the ingest path and the API: stored per minute, hour and day so a
profile over any range is exact for what was sampled, ranked with its lost time and waits,
empty answers that say why, and queries ranked by a stage's share (both stores)."""

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.stages.models import StageTimesHour, StageTimesMinute
from tests.helpers import process_all

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
# Three whole hours back: the middle one is read from hour rows by a range around it.
HOUR = NOW.replace(minute=0) - timedelta(hours=3)
SORT = "select * from orders where customer_id=? order by created_at desc"
SCAN = "select count(*) from orders where note like ?"
OWN = "select thread_id, event_id from performance_schema.events_statements_history_long"


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Both stores: PostgreSQL merges the hour and day rows in SQL."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"stages_{uuid.uuid4().hex[:12]}")
    return Settings(env="test", data_dir=tmp_path / "data", database_url=url, redis_url=None)


def sample(
    text: str,
    minute: datetime,
    sampled: int,
    total: int,
    stages: dict[str, float],
    lost: float,
    waits: dict[tuple[str, str], float] | None = None,
) -> dict[str, Any]:
    return {
        "fingerprint": text,
        "bucket_start": minute.isoformat(),
        "executions_sampled": sampled,
        "executions_total": total,
        "response_s": sum(stages.values()) + lost,
        "waits_sampled": sampled if waits else 0,
        "stages": [{"stage": k, "time_s": v, "calls": sampled} for k, v in stages.items()],
        "waits": [
            {"stage": s, "event": e, "time_s": t, "count": sampled}
            for (s, e), t in (waits or {}).items()
        ],
    }


def post(client: TestClient, factory: sessionmaker[Session], **body: Any) -> None:
    response = client.post(
        "/api/v1/ingest",
        json={"batch_id": uuid.uuid4().hex, "instance": "db1", "source": "perfschema", **body},
    )
    assert response.status_code == 202, response.text
    process_all(factory)


def stages(client: TestClient, text: str, start: datetime, end: datetime, **params: Any) -> Any:
    response = client.get(
        f"/api/v1/queries/{query_id(fingerprint(text))}/stages",
        params={"instance": "db1", "from": start.isoformat(), "to": end.isoformat(), **params},
    )
    assert response.status_code == 200, response.text
    return response.json()


def digest(text: str, minute: datetime, count: int) -> dict[str, Any]:
    """A digest delta, so the query class is in the catalog as the agent's batch makes it."""
    return {
        "schema_name": "shop",
        "digest": uuid.uuid4().hex,
        "digest_text": text,
        "interval_start": minute.isoformat(),
        "interval_end": (minute + timedelta(seconds=59)).isoformat(),
        "count_star": count,
        "sum_timer_wait": 0.5,
    }


COLLECTED = {"stages": True, "waits": True}


def test_a_profile_over_any_range_is_exact_for_what_was_sampled(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    minutes = [HOUR + timedelta(hours=1, minutes=m) for m in (5, 6, 40)]
    waits = {("Creating sort index", "wait/io/table/sql/handler"): 0.02}
    post(
        client,
        session_factory,
        digests=[digest(SORT, minutes[0], 40)],
        stage_samples=[
            sample(SORT, minutes[0], 3, 10, {"Creating sort index": 0.09, "init": 0.003}, 0.006,
                   waits),
            sample(SORT, minutes[1], 2, 10, {"Creating sort index": 0.05, "Sending data": 0.01},
                   0.002, waits),
        ],
        stage_collection=COLLECTED,
    )  # fmt: skip
    # Another poll of the same minute and a later one: rows add up.
    post(
        client,
        session_factory,
        stage_samples=[
            sample(SORT, minutes[1], 1, 5, {"Creating sort index": 0.04}, 0.001),
            sample(SORT, minutes[2], 4, 15, {"Creating sort index": 0.2, "init": 0.001}, 0.004),
        ],
    )
    # The hour in the middle of a longer range is read from hour rows, a range inside the
    # hour from minute rows: the same sums.
    wide = stages(client, SORT, HOUR, NOW)
    narrow = stages(client, SORT, minutes[0], minutes[2] + timedelta(minutes=1))
    for answer in (wide, narrow):
        assert answer["executions_sampled"] == 10
        assert answer["executions_total"] == 40
        assert answer["response_s"] == pytest.approx(0.099 + 0.062 + 0.041 + 0.205)
        assert [s["stage"] for s in answer["stages"]] == [
            "Creating sort index",
            "Sending data",
            "init",
        ]
        top = answer["stages"][0]
        assert top["time_s"] == pytest.approx(0.38)
        assert top["calls"] == 10
        assert top["per_call_s"] == pytest.approx(0.038)
        assert top["share"] == pytest.approx(0.38 / answer["response_s"])
        assert answer["lost_time_s"] == pytest.approx(0.013)
        assert sum(s["time_s"] for s in answer["stages"]) + answer["lost_time_s"] == pytest.approx(
            answer["response_s"]
        )
        assert answer["waits_sampled"] == 5
        assert answer["waits"] == [
            {"stage": "Creating sort index", "event": "wait/io/table/sql/handler",
             "time_s": pytest.approx(0.04), "count": 5}
        ]  # fmt: skip
        assert answer["reason"] is None
        assert answer["collection"]["stages"] is True
    with session_scope(session_factory) as session:
        # The minute of two polls has two rows (appended); its hour one.
        minute_rows = session.scalar(
            select(func.count())
            .select_from(StageTimesMinute)
            .where(StageTimesMinute.bucket_start == minutes[1], StageTimesMinute.wait_event == "")
        )
        hour_rows = session.scalar(
            select(func.count()).select_from(StageTimesHour).where(StageTimesHour.wait_event == "")
        )
    assert minute_rows == 3  # two stages of the first poll, one of the second
    assert hour_rows == 3  # Creating sort index, init, Sending data


def test_an_empty_profile_says_why(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    minute = NOW - timedelta(minutes=30)
    post(client, session_factory, digests=[digest(SCAN, minute, 7)])
    answer = stages(client, SCAN, NOW - timedelta(hours=1), NOW)
    assert answer["executions_sampled"] == 0
    assert answer["collection"] is None
    assert "does not poll performance_schema" in answer["reason"]

    post(client, session_factory, stage_collection={"stages": False, "waits": False})
    answer = stages(client, SCAN, NOW - timedelta(hours=1), NOW)
    assert answer["reason"].startswith(
        "The stage consumers are off on db1: turn them on with UPDATE"
    )

    post(
        client,
        session_factory,
        stage_samples=[sample(SCAN, minute, 0, 700, {}, 0.0)],
        stage_collection=COLLECTED,
    )
    answer = stages(client, SCAN, NOW - timedelta(hours=1), NOW)
    assert answer["executions_total"] == 700
    assert answer["reason"].startswith("None of the 700 executions in the range was sampled")
    # Outside the range: nothing sampled, nothing counted.
    answer = stages(client, SCAN, NOW - timedelta(hours=5), NOW - timedelta(hours=4))
    assert answer["executions_total"] == 0
    assert answer["reason"] == "No execution of this query was sampled in the range."


def test_bad_requests_are_4xx(client: TestClient, session_factory: sessionmaker[Session]) -> None:
    post(client, session_factory, digests=[digest(SCAN, NOW - timedelta(minutes=5), 1)])
    qid = query_id(fingerprint(SCAN))
    assert client.get(f"/api/v1/queries/{qid}/stages").status_code == 422  # no instance
    unknown = client.get("/api/v1/queries/0000000000000000/stages", params={"instance": "db1"})
    assert unknown.status_code == 404
    assert "No query" in unknown.json()["detail"]
    assert (
        client.get(f"/api/v1/queries/{qid}/stages", params={"instance": "nope"}).status_code == 404
    )
    bad = client.get(f"/api/v1/queries/{qid}/stages", params={"instance": "db1", "from": "soon"})
    assert bad.status_code == 400
    assert client.get("/api/v1/stages/queries", params={"min_share": 2}).status_code == 422
    # The overview asks for as many rows as its largest page (the e2e caught a 422 at 1000).
    assert client.get("/api/v1/stages/queries", params={"limit": 1000}).status_code == 200
    assert client.get("/api/v1/stages/queries", params={"limit": 1001}).status_code == 422


def test_queries_ranked_by_a_stages_share(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    minute = NOW - timedelta(minutes=20)
    post(
        client,
        session_factory,
        digests=[digest(SORT, minute, 5), digest(SCAN, minute, 9), digest(OWN, minute, 3)],
        stage_samples=[
            sample(SORT, minute, 5, 5, {"Creating sort index": 0.5, "Sending data": 0.1}, 0.0),
            sample(SCAN, minute, 9, 9, {"Sending data": 0.27, "init": 0.03}, 0.0),
            sample(OWN, minute, 3, 3, {"Sending data": 0.3}, 0.0),
        ],
        stage_collection=COLLECTED,
    )
    window = {"from": (NOW - timedelta(hours=1)).isoformat(), "to": NOW.isoformat()}
    answer = client.get("/api/v1/stages/queries", params={**window, "stage": "Sending data"}).json()
    # Quanta's own performance_schema reads are left out of the menu and the ranking.
    assert [(s["stage"], round(s["share"], 4)) for s in answer["stages"]] == [
        ("Creating sort index", round(0.5 / 0.9, 4)),
        ("Sending data", round(0.37 / 0.9, 4)),
        ("init", round(0.03 / 0.9, 4)),
    ]
    rows = [(r["fingerprint"], round(r["share"], 4)) for r in answer["rows"]]
    assert rows == [(SCAN, 0.9), (SORT, round(0.1 / 0.6, 4))]
    assert answer["rows"][0]["per_execution_s"] == pytest.approx(0.03)
    filtered = client.get(
        "/api/v1/stages/queries", params={**window, "stage": "Sending data", "min_share": 0.5}
    ).json()
    assert [r["fingerprint"] for r in filtered["rows"]] == [SCAN]
    by_time = client.get(
        "/api/v1/stages/queries",
        params={**window, "stage": "Sending data", "sort": "time", "instance": "db1"},
    ).json()
    assert [r["fingerprint"] for r in by_time["rows"]] == [SCAN, SORT]
    assert (
        client.get("/api/v1/stages/queries", params={**window, "instance": "nope"}).status_code
        == 404
    )
