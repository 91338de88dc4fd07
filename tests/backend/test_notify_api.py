"""/api/v1/channels: CRUD with a redacted, encrypted URL, the test action, deliveries, 4xx."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.auth.models import ApiToken
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.security import hash_token
from quanta.notify import dispatch, publish
from quanta.notify.models import Channel, Delivery, DeliveryAttempt
from tests.backend.test_notify_service import Receiver, notice, receiver  # noqa: F401
from tests.fixtures.servers import free_port

SECRET_URL = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX"
NOT_FOUND = "HTTP 404: no webhook at this URL (deleted, or mistyped)."


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The test store; webhooks may point at the local receiver (127.0.0.1) and at names
    that do not resolve here (no DNS query is made when private targets are allowed)."""
    return Settings(env="test", data_dir=tmp_path / "data", allow_private_webhooks=True)


def create(client: TestClient, **fields: Any) -> Any:
    body = {"name": "ops", "type": "slack", "url": SECRET_URL, **fields}
    return client.post("/api/v1/channels", json=body)


def test_crud_with_redacted_url(client: TestClient, session_factory: sessionmaker[Session]) -> None:
    created = create(client, instances=["db-1"], min_load_share=0.05)
    assert created.status_code == 201, created.text
    channel = created.json()
    assert channel["url"] == "https://hooks.slack.com/…"
    assert "XXXX" not in created.text
    assert channel["events"] == ["new_suggestion"]
    assert (channel["quiet_start_hour"], channel["enabled"]) == (None, True)
    with session_scope(session_factory) as session:
        stored = session.scalars(select(Channel)).one()
        assert "hooks.slack.com" not in stored.url_encrypted  # encrypted at rest

    path = f"/api/v1/channels/{channel['id']}"
    assert client.get("/api/v1/channels").json() == [channel]
    assert client.get(path).json() == channel

    patched = client.patch(
        path,
        json={
            "url": "http://mm.internal:8065/hooks/abc123",
            "type": "mattermost",
            "events": ["new_suggestion", "annotation_impact"],
            "quiet_start_hour": 22,
            "quiet_end_hour": 6,
        },
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["url"] == "http://mm.internal:8065/…"
    assert patched.json()["events"] == ["annotation_impact", "new_suggestion"]
    assert patched.json()["instances"] == ["db-1"]  # left out: kept
    cleared = client.patch(path, json={"quiet_start_hour": None, "quiet_end_hour": None})
    assert (cleared.json()["quiet_start_hour"], cleared.json()["quiet_end_hour"]) == (None, None)

    assert client.delete(path).status_code == 204
    assert client.get(path).status_code == 404
    assert client.get("/api/v1/channels").json() == []


def test_bad_requests_get_actionable_4xx(client: TestClient) -> None:
    assert create(client).status_code == 201
    taken = create(client)
    assert taken.status_code == 409
    assert taken.json()["detail"] == "A channel named 'ops' exists; pick another name."

    for fields, needle in [
        ({"url": "ftp://example.com/x"}, "incoming-webhook URL"),
        ({"url": "not a url"}, "incoming-webhook URL"),
        ({"type": "irc"}, "slack"),
        ({"min_load_share": 1.5}, "less than or equal to 1"),
        ({"events": []}, "at least 1"),
        ({"events": ["deploys"]}, "new_suggestion"),
        ({"quiet_start_hour": 22}, "set both or neither"),
        ({"quiet_start_hour": 5, "quiet_end_hour": 5}, "must differ"),
        ({"quiet_start_hour": 24, "quiet_end_hour": 5}, "less than or equal to 23"),
        ({"color": "red"}, "Extra inputs are not permitted"),
        ({"instances": [""]}, "at least 1 character"),
    ]:
        response = create(client, name=f"n{free_port()}", **fields)
        assert response.status_code == 422, (fields, response.text)
        assert needle in response.text, (fields, response.text)

    missing = client.patch("/api/v1/channels/999", json={"enabled": False})
    assert missing.status_code == 404
    assert "No channel with id 999" in missing.json()["detail"]
    other = create(client, name="other").json()
    rename = client.patch(f"/api/v1/channels/{other['id']}", json={"name": "ops"})
    assert rename.status_code == 409
    null_type = client.patch(f"/api/v1/channels/{other['id']}", json={"type": None})
    assert null_type.status_code == 422
    assert null_type.json()["detail"] == "'type' cannot be null; leave it out to keep its value."
    half_quiet = client.patch(f"/api/v1/channels/{other['id']}", json={"quiet_end_hour": 3})
    assert half_quiet.status_code == 422
    assert "set both" in half_quiet.json()["detail"]
    assert client.post("/api/v1/channels/999/test").status_code == 404
    assert client.get("/api/v1/channels/999/deliveries").status_code == 404
    bad_status = client.get(f"/api/v1/channels/{other['id']}/deliveries?status=lost")
    assert bad_status.status_code == 422


def test_admin_only(client: TestClient, session_factory: sessionmaker[Session]) -> None:
    with session_scope(session_factory) as session:
        session.add(ApiToken(name="reader", token_hash=hash_token("qnt_reader"), scopes=["read"]))
    reader = {"Authorization": "Bearer qnt_reader"}
    response = client.get("/api/v1/channels", headers=reader)
    assert response.status_code == 403
    assert response.json()["detail"] == "This token lacks the 'admin' scope."
    assert client.get("/api/v1/channels", headers={"Authorization": ""}).status_code == 401


def test_send_test_message(
    client: TestClient,
    receiver: Receiver,  # noqa: F811
    session_factory: sessionmaker[Session],
) -> None:
    channel = create(client, type="discord", url=receiver.url("/api/webhooks/1/tok")).json()
    receiver.script = [(204, {}, "")]
    ok = client.post(f"/api/v1/channels/{channel['id']}/test")
    assert ok.status_code == 200, ok.text
    assert ok.json()["delivered"] is True
    assert (ok.json()["status_code"], ok.json()["error"]) == (204, None)
    assert receiver.requests[0].body == {
        "content": "Quanta test message: channel “ops” is connected. Index suggestions will "
        "link to http://127.0.0.1:8000.",
        "allowed_mentions": {"parse": []},
    }

    receiver.script = [(404, {}, '{"message": "Unknown Webhook", "code": 10015}')]
    bad = client.post(f"/api/v1/channels/{channel['id']}/test").json()
    assert bad["delivered"] is False
    assert (bad["status_code"], bad["error"]) == (404, NOT_FOUND)

    unreachable = create(client, name="gone", url=f"http://127.0.0.1:{free_port()}/x").json()
    gone = client.post(f"/api/v1/channels/{unreachable['id']}/test").json()
    assert gone["status_code"] is None
    assert gone["error"].startswith("Could not reach the webhook")

    deliveries = client.get(f"/api/v1/channels/{channel['id']}/deliveries").json()
    assert [(d["kind"], d["status"], d["summary"]) for d in deliveries] == [
        ("test", "failed", "Test message"),
        ("test", "sent", "Test message"),
    ]
    assert [a["status_code"] for a in deliveries[0]["attempts"]] == [404]
    assert deliveries[0]["attempts"][0]["error"] == NOT_FOUND
    assert "Unknown Webhook" not in str(deliveries)  # the target's own text is never shown

    # Deleting the channel takes its deliveries and their attempts with it.
    assert client.delete(f"/api/v1/channels/{channel['id']}").status_code == 204
    with session_scope(session_factory) as session:
        assert session.scalars(select(Delivery.id)).all() == [
            d["id"] for d in client.get(f"/api/v1/channels/{unreachable['id']}/deliveries").json()
        ]
        assert session.scalar(select(func.count()).select_from(DeliveryAttempt)) == 1


def test_deliveries_show_every_attempt(
    client: TestClient,
    receiver: Receiver,  # noqa: F811
    session_factory: sessionmaker[Session],
    settings: Settings,
) -> None:
    channel = create(client, type="webhook", url=receiver.url()).json()
    receiver.script = [(500, {}, "boom"), (429, {"Retry-After": "5"}, "")]
    with session_scope(session_factory) as session:
        [delivery_id] = publish.publish_suggestion(
            session=session, settings=settings, notice=notice()
        )
    now = datetime.now(UTC) + timedelta(seconds=1)  # the delivery is due
    with session_scope(session_factory) as session:
        second = dispatch.attempt_delivery(session, settings, delivery_id, now)
    assert second is not None
    with session_scope(session_factory) as session:
        third = dispatch.attempt_delivery(session, settings, delivery_id, second)
    assert third is not None

    body = client.get(f"/api/v1/channels/{channel['id']}/deliveries?status=pending").json()
    [shown] = body
    assert shown["id"] == delivery_id
    assert shown["summary"] == (
        "db-1 · ALTER TABLE shop.orders ADD INDEX idx_customer_id (customer_id)"
    )
    assert (shown["event"], shown["suggestion_id"], shown["content_hash"]) == (
        "new_suggestion",
        1,
        "hash-1",
    )
    assert [(a["status_code"], a["error"]) for a in shown["attempts"]] == [
        (500, "HTTP 500: the service failed to take the message (server error)."),
        (429, "HTTP 429: the service is throttling messages."),
    ]
    assert datetime.fromisoformat(shown["attempts"][0]["next_retry_at"]) == second
    assert datetime.fromisoformat(shown["attempts"][1]["next_retry_at"]) == third
    assert third - second == timedelta(seconds=5)  # Retry-After
    assert client.get(f"/api/v1/channels/{channel['id']}/deliveries?status=sent").json() == []
