"""Dismissing a suggestion is a write (issue 39): it needs the `diagnose` scope, a viewer
and a `read` token get 403, and every change is audited with who made it, old -> new."""

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from quanta.advice.models import Suggestion
from quanta.core.db import session_scope
from quanta.instances.models import Instance
from quanta.queries.models import QueryClass
from tests.backend.test_access_login import browser, make_user, sign_in

NOW = datetime.now(UTC).replace(microsecond=0)
PATH = "/api/v1/suggestions/{id}"


@pytest.fixture
def suggestion(session_factory: sessionmaker[Session]) -> int:
    """One new suggestion for a query on db1."""
    with session_scope(session_factory) as session:
        instance = Instance(name="db1")
        session.add(instance)
        session.add(
            QueryClass(
                query_id="0123456789ABCDEF",
                fingerprint="select * from orders where phone=?",
                first_seen=NOW,
                last_seen=NOW,
            )
        )
        session.flush()
        row = Suggestion(
            query_id="0123456789ABCDEF",
            instance_id=instance.id,
            table_name="shop.orders",
            action="add",
            columns=[{"name": "phone", "desc": False, "rule": "equality"}],
            ddl="ALTER TABLE shop.orders ADD INDEX idx_phone (phone)",
            reason="r",
            notes=[],
            redundant=[],
            status="new",
            content_hash="h" * 64,
            created_at=NOW,
            updated_at=NOW,
        )
        session.add(row)
        session.flush()
        return row.id


def token(client: TestClient, name: str, scope: str) -> TestClient:
    made = client.post("/api/v1/tokens", json={"name": name, "scopes": [scope]})
    assert made.status_code == 201, made.text
    return TestClient(client.app, headers={"Authorization": f"Bearer {made.json()['token']}"})


def status_changes(client: TestClient) -> list[dict[str, object]]:
    return [
        {key: entry[key] for key in ("actor", "target", "detail")}
        for entry in client.get("/api/v1/audit").json()
        if entry["action"] == "PATCH /api/v1/suggestions/{suggestion_id}"
    ]


def test_a_viewer_and_a_read_token_cannot_dismiss(client: TestClient, suggestion: int) -> None:
    reader = token(client, "reader", "read")
    refused = reader.patch(PATH.format(id=suggestion), json={"status": "dismissed"})
    assert refused.status_code == 403
    assert refused.json()["detail"] == "This token lacks the 'diagnose' scope."
    make_user(client, "vic", "viewer")
    tab = browser(client)
    csrf = sign_in(tab, "vic")
    refused = tab.patch(
        PATH.format(id=suggestion), json={"status": "dismissed"}, headers={"X-CSRF-Token": csrf}
    )
    assert refused.status_code == 403
    listed = client.get("/api/v1/queries/0123456789ABCDEF/suggestions").json()
    assert [row["status"] for row in listed["suggestions"]] == ["new"]
    assert status_changes(client) == []


def test_a_diagnose_token_dismisses_and_restores_audited(
    client: TestClient, suggestion: int
) -> None:
    operator = token(client, "oncall", "diagnose")
    path = PATH.format(id=suggestion)
    assert operator.patch(path, json={"status": "dismissed"}).json()["status"] == "dismissed"
    assert operator.patch(path, json={"status": "dismissed"}).status_code == 200  # no change
    assert operator.patch(path, json={"status": "new"}).json()["status"] == "new"
    target = {
        "suggestion_id": str(suggestion),
        "query_id": "0123456789ABCDEF",
        "instance": "db1",
        "table": "shop.orders",
    }
    changes = [
        {"status": {"old": "dismissed", "new": "new"}},
        {"status": {"old": "new", "new": "dismissed"}},
    ]
    assert status_changes(client) == [  # newest first; the no-op left no entry
        {"actor": "oncall", "target": target, "detail": detail} for detail in changes
    ]
