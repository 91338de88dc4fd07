"""Instance names, wherever they come in (ingest, instances, annotations, channels): trimmed,
non-empty, a sane charset and length, or a 422 that names the field."""

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.db import session_scope
from quanta.instances.models import Instance

ACCEPTED = [
    ("db1", "db1"),
    ("  db-1.example.com:3306 ", "db-1.example.com:3306"),
    ("prod db1", "prod db1"),
    ("eu/replica_2@dc+1", "eu/replica_2@dc+1"),
    ("bäckerei-db", "bäckerei-db"),
    ("x" * 100, "x" * 100),
]
REFUSED = [
    "",
    "   ",
    "\t\n",
    "x" * 101,
    "db1\x00",
    "db\n1",
    "two  spaces",
    "[click](http://evil)",
    "<script>",
    "db1;drop",
    "'db1'",
    "@channel!",
]


def ingest(client: TestClient, name: str) -> Any:
    body = {"batch_id": "b1", "instance": name, "events": []}
    return client.post("/api/v1/ingest", json=body)


@pytest.mark.parametrize(("name", "stored"), ACCEPTED)
def test_ingest_trims_and_accepts(
    client: TestClient, session_factory: sessionmaker[Session], name: str, stored: str
) -> None:
    assert ingest(client, name).status_code == 202
    with session_scope(session_factory) as session:
        assert session.scalars(select(Instance.name)).all() == [stored]


def error_fields(response: Any) -> list[list[Any]]:
    return [error["loc"] for error in response.json()["detail"]]


@pytest.mark.parametrize("name", REFUSED)
def test_ingest_refuses(
    client: TestClient, session_factory: sessionmaker[Session], name: str
) -> None:
    response = ingest(client, name)
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith("Invalid batch: instance: ")
    with session_scope(session_factory) as session:
        assert session.scalars(select(Instance.name)).all() == []


@pytest.mark.parametrize("name", ["   ", "[click](http://evil)", "db\n1"])
def test_every_name_field_refuses(client: TestClient, name: str) -> None:
    created = client.post("/api/v1/instances", json={"name": name})
    assert (created.status_code, error_fields(created)) == (422, [["body", "name"]])
    annotated = client.post("/api/v1/annotations", json={"text": "deploy", "instances": [name]})
    assert (annotated.status_code, error_fields(annotated)) == (422, [["body", "instances", 0]])
    channel = {"name": "ops", "type": "webhook", "url": "https://hooks.test/x", "instances": [name]}
    routed = client.post("/api/v1/channels", json=channel)
    assert (routed.status_code, error_fields(routed)) == (422, [["body", "instances", 0]])
