"""Annotations over HTTP: create, list with filters, delete with permissions, bad input;
on SQLite and on PostgreSQL."""

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.annotations import service
from quanta.annotations.schemas import AnnotationIn
from quanta.auth.models import ApiToken
from quanta.auth.service import Principal
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.security import hash_token
from quanta.instances.service import get_or_create_instance

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
URL = "/api/v1/annotations"
_databases = itertools.count()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The store of the `client` fixture: SQLite, and a fresh database on PostgreSQL."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"annotations_api_{next(_databases)}")
    return Settings(env="test", data_dir=tmp_path / "data", database_url=url)


def add_token(factory: sessionmaker[Session], name: str, *scopes: str) -> dict[str, str]:
    """Register a token; returns the headers that send it."""
    secret = f"qnt_test_{name}"
    with session_scope(factory) as session:
        session.add(ApiToken(name=name, token_hash=hash_token(secret), scopes=list(scopes)))
    return {"Authorization": f"Bearer {secret}"}


def add_instances(factory: sessionmaker[Session], *names: str) -> None:
    with session_scope(factory) as session:
        for name in names:
            get_or_create_instance(session=session, name=name)


def iso(ts: datetime) -> str:
    return ts.isoformat().replace("+00:00", "Z")


def create(client: TestClient, **body: object) -> dict[str, object]:
    response = client.post(URL, json=body)
    assert response.status_code == 201, response.text
    data: dict[str, object] = response.json()
    return data


def listed(client: TestClient, **params: object) -> list[str]:
    response = client.get(URL, params=params)
    assert response.status_code == 200, response.text
    return [a["text"] for a in response.json()]


def test_create_returns_the_stored_annotation(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    add_instances(session_factory, "db1", "db2")
    created = create(
        client,
        text="  Started ALTER TABLE orders ADD INDEX idx_c (customer_id) ",
        tags=["schema", "deploy", "schema"],
        instances=["db2", "db1"],
        time="2026-11-20T12:00:00Z",
        end_time="2026-11-20T14:30:00+02:00",  # 12:30 UTC
    )
    assert created == {
        "id": created["id"],
        "text": "Started ALTER TABLE orders ADD INDEX idx_c (customer_id)",
        "tags": ["deploy", "schema"],
        "instances": ["db1", "db2"],
        "time": "2026-11-20T12:00:00Z",
        "end_time": "2026-11-20T12:30:00Z",
        "created_by": "admin",
        "created_at": created["created_at"],
    }
    assert isinstance(created["id"], int)
    fetched = client.get(f"{URL}/{created['id']}").json()
    assert fetched == created


def test_defaults_time_now_all_instances_no_tags(client: TestClient) -> None:
    before = datetime.now(UTC)
    created = create(client, text="deploy 1.2.3")
    stamped = datetime.fromisoformat(str(created["time"]))
    assert before - timedelta(seconds=1) <= stamped <= datetime.now(UTC)
    assert created["tags"] == []
    assert created["instances"] == []
    assert created["end_time"] is None
    # A naive time is UTC.
    naive = create(client, text="naive", time="2026-11-20T10:00:00")
    assert naive["time"] == "2026-11-20T10:00:00Z"


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"text": ""}, 422, "at least 1 character"),
        ({"text": "   "}, 422, "at least 1 character"),
        ({"text": "x" * 1001}, 422, "at most 1000 characters"),
        ({"tags": ["ok", ""]}, 422, "at least 1 character"),
        ({"time": "yesterday"}, 422, "datetime"),
        ({"colour": "red"}, 422, "Extra inputs are not permitted"),
        (
            {"time": "2026-11-20T12:00:00Z", "end_time": "2026-11-20T12:00:00Z"},
            400,
            "'end_time' (2026-11-20T12:00:00+00:00) must be after 'time'",
        ),
        (
            {"time": "2026-11-20T12:00:00Z", "end_time": "2026-11-20T11:00:00Z"},
            400,
            "must be after 'time'",
        ),
        ({"instances": ["nope"]}, 400, "Unknown instance(s): nope. Known instances: db1"),
    ],
)
def test_bad_input_is_refused_with_a_reason(
    client: TestClient,
    session_factory: sessionmaker[Session],
    body: dict[str, object],
    status: int,
    message: str,
) -> None:
    add_instances(session_factory, "db1")
    response = client.post(URL, json={"text": "deploy", **body})
    assert response.status_code == status, response.text
    assert message in str(response.json()["detail"])
    assert listed(client, **{"from": "2000-01-01T00:00:00Z"}) == []


