"""API tokens (create shown once, list, revoke, last use), ingest binding, the audit log,
purging a query, and the `quanta user` / `quanta token` commands."""

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from typer.testing import CliRunner

from quanta.auth.models import ApiToken
from quanta.auth.service import authenticate
from quanta.cli import app as cli
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.purge.service import tables_with_query_id
from quanta.queries.models import QueryBucketMinute, QueryClass, QueryExampleMinute

NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


def batch_body(instance: str, batch_id: str = "b1", sql: str = "SELECT 1 FROM t") -> bytes:
    event = {"ts": NOW.isoformat(), "query": sql, "query_time": 0.5, "db": "shop"}
    return gzip.compress(
        json.dumps({"batch_id": batch_id, "instance": instance, "events": [event]}).encode()
    )


def post_batch(client: TestClient, token: str, instance: str, batch_id: str = "b1") -> Any:
    return client.post(
        "/api/v1/ingest",
        content=batch_body(instance, batch_id),
        headers={"Content-Encoding": "gzip", "Authorization": f"Bearer {token}"},
    )


def count_batches(factory: sessionmaker[Session]) -> int:
    with session_scope(factory) as session:
        return session.scalar(select(func.count()).select_from(IngestBatch)) or 0


def test_created_token_is_shown_once_and_works(client: TestClient) -> None:
    created = client.post("/api/v1/tokens", json={"name": "ci", "scopes": ["annotate", "read"]})
    assert created.status_code == 201
    body = created.json()
    assert body["token"].startswith("qnt_")
    assert body["scopes"] == ["annotate", "read"]
    assert body["last_used_at"] is None
    listed = client.get("/api/v1/tokens").json()
    assert [t["name"] for t in listed] == ["admin", "ci"]
    assert all("token" not in t and "token_hash" not in t for t in listed)
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {body['token']}"}).json()
    assert me["name"] == "ci"
    assert me["scopes"] == ["annotate", "read"]
    ci = next(t for t in client.get("/api/v1/tokens").json() if t["name"] == "ci")
    assert ci["last_used_at"] is not None


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"name": "x", "scopes": ["ingest"]}, "must name the instance"),
        ({"name": "x", "scopes": ["read"], "instances": ["db1"]}, "bind ingest tokens"),
        ({"name": "x", "scopes": ["root"]}, "Unknown scope(s) root"),
    ],
)
def test_unusable_tokens_are_refused(
    client: TestClient, payload: dict[str, Any], message: str
) -> None:
    response = client.post("/api/v1/tokens", json=payload)
    assert response.status_code == 422
    assert message in response.json()["detail"]


def test_revoked_token_stops_working_and_own_token_is_kept(client: TestClient) -> None:
    secret = client.post("/api/v1/tokens", json={"name": "r", "scopes": ["read"]}).json()
    auth = {"Authorization": f"Bearer {secret['token']}"}
    assert client.get("/api/v1/instances", headers=auth).status_code == 200
    assert client.delete(f"/api/v1/tokens/{secret['id']}").status_code == 204
    assert client.delete(f"/api/v1/tokens/{secret['id']}").status_code == 204  # idempotent
    refused = client.get("/api/v1/instances", headers=auth)
    assert refused.status_code == 401
    assert refused.json()["detail"] == "Unknown or revoked API token."
    listed = {t["name"]: t for t in client.get("/api/v1/tokens").json()}
    assert listed["r"]["revoked_at"] is not None
    own = client.delete(f"/api/v1/tokens/{listed['admin']['id']}")
    assert own.status_code == 409
    assert "token you are using" in own.json()["detail"]
    assert client.delete("/api/v1/tokens/4242").status_code == 404


