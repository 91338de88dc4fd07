"""Agent health: what data batches and the agents' status reports say per instance and
source, through the real ingest endpoint (old agents' batches keep working)."""

import gzip
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.agents.models import AgentSource
from quanta.agents.service import source_state
from quanta.ingest.models import IngestBatch
from quanta.ingest.service import agent_version
from tests.backend.test_access_login import browser, make_user, sign_in

NOW = datetime.now(UTC).replace(microsecond=0)
STATUS = {
    "version": "0.1.0",
    "host": "db1.example",
    "interval": 60,
    "read_at": (NOW - timedelta(seconds=5)).isoformat(),
    "read_failing": False,
    "spooled": 3,
    "spooled_bytes": 4096,
    "dropped": 1,
    "rejected": 0,
    "last_error": "server unreachable (ConnectError); retry 1 in 0.5s",
    "last_error_at": (NOW - timedelta(minutes=2)).isoformat(),
}


def send(client: TestClient, body: dict[str, Any], user_agent: str | None = None) -> Any:
    headers = {"Content-Encoding": "gzip"}
    if user_agent:
        headers["User-Agent"] = user_agent
    data = gzip.compress(json.dumps({"instance": "db1", **body}).encode())
    return client.post("/api/v1/ingest", content=data, headers=headers)


def sources(client: TestClient) -> dict[str, dict[str, Any]]:
    response = client.get("/api/v1/agents")
    assert response.status_code == 200, response.text
    return {row["source"]: row for row in response.json()}


def test_a_status_report_is_kept_and_nothing_is_stored_as_a_batch(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    report = {"batch_id": "status-1", "source": "perfschema", "agent": STATUS}
    response = send(client, report)
    assert response.status_code == 202, response.text
    assert (response.json()["status"], response.json()["events"]) == ("done", 0)
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(IngestBatch)) == 0
    shown = sources(client)["perfschema"]
    assert shown["state"] == "reporting"
    assert (shown["agent_version"], shown["agent_host"]) == ("0.1.0", "db1.example")
    assert (shown["spooled"], shown["spooled_bytes"], shown["dropped"]) == (3, 4096, 1)
    assert shown["last_error"] == STATUS["last_error"]
    assert shown["last_batch_at"] is None  # a report is not a batch of data
    assert shown["lag_seconds"] is None
    assert shown["instance"] == "db1"


def test_a_data_batch_gives_the_last_batch_its_lag_and_the_agent_version(
    client: TestClient,
) -> None:
    # An agent that sends no status (before they existed): its User-Agent names the version.
    newest = datetime.now(UTC) - timedelta(minutes=5)
    events = [
        {"ts": (newest - timedelta(minutes=3)).isoformat(), "query": "SELECT 1", "query_time": 0.1},
        {"ts": newest.isoformat(), "query": "SELECT 2", "query_time": 0.1},
    ]
    response = send(client, {"batch_id": "b1", "events": events}, user_agent="quanta-agent/0.0.9")
    assert response.status_code == 202, response.text
    shown = sources(client)["slowlog"]
    assert shown["state"] == "reporting"
    assert shown["last_batch_rows"] == 2
    assert shown["agent_version"] == "0.0.9"
    assert shown["agent_host"] is None
    # From the newest event (5 minutes old) to the batch's arrival.
    assert 300 <= shown["lag_seconds"] < 330
    last_batch = datetime.fromisoformat(shown["last_batch_at"])
    assert abs((last_batch - datetime.now(UTC)).total_seconds()) < 30


def test_the_status_is_told_apart_per_source_and_a_newer_agents_fields_are_ignored(
    client: TestClient,
) -> None:
    failing = {**STATUS, "read_failing": True, "a_field_of_tomorrow": 1}
    assert send(client, {"batch_id": "s1", "source": "stats", "agent": failing}).status_code == 202
    assert send(client, {"batch_id": "s2", "agent": STATUS}).status_code == 202
    shown = sources(client)
    assert (shown["stats"]["state"], shown["slowlog"]["state"]) == ("failing", "reporting")


def test_a_status_report_with_a_bad_value_is_refused_with_the_field_named(
    client: TestClient,
) -> None:
    response = send(client, {"batch_id": "s1", "agent": {**STATUS, "spooled": -1}})
    assert response.status_code == 422
    assert "agent.spooled" in response.json()["detail"]


def test_the_agents_errors_are_for_admins(client: TestClient) -> None:
    assert send(client, {"batch_id": "s1", "agent": STATUS}).status_code == 202
    make_user(client, "vic", "viewer")
    tab = browser(client)
    sign_in(tab, "vic")
    (row,) = tab.get("/api/v1/agents").json()
    assert (row["last_error"], row["spooled"]) == (None, 3)
    assert row["last_error_at"] == STATUS["last_error_at"].replace("+00:00", "Z")


@pytest.mark.parametrize(
    ("silent", "interval", "failing", "state"),
    [
        (timedelta(seconds=10), 60.0, False, "reporting"),
        (timedelta(seconds=10), 60.0, True, "failing"),
        (timedelta(seconds=301), None, False, "stopped"),  # an old agent's batches stopped
        (timedelta(seconds=301), 60.0, True, "stopped"),  # stopped wins over failing
        # Reports every 10 minutes: silent for 25 is fine, three missed reports are not.
        (timedelta(minutes=25), 600.0, False, "reporting"),
        (timedelta(minutes=31), 600.0, False, "stopped"),
    ],
)
def test_a_source_is_stopped_after_the_silence_or_three_missed_reports(
    silent: timedelta, interval: float | None, failing: bool, state: str
) -> None:
    row = AgentSource(
        instance_id=1,
        source="slowlog",
        last_seen_at=NOW - silent,
        report_interval=interval,
        read_failing=failing,
    )
    assert source_state(row, now=NOW, silence_seconds=300) == state


def test_the_agent_version_comes_only_from_the_agents_user_agent() -> None:
    assert agent_version("quanta-agent/0.4.0") == "0.4.0"
    assert agent_version("quanta-agent/0.4.0 (linux)") == "0.4.0"
    assert agent_version("python-httpx/0.27") is None
    assert agent_version(None) is None