def test_list_window_overlap_and_order(client: TestClient) -> None:
    create(client, text="late", time=iso(T0 + timedelta(hours=2)))
    create(client, text="early", time=iso(T0 - timedelta(hours=2)))
    create(
        client,
        text="range over the start",
        time=iso(T0 - timedelta(hours=3)),
        end_time=iso(T0 - timedelta(minutes=30)),
    )
    create(client, text="at start", time=iso(T0 - timedelta(hours=1)))
    create(client, text="at end", time=iso(T0 + timedelta(hours=1)))
    window = {"from": iso(T0 - timedelta(hours=1)), "to": iso(T0 + timedelta(hours=1))}
    # Sorted by time; a range that overlaps the window counts; the end is exclusive.
    assert listed(client, **window) == ["range over the start", "at start"]
    wide = {"from": iso(T0 - timedelta(days=1)), "to": iso(T0 + timedelta(days=1))}
    assert listed(client, **wide) == ["range over the start", "early", "at start", "at end", "late"]
    # Relative bounds like /queries; the default is the last 24 hours.
    create(client, text="recent")
    assert listed(client) == ["recent"]
    assert listed(client, **{"from": "now-1h"}) == ["recent"]


def test_bad_window_is_400(client: TestClient) -> None:
    response = client.get(URL, params={"from": "tomorrow"})
    assert response.status_code == 400
    assert "Cannot read time 'tomorrow'" in response.json()["detail"]
    response = client.get(URL, params={"from": "now", "to": "now-1h"})
    assert response.status_code == 400
    assert "must be before 'to'" in response.json()["detail"]