def test_last_used_is_written_at_most_once_per_interval(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    secret = client.post("/api/v1/tokens", json={"name": "t", "scopes": ["read"]}).json()
    start = datetime(2030, 1, 1, tzinfo=UTC)
    every = timedelta(seconds=60)
    seen = []
    for offset in (0, 30, 59, 60, 61, 200):
        with session_scope(session_factory) as session:
            principal = authenticate(
                session=session, token=secret["token"], touch_after=every,
                now=start + timedelta(seconds=offset),
            )  # fmt: skip
            assert principal is not None
        with session_scope(session_factory) as session:
            row = session.get_one(ApiToken, secret["id"])
            seen.append(int((row.last_used_at - start).total_seconds()))  # type: ignore[operator]
    assert seen == [0, 0, 0, 60, 60, 200]


def test_ingest_token_only_feeds_its_instances(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    created = client.post(
        "/api/v1/tokens", json={"name": "agent", "scopes": ["ingest"], "instances": ["db1"]}
    ).json()
    assert created["instances"] == ["db1"]
    assert post_batch(client, created["token"], "db1").status_code == 202
    refused = post_batch(client, created["token"], "db2", batch_id="b2")
    assert refused.status_code == 403
    assert "only send batches for db1, not 'db2'" in refused.json()["detail"]
    assert count_batches(session_factory) == 1
    # An ingest token cannot read what it sends.
    auth = {"Authorization": f"Bearer {created['token']}"}
    assert client.get("/api/v1/queries", headers=auth).status_code == 403


def test_ingest_is_rate_limited_per_token(
    client: TestClient, settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    settings_limited = settings.model_copy(update={"ingest_rate_limit": "3/minute"})
    from quanta.core.http import RateLimiter

    client.app.state.rate_limiter = RateLimiter(settings_limited)  # type: ignore[attr-defined]
    answers = [post_batch(client, "qnt_test_admin_token", "db1", f"b{i}") for i in range(5)]
    assert [a.status_code for a in answers] == [202, 202, 202, 429, 429]
    assert "Too many ingest requests" in answers[3].json()["detail"]
    assert 1 <= int(answers[3].headers["Retry-After"]) <= 60
    assert count_batches(session_factory) == 3


def test_admin_actions_are_audited_with_route_and_target(client: TestClient) -> None:
    token = client.post("/api/v1/tokens", json={"name": "ci", "scopes": ["read"]}).json()
    client.delete(f"/api/v1/tokens/{token['id']}")
    instance = client.post("/api/v1/instances", json={"name": "db9"}).json()
    client.patch(f"/api/v1/instances/{instance['id']}", json={"example_policy": "off"})
    client.delete(f"/api/v1/instances/{instance['id']}")
    client.post("/api/v1/instances", json={"name": ""})  # refused: not audited
    assert client.delete("/api/v1/tokens/4242").status_code == 404  # failed: not audited
    client.get("/api/v1/tokens")  # a read: not audited
    entries = client.get("/api/v1/audit").json()
    actions = [(e["action"], e["target"]) for e in reversed(entries)]
    assert actions == [
        ("POST /api/v1/tokens", {}),
        ("DELETE /api/v1/tokens/{token_id}", {"token_id": str(token["id"])}),
        ("POST /api/v1/instances", {}),
        ("PATCH /api/v1/instances/{instance_id}", {"instance_id": str(instance["id"])}),
        ("DELETE /api/v1/instances/{instance_id}", {"instance_id": str(instance["id"])}),
    ]
    first = entries[-1]
    assert first["actor"] == "admin"
    assert first["detail"] == {
        "token_id": token["id"], "name": "ci", "scopes": ["read"], "instances": None,
    }  # fmt: skip
    assert "token" not in json.dumps(first["detail"]).replace('"token_id"', "")
    page = client.get("/api/v1/audit", params={"limit": 2, "before_id": entries[1]["id"]})
    assert [e["id"] for e in page.json()] == [e["id"] for e in entries[2:4]]


def test_purge_deletes_every_trace_of_a_query(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    assert post_batch(client, "qnt_test_admin_token", "db1").status_code == 202
    other = client.post(
        "/api/v1/ingest",
        content=batch_body("db1", "b2", sql="SELECT 2 FROM u"),
        headers={"Content-Encoding": "gzip"},
    )
    assert other.status_code == 202
    with session_scope(session_factory) as session:
        for batch_pk in session.scalars(select(IngestBatch.id)).all():
            ingest.process_batch(session=session, settings=Settings(env="test"), batch_pk=batch_pk)
    with session_scope(session_factory) as session:
        ids = {q.query_id: q.fingerprint for q in session.scalars(select(QueryClass))}
    target = next(qid for qid, fp in ids.items() if "from t" in fp.lower())
    kept = next(qid for qid in ids if qid != target)

    purged = client.delete(f"/api/v1/queries/{target}")
    assert purged.status_code == 200
    deleted = purged.json()["deleted"]
    assert deleted["query_classes"] == 1
    assert deleted["query_examples_minute"] >= 1
    assert deleted["query_buckets_minute"] >= 1
    with session_scope(session_factory) as session:
        for table in tables_with_query_id():
            left = session.scalar(
                select(func.count()).select_from(table).where(table.c.query_id == target)
            )
            assert left == 0, table.name
        assert session.get(QueryClass, kept) is not None
        assert session.scalar(
            select(func.count())
            .select_from(QueryBucketMinute)
            .where(QueryBucketMinute.query_id == kept)
        )
        examples_left = session.scalar(select(func.count()).select_from(QueryExampleMinute))
        assert examples_left is not None
        assert examples_left >= 1
    assert client.get(f"/api/v1/queries/{target}").status_code == 404
    again = client.delete(f"/api/v1/queries/{target}")
    assert again.status_code == 404
    audit = client.get("/api/v1/audit").json()[0]
    assert audit["action"] == "DELETE /api/v1/queries/{query_id}"
    assert audit["target"] == {"query_id": target}
    assert audit["detail"]["deleted"] == deleted


def test_purge_covers_every_table_with_a_query_id() -> None:
    names = {table.name for table in tables_with_query_id()}
    assert {"query_classes", "query_examples", "query_instances"} <= names
    assert {"query_buckets_minute", "query_buckets_hour", "query_buckets_day"} <= names
    # Children before the catalog row they reference (the metric tables reference nothing).
    order = [t.name for t in tables_with_query_id()]
    children = [
        t.name
        for t in tables_with_query_id()
        if any(fk.column.table.name == "query_classes" for fk in t.foreign_keys)
    ]
    assert {"query_instances"} <= set(children)
    assert all(order.index(name) < order.index("query_classes") for name in children)


def test_cli_creates_users_and_tokens_and_revokes(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from quanta.core.config import get_settings
    from tests.fixtures.store import migrate_store

    migrate_store(settings)
    monkeypatch.setenv("QUANTA_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("QUANTA_ENV", "test")
    get_settings.cache_clear()
    runner = CliRunner()
    try:
        made = runner.invoke(
            cli, ["user", "create", "ada", "--role", "admin", "--password-stdin"],
            input="correct horse battery\n",
        )  # fmt: skip
        assert made.exit_code == 0, made.output
        assert "Created admin 'ada'" in made.output
        short = runner.invoke(cli, ["user", "create", "bob", "--password-stdin"], input="x\n")
        assert short.exit_code == 1
        assert "at least 10 characters" in short.output
        created = runner.invoke(
            cli, ["token", "create", "--name", "agent", "--scope", "ingest", "--instance", "db1"]
        )
        assert created.exit_code == 0, created.output
        secret = created.stdout.strip().splitlines()[-1]
        assert secret.startswith("qnt_")
        unbound = runner.invoke(cli, ["token", "create", "--name", "a", "--scope", "ingest"])
        assert unbound.exit_code == 1
        assert "must name the instance" in unbound.output
        listed = runner.invoke(cli, ["token", "list"])
        assert "agent\tingest\tdb1\tused never\tactive" in listed.output
        assert secret not in listed.output
        token_id = listed.output.split("\t")[0]
        revoked = runner.invoke(cli, ["token", "revoke", token_id])
        assert revoked.exit_code == 0
        assert "Revoked token" in revoked.output
    finally:
        get_settings.cache_clear()
    app_settings = Settings(env="test", data_dir=settings.data_dir)
    from quanta.core.db import create_db_engine, create_session_factory

    engine = create_db_engine(app_settings)
    with session_scope(create_session_factory(engine)) as session:
        assert authenticate(session=session, token=secret) is None
        from quanta.audit.service import list_entries

        actions = [e.action for e in reversed(list_entries(session=session, limit=10))]
    engine.dispose()
    assert actions == ["quanta user create", "quanta token create", "quanta token revoke"]
