"""Passwords given by position (issue 39) are neither stored nor served: the statements of
the review go through the ingest API and the batch service, and a `read` token reads their
examples; an example stored before redaction knew a form is redacted as it is read."""

import gzip
import json
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.queries.models import QueryExample, QueryExampleMinute
from tests.helpers import roll_up_all

STATEMENTS = (
    "INSERT INTO users (login, password) VALUES ('alice', 'hunter2-positional')",
    "SELECT * FROM users WHERE login = 'alice' AND password = SHA2('hunter2-sha2', 256)",
    "UPDATE users SET password = MD5('hunter2-md5') WHERE id = 7",
)
REDACTED = (
    "INSERT INTO users (login, password) VALUES ('alice', '<redacted>')",
    "SELECT * FROM users WHERE login = 'alice' AND password = SHA2('<redacted>', '<redacted>')",
    "UPDATE users SET password = MD5('<redacted>') WHERE id = 7",
)
NOW = datetime.now(UTC).replace(microsecond=0)
WINDOW = {
    "from": (NOW - timedelta(hours=1)).isoformat(),
    "to": (NOW + timedelta(minutes=5)).isoformat(),
}


def _ingest(client: TestClient, session_factory: sessionmaker[Session]) -> None:
    events = [
        {"ts": (NOW - timedelta(minutes=n)).isoformat(), "query": sql, "query_time": 0.5,
         "db": "shop", "user": "app"}
        for sql in STATEMENTS
        for n in range(3)
    ]  # fmt: skip
    body = json.dumps({"batch_id": "b1", "instance": "db1", "events": events}).encode()
    response = client.post(
        "/api/v1/ingest", content=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )
    assert response.status_code == 202, response.text
    with session_scope(session_factory) as session:
        (batch_pk,) = session.scalars(select(IngestBatch.id))
        ingest.process_batch(session=session, settings=Settings(env="test"), batch_pk=batch_pk)
    roll_up_all(session_factory)  # the hour and day examples, as beat writes them


def _reader(client: TestClient) -> TestClient:
    made = client.post("/api/v1/tokens", json={"name": "reader", "scopes": ["read"]})
    assert made.status_code == 201, made.text
    return TestClient(client.app, headers={"Authorization": f"Bearer {made.json()['token']}"})


def _served(reader: TestClient, sql: str) -> list[str]:
    qid = query_id(fingerprint(sql))
    response = reader.get(f"/api/v1/queries/{qid}/examples", params=WINDOW)
    assert response.status_code == 200, response.text
    return [example["text"] for example in response.json()["examples"]]


def test_positional_passwords_are_neither_stored_nor_served(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    _ingest(client, session_factory)
    with session_scope(session_factory) as session:
        stored = [
            text
            for model in (QueryExampleMinute, QueryExample)
            for row in session.scalars(select(model))
            for text in (row.slowest_text, row.sampled_text)
        ]
    # Slowest and sampled of 3 minutes, at least one hour and one day, for each statement.
    assert len(stored) >= 2 * 5 * len(STATEMENTS)
    assert sorted(set(stored)) == sorted(REDACTED)
    reader = _reader(client)
    for sql, redacted in zip(STATEMENTS, REDACTED, strict=True):
        assert set(_served(reader, sql)) == {redacted}


def test_an_example_stored_before_redaction_is_redacted_as_read(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    _ingest(client, session_factory)
    with session_scope(session_factory) as session:  # as an older version stored it
        for model in (QueryExampleMinute, QueryExample):
            updated = session.execute(
                update(model)
                .where(model.query_id == query_id(fingerprint(STATEMENTS[0])))
                .values(slowest_text=STATEMENTS[0], sampled_text=STATEMENTS[0])
            )
            assert updated.rowcount > 0, model.__tablename__
    assert set(_served(_reader(client), STATEMENTS[0])) == {REDACTED[0]}