def test_filter_by_instance_and_tags(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    add_instances(session_factory, "db1", "db2")
    create(client, text="all, deploy", tags=["deploy"], time=iso(T0))
    create(client, text="db1, schema", tags=["schema"], instances=["db1"], time=iso(T0))
    create(client, text="db2, both", tags=["schema", "deploy"], instances=["db2"], time=iso(T0))
    window = {"from": iso(T0 - timedelta(hours=1)), "to": iso(T0 + timedelta(hours=1))}
    assert listed(client, **window, instance="db1") == ["all, deploy", "db1, schema"]
    assert listed(client, **window, instance="db2") == ["all, deploy", "db2, both"]
    assert listed(client, **window, instance="db3") == ["all, deploy"]
    assert listed(client, **window, tag="schema") == ["db1, schema", "db2, both"]
    assert listed(client, **window, tag=["deploy", "schema"]) == [
        "all, deploy",
        "db1, schema",
        "db2, both",
    ]
    assert listed(client, **window, tag="deploy", instance="db1") == ["all, deploy"]
    assert listed(client, **window, tag="nothing") == []


def test_scopes_and_delete_permissions(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    ci = add_token(session_factory, "ci", "annotate")
    other = add_token(session_factory, "other", "annotate")
    reader = add_token(session_factory, "reader", "read")
    # A read token can list but not annotate; an annotate token can annotate but not read.
    refused = client.post(URL, json={"text": "x"}, headers=reader)
    assert refused.status_code == 403
    assert "lacks the 'annotate' scope" in refused.json()["detail"]
    assert client.get(URL, headers=ci).status_code == 403
    assert client.get(URL, headers=reader).status_code == 200
    assert client.post(URL, json={"text": "x"}, headers={}).status_code == 201  # admin
    no_token = client.post(URL, json={"text": "x"}, headers={"Authorization": ""})
    assert no_token.status_code == 401

    mine = client.post(URL, json={"text": "by ci"}, headers=ci).json()
    assert mine["created_by"] == "ci"
    url = f"{URL}/{mine['id']}"
    forbidden = client.delete(url, headers=other)
    assert forbidden.status_code == 403
    assert "made by 'ci': only they or an admin may delete it" in forbidden.json()["detail"]
    assert client.delete(url, headers=reader).status_code == 403
    assert client.delete(url, headers=ci).status_code == 204
    assert client.get(url).status_code == 404
    missing = client.delete(url, headers=ci)
    assert missing.status_code == 404
    assert missing.json()["detail"] == f"No annotation with id {mine['id']}."
    # An admin deletes anyone's.
    theirs = client.post(URL, json={"text": "by other"}, headers=other).json()
    assert client.delete(f"{URL}/{theirs['id']}").status_code == 204
    assert listed(client) == ["x"]


def test_a_signed_in_user_deletes_their_own_from_a_later_session(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # A user's session is a token row that changes at every sign-in.
    add_token(session_factory, "alice-monday", "annotate")
    add_token(session_factory, "alice-tuesday", "annotate")
    add_token(session_factory, "bob-tuesday", "annotate")
    with session_scope(session_factory) as session:
        ids = dict(session.execute(select(ApiToken.name, ApiToken.id)).all())
    monday = Principal(ids["alice-monday"], "alice", frozenset({"annotate"}), user_id=41)
    tuesday = Principal(ids["alice-tuesday"], "alice", frozenset({"annotate"}), user_id=41)
    bob = Principal(ids["bob-tuesday"], "bob", frozenset({"annotate"}), user_id=42)
    with session_scope(session_factory) as session:
        made = service.create_annotation(
            session=session, principal=monday, data=AnnotationIn(text="deploy")
        )
    assert made.created_by == "alice"
    with session_scope(session_factory) as session, pytest.raises(service.NotAllowed):
        service.delete_annotation(session=session, principal=bob, annotation_id=made.id)
    with session_scope(session_factory) as session:
        service.delete_annotation(session=session, principal=tuesday, annotation_id=made.id)
    assert client.get(f"{URL}/{made.id}").status_code == 404


def test_impact_window_validation(client: TestClient) -> None:
    created = create(client, text="deploy", time=iso(datetime.now(UTC) - timedelta(hours=3)))
    url = f"{URL}/{created['id']}/impact"
    for window, message in [
        ("4m", "outside the accepted range of 5m to 7d"),
        ("8d", "outside the accepted range of 5m to 7d"),
        ("1y", "Cannot read window '1y'"),
        ("soon", "Cannot read window 'soon'"),
    ]:
        response = client.get(url, params={"window": window})
        assert response.status_code == 400, window
        assert message in response.json()["detail"]
    assert client.get(f"{URL}/999999/impact").status_code == 404
    # No data at all: a valid answer with no queries, windows of the length asked.
    body = client.get(url, params={"window": "15m"}).json()
    assert body["window_seconds"] == 900
    assert body["queries"] == []
    assert body["annotation"] == created
    before, after = body["before"], body["after"]
    assert datetime.fromisoformat(before["to"]) <= datetime.fromisoformat(created["time"])
    assert datetime.fromisoformat(after["from"]) >= datetime.fromisoformat(created["time"])


def test_impact_of_a_future_annotation_is_409(client: TestClient) -> None:
    created = create(client, text="planned", time=iso(datetime.now(UTC) + timedelta(hours=1)))
    response = client.get(f"{URL}/{created['id']}/impact")
    assert response.status_code == 409
    assert "ask again after" in response.json()["detail"]
