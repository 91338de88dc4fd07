"""The instances API on SQLite: register, list, change, delete, and test a connection.

DSNs must be stored encrypted and never come back with their password.
"""

import gzip
import json
import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.auth.models import ApiToken
from quanta.core.config import Settings
from quanta.core.crypto import decrypt
from quanta.core.db import session_scope
from quanta.core.security import hash_token
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.instances.service import require_connection
from tests.fixtures.servers import free_port

DSN = "mysql://quanta_ro:s3cr%40t-pw@db1.example:3307/shop"
SHOWN = "mysql://quanta_ro:***@db1.example:3307/shop"
TARGET = "mysql://quanta_exec:t4rget-pw@replica1.example:3306/"
TARGET_SHOWN = "mysql://quanta_exec:***@replica1.example:3306/"


def create(client: TestClient, expect: int = 201, **body: Any) -> Any:
    response = client.post("/api/v1/instances", json=body)
    assert response.status_code == expect, response.text
    return response.json()


def stored(factory: sessionmaker[Session], name: str) -> Instance:
    with session_scope(factory) as session:
        instance = session.scalars(select(Instance).where(Instance.name == name)).one()
        session.expunge(instance)
        return instance


def test_register_stores_the_dsn_encrypted_and_shows_it_redacted(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    body = create(client, name="db1", dsn=DSN, execution_target_dsn=TARGET, example_policy="masked")
    assert body["name"] == "db1"
    assert body["dsn"] == SHOWN
    assert body["has_dsn"] is True
    assert body["sandbox_dsn"] is None
    assert body["profiling_enabled"] is True  # read only: an execution target is set
    assert (body["execution_target_dsn"], body["has_execution_target"]) == (TARGET_SHOWN, True)
    assert body["allow_broad_privileges"] is False
    assert body["example_policy"] == "masked"
    assert (body["flavor"], body["version"], body["primary_source"]) == (None, None, None)
    row = stored(session_factory, "db1")
    assert row.dsn_encrypted is not None
    assert "s3cr" not in row.dsn_encrypted
    assert decrypt(settings, row.dsn_encrypted) == DSN
    assert row.target_dsn_encrypted is not None
    assert "t4rget" not in row.target_dsn_encrypted
    assert decrypt(settings, row.target_dsn_encrypted) == TARGET

    listed = client.get("/api/v1/instances").json()
    assert [(i["id"], i["name"], i["dsn"]) for i in listed] == [(body["id"], "db1", SHOWN)]
    one = client.get(f"/api/v1/instances/{body['id']}").json()
    assert one == body
    assert "s3cr" not in json.dumps(listed)


def test_an_instance_without_dsn_and_one_registered_by_ingest(client: TestClient) -> None:
    body = create(client, name="later")
    assert (body["dsn"], body["has_dsn"], body["example_policy"]) == (None, False, "full")
    payload = json.dumps({"batch_id": "b1", "instance": "from-agent", "events": []})
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(payload.encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text
    names = [i["name"] for i in client.get("/api/v1/instances").json()]
    assert names == ["from-agent", "later"]


def test_the_agents_socket_dsn_registers(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    """The agent spells the socket ?socket=; the same DSN registers the instance."""
    agent_dsn = "mysql://quanta_ro:pw@localhost/?socket=/run/mysqld/mysqld.sock"
    body = create(client, name="db1", dsn=agent_dsn)
    assert body["dsn"] == "mysql://quanta_ro:***@localhost/?socket=/run/mysqld/mysqld.sock"
    options = require_connection(settings, stored(session_factory, "db1"))
    assert (options.unix_socket, options.user) == ("/run/mysqld/mysqld.sock", "quanta_ro")


def test_duplicate_name_is_a_conflict(client: TestClient) -> None:
    create(client, name="db1")
    response = client.post("/api/v1/instances", json={"name": "db1"})
    assert response.status_code == 409
    assert response.json()["detail"] == (
        "An instance named 'db1' already exists: PATCH it, or choose another name."
    )


@pytest.mark.parametrize(
    ("dsn", "message"),
    [
        ("postgres://u:p@h/", "dsn: DSN must start with mysql:// or mariadb://"),
        ("mysql://u:p@/", "dsn: DSN names no host"),
        ("mysql://:secretpw@db1/", "dsn: DSN names no user"),
        ("mysql://u:secretpw@db1:port/", "dsn: DSN port is not a number"),
    ],
)
def test_a_bad_dsn_says_what_is_wrong_without_echoing_it(
    client: TestClient, dsn: str, message: str
) -> None:
    response = client.post("/api/v1/instances", json={"name": "db1", "dsn": dsn})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail.startswith(message)
    assert "secretpw" not in response.text
    assert client.get("/api/v1/instances").json() == []


def test_patch_sets_and_removes_the_connection(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    body = create(client, name="db1")
    url = f"/api/v1/instances/{body['id']}"
    patched = client.patch(url, json={"dsn": DSN, "sandbox_dsn": "mysql://root@scratch/"})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["dsn"], patched.json()["sandbox_dsn"]) == (
        SHOWN,
        "mysql://root@scratch/",
    )
    changed = client.patch(
        url,
        json={
            "execution_target_dsn": TARGET,
            "example_policy": "off",
            "primary_source": "perfschema",
        },
    ).json()
    assert (changed["dsn"], changed["profiling_enabled"]) == (SHOWN, True)
    assert changed["execution_target_dsn"] == TARGET_SHOWN
    no_target = client.patch(url, json={"execution_target_dsn": None}).json()
    assert (no_target["profiling_enabled"], no_target["has_execution_target"]) == (False, False)
    assert (changed["example_policy"], changed["primary_source"]) == ("off", "perfschema")
    assert changed["primary_source_pinned"] is True
    automatic = client.patch(url, json={"primary_source": None}).json()
    assert (automatic["primary_source"], automatic["primary_source_pinned"]) == (
        "perfschema",  # until the slow log reports again
        False,
    )
    removed = client.patch(url, json={"dsn": None}).json()
    assert (removed["dsn"], removed["has_dsn"], removed["sandbox_dsn"]) == (
        None,
        False,
        "mysql://root@scratch/",
    )
    assert stored(session_factory, "db1").dsn_encrypted is None

    assert client.patch(url, json={"dsn": "nope"}).status_code == 422
    assert client.patch(url, json={"example_policy": "some"}).status_code == 422
    assert client.patch(url, json={"colour": "red"}).status_code == 422
    missing = client.patch("/api/v1/instances/999", json={"example_policy": "off"})
    assert missing.status_code == 404
    assert missing.json()["detail"] == "No instance with id 999."
    create(client, name="db2")
    taken = client.patch(url, json={"name": "db2"})
    assert taken.status_code == 409


def test_delete_refuses_an_instance_with_data_unless_purged(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    empty = create(client, name="empty")
    assert client.delete(f"/api/v1/instances/{empty['id']}").status_code == 204
    assert client.get(f"/api/v1/instances/{empty['id']}").status_code == 404

    payload = json.dumps({"batch_id": "b1", "instance": "busy", "events": []})
    client.post(
        "/api/v1/ingest",
        content=gzip.compress(payload.encode()),
        headers={"Content-Encoding": "gzip"},
    )
    busy = next(i for i in client.get("/api/v1/instances").json() if i["name"] == "busy")
    refused = client.delete(f"/api/v1/instances/{busy['id']}")
    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        f"Instance 'busy' has stored data (ingest_batches). DELETE /api/v1/instances/"
        f"{busy['id']}?purge=true deletes it with all its data; "
        'PATCH {"dsn": null} only removes its connection.'
    )
    purged = client.delete(f"/api/v1/instances/{busy['id']}", params={"purge": "true"})
    assert purged.status_code == 204
    with session_scope(session_factory) as session:
        assert session.scalars(select(IngestBatch)).all() == []
        assert session.scalars(select(Instance)).all() == []


def test_test_connection_reports_an_unreachable_server(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    port = free_port()
    body = create(client, name="db1", dsn=f"mysql://quanta_ro:hunter22@127.0.0.1:{port}/")
    response = client.post(f"/api/v1/instances/{body['id']}/test-connection")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["connected"] is False
    assert report["error"].startswith(f"cannot connect to 127.0.0.1:{port}")
    assert (report["flavor"], report["version"], report["capabilities"]) == (None, None, [])
    assert "hunter22" not in response.text
    assert "hunter22" not in caplog.text


def test_test_connection_without_dsn_says_how_to_set_one(client: TestClient) -> None:
    body = create(client, name="db1")
    response = client.post(f"/api/v1/instances/{body['id']}/test-connection")
    assert response.status_code == 409
    assert response.json()["detail"] == (
        "Instance 'db1' has no DSN, so Quanta cannot reach its server: an admin registers a "
        f"read-only account with PATCH /api/v1/instances/{body['id']} "
        '{"dsn": "mysql://quanta_ro:PASSWORD@host:3306/"}.'
    )
    assert client.post("/api/v1/instances/999/test-connection").status_code == 404


def test_writes_need_the_admin_scope(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    token = "qnt_test_reader_token"
    with session_scope(session_factory) as session:
        session.add(ApiToken(name="reader", token_hash=hash_token(token), scopes=["read"]))
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/instances", headers=headers).status_code == 200
    response = client.post("/api/v1/instances", json={"name": "x"}, headers=headers)
    assert response.status_code == 403
    assert response.json()["detail"] == "This token lacks the 'admin' scope."


def test_the_old_profiling_flag_is_refused_with_the_way_forward(client: TestClient) -> None:
    body = create(client, name="db1", dsn=DSN)
    for flag in (True, False):
        response = client.patch(
            f"/api/v1/instances/{body['id']}", json={"profiling_enabled": flag, "dsn": DSN}
        )
        assert response.status_code == 422
        assert "execution_target_dsn" in response.text
        assert "s3cr" not in response.text  # the error quotes the flag, never the body
    refused = client.post("/api/v1/instances", json={"name": "db2", "profiling_enabled": True})
    assert refused.status_code == 422


def test_the_broad_privileges_override_is_audited(client: TestClient) -> None:
    body = create(client, name="db1", dsn=DSN)
    url = f"/api/v1/instances/{body['id']}"
    allowed = client.patch(
        url, json={"allow_broad_privileges": True, "execution_target_dsn": TARGET}
    )
    assert allowed.json()["allow_broad_privileges"] is True
    client.patch(url, json={"allow_broad_privileges": False})
    entries = [e for e in client.get("/api/v1/audit").json() if e["action"].startswith("PATCH")]
    # Newest first; the execution target's DSN is a secret: "changed", never its value.
    assert [e["detail"] for e in entries] == [
        {"name": "db1", "changed": {"allow_broad_privileges": {"old": True, "new": False}}},
        {
            "name": "db1",
            "changed": {
                "allow_broad_privileges": {"old": False, "new": True},
                "execution_target_dsn": "changed",
            },
        },
    ]
    assert all(e["target"] == {"instance_id": str(body["id"])} for e in entries)
    assert "t4rget" not in str(entries)
    assert "replica1" not in str(entries)  # nor any part of the DSN
