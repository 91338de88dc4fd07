"""Schema statements seen in ingest re-read snapshots only when they succeeded, only tables
already snapshotted, and at most once per table per QUANTA_SNAPSHOT_REFRESH_MIN_SECONDS.

The issue's figure: 5 batches naming 62 tables made Quanta send 970 statements to the
primary. Here the same 5 batches queue one re-read of the 62 tables, as the broker shows.
"""

import gzip
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.tasks import REFRESH_TABLES_TASK, celery_client
from quanta.instances.models import Instance
from quanta.tables import service as tables
from quanta.tables.models import TableSnapshot
from tests.fixtures.servers import free_port
from tests.helpers import process_all

NOW = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=2)
TAKEN = NOW - timedelta(days=1)
DOCUMENT: dict[str, Any] = {"engine": "InnoDB", "columns": {"id": {"type": "int"}}}
TABLES = [f"t{n:02d}" for n in range(62)]


def event(query: str, *, errors: int | None, minute: int = 0) -> dict[str, Any]:
    ts = (NOW + timedelta(minutes=minute)).isoformat()
    found: dict[str, Any] = {"ts": ts, "query": query, "query_time": 0.5, "db": "shop"}
    return found | ({"errors": errors} if errors is not None else {})


def ingest(client: TestClient, batch_id: str, *events: dict[str, Any]) -> None:
    body = {"batch_id": batch_id, "instance": "db1", "events": list(events)}
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(json.dumps(body).encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text


@pytest.fixture
def db1(client: TestClient, session_factory: sessionmaker[Session]) -> int:
    """Instance db1 with a DSN (nothing listens there) and snapshots of shop.t00..t61."""
    ingest(client, "seed", event("SELECT 1", errors=0))
    instance = client.get("/api/v1/instances").json()[0]
    dsn = f"mysql://quanta_ro:pw@127.0.0.1:{free_port()}/shop"
    assert client.patch(f"/api/v1/instances/{instance['id']}", json={"dsn": dsn}).status_code == 200
    with session_scope(session_factory) as session:
        for table in TABLES:
            session.add(
                TableSnapshot(
                    instance_id=instance["id"], table_name=f"shop.{table}", taken_at=TAKEN,
                    changed_at=TAKEN, server_flavor="mariadb", server_version="10.11",
                    content_hash="x", document=DOCUMENT,
                )
            )  # fmt: skip
    return int(instance["id"])


def queued_refreshes(settings: Settings) -> list[tuple[list[Any], str | None]]:
    """Every refresh task on the analysis queue: (args, eta), taken off it."""
    found = []
    with celery_client(settings).connection_for_read() as conn:
        while (message := conn.default_channel.basic_get("analysis", no_ack=True)) is not None:
            if message.headers["task"] == REFRESH_TABLES_TASK:
                found.append((json.loads(message.body)[0], message.headers.get("eta")))
    return found


def due_times(factory: sessionmaker[Session]) -> dict[str, datetime | None]:
    with session_scope(factory) as session:
        rows = session.execute(select(TableSnapshot.table_name, TableSnapshot.refresh_due_at))
        return {str(name): due for name, due in rows}


def test_five_batches_naming_62_tables_queue_one_refresh(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings, db1: int
) -> None:
    for batch in range(5):
        ingest(
            client,
            f"ddl-{batch}",
            *(event(f"ALTER TABLE shop.{t} ADD COLUMN c{batch} INT", errors=0) for t in TABLES),
        )
    process_all(session_factory, settings)
    queued = queued_refreshes(settings)
    assert queued == [([db1, [f"shop.{t}" for t in TABLES]], None)]  # due at once, one task
    assert set(due_times(session_factory).values()) != {None}


def test_a_failed_schema_statement_and_a_table_never_read_queue_nothing(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings, db1: int
) -> None:
    ingest(
        client,
        "refused",
        # Every execution failed (a privilege error, a lock wait timeout): nothing changed.
        event("ALTER TABLE shop.t01 ADD COLUMN x INT", errors=1),
        event("ALTER TABLE shop.t01 ADD COLUMN x INT", errors=1, minute=1),
        # It succeeded, but Quanta never read hr.salaries: a log line does not make it read.
        event("ALTER TABLE hr.salaries ADD INDEX (amount)", errors=0),
        event("CREATE INDEX i ON secret_db.t (a)", errors=None),
    )
    process_all(session_factory, settings)
    assert queued_refreshes(settings) == []
    assert set(due_times(session_factory).values()) == {None}
    assert set(due_times(session_factory)) == {f"shop.{t}" for t in TABLES}


def test_where_the_error_number_is_unknown_the_statement_counts_as_succeeded(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings, db1: int
) -> None:
    # MariaDB's slow log has no Errno; one failure of two is still a success.
    ingest(
        client,
        "mixed",
        event("ALTER TABLE shop.t02 ADD COLUMN x INT", errors=None),
        event("ALTER TABLE shop.t03 ADD COLUMN y INT", errors=1),
        event("ALTER TABLE shop.t03 ADD COLUMN y INT", errors=0, minute=1),
    )
    process_all(session_factory, settings)
    [(args, eta)] = queued_refreshes(settings)
    assert (args, eta) == ([db1, ["shop.t02", "shop.t03"]], None)


def test_a_change_soon_after_a_refresh_waits_for_the_end_of_the_window(
    session_factory: sessionmaker[Session], settings: Settings, db1: int
) -> None:
    window = timedelta(seconds=settings.snapshot_refresh_min_seconds)
    assert window == timedelta(seconds=300)  # QUANTA_SNAPSHOT_REFRESH_MIN_SECONDS' default
    with session_scope(session_factory) as session:
        instance = session.get_one(Instance, db1)
        snapshot = session.scalars(
            select(TableSnapshot).where(TableSnapshot.table_name == "shop.t04")
        ).one()
        snapshot.refresh_due_at = NOW  # a re-read asked for by ingest, done 10 s later
        snapshot.taken_at = NOW + timedelta(seconds=10)
        first = tables.refresh_soon(
            session=session, settings=settings, instance=instance, tables=["shop.t04"],
            now=NOW + timedelta(minutes=1),
        )  # fmt: skip
        again = tables.refresh_soon(
            session=session, settings=settings, instance=instance, tables=["shop.t04"],
            now=NOW + timedelta(minutes=2),
        )  # fmt: skip
    assert first == {"shop.t04": NOW + window}  # not dropped: due when the window ends
    assert again == {}  # one is queued already
    [(args, eta)] = queued_refreshes(settings)
    assert args == [db1, ["shop.t04"]]
    assert eta is not None
    # Celery's eta: the countdown from "now" (the wall clock here) of 4 minutes.
    assert timedelta(minutes=3) < datetime.fromisoformat(eta) - datetime.now(UTC)
    assert datetime.fromisoformat(eta) - datetime.now(UTC) <= timedelta(minutes=4)


def test_a_snapshot_just_read_by_the_advisor_does_not_delay_the_first_refresh(
    session_factory: sessionmaker[Session], settings: Settings, db1: int
) -> None:
    """The suggested index is added right after the advice read the table: it is read again
    at once (applied in seconds), not five minutes later."""
    with session_scope(session_factory) as session:
        instance = session.get_one(Instance, db1)
        snapshot = session.scalars(
            select(TableSnapshot).where(TableSnapshot.table_name == "shop.t06")
        ).one()
        snapshot.taken_at = NOW
        queued = tables.refresh_soon(
            session=session, settings=settings, instance=instance, tables=["shop.t06"],
            now=NOW + timedelta(seconds=20),
        )  # fmt: skip
    assert queued == {"shop.t06": NOW + timedelta(seconds=20)}


def test_a_refresh_queued_but_lost_is_queued_again_after_a_window(
    session_factory: sessionmaker[Session], settings: Settings, db1: int
) -> None:
    window = timedelta(seconds=settings.snapshot_refresh_min_seconds)
    with session_scope(session_factory) as session:
        instance = session.get_one(Instance, db1)
        lost = NOW - 2 * window  # queued, due, and the snapshot was never read after it
        snapshot = session.scalars(
            select(TableSnapshot).where(TableSnapshot.table_name == "shop.t05")
        ).one()
        snapshot.refresh_due_at = lost
        queued = tables.refresh_soon(
            session=session, settings=settings, instance=instance, tables=["shop.t05"], now=NOW
        )
    assert queued == {"shop.t05": NOW}
