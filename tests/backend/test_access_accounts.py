"""Account lifecycle at /api/v1/users: roles, disable/enable, password resets, ending sessions,
deletion, last-admin protection; what the audit log keeps of each (never a secret); failed
sign-ins; and a sign-in limit an attacker elsewhere cannot use to lock a user out."""

import itertools
import json
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.audit.models import AuditEntry
from quanta.auth.models import User
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.http import RateLimiter
from tests.fixtures.servers import PostgresServer

PASSWORD = "correct horse battery"
NEW_PASSWORD = "another long passphrase"
DSN = "mysql://quanta:dsn-secret-pw@db1.internal:3306/"
TARGET_DSN = "mysql://quanta_exec:target-pw@replica1.internal:3306/"
WEBHOOK = "https://hooks.slack.com/services/T000/B000/webhooksecretpart"


STORES = [
    pytest.param("sqlite"),
    pytest.param("postgresql", marks=pytest.mark.services),
]


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """SQLite unless a test asks for PostgreSQL (`parametrize("settings", STORES, ...)`)."""
    url = None
    if getattr(request, "param", "sqlite") == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.create_database(f"accounts_{uuid.uuid4().hex[:12]}")
    # Private webhook targets allowed: the channel tests' hooks.slack.com is then not resolved.
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=url,
        redis_url=None,
        allow_private_webhooks=True,
    )


def make_user(client: TestClient, name: str, role: str) -> int:
    response = client.post("/api/v1/users", json={"name": name, "password": PASSWORD, "role": role})
    assert response.status_code == 201, response.text
    user_id: int = response.json()["id"]
    return user_id


_hosts = itertools.count(1)


def tab(client: TestClient, address: str | None = None) -> TestClient:
    """A browser without the admin token, calling from `address` (default: a new one, so the
    sign-in limit per name and address does not get in the way)."""
    return TestClient(client.app, client=(address or f"10.0.0.{next(_hosts)}", 50000))


def login(browser: TestClient, name: str, password: str = PASSWORD) -> int:
    return browser.post("/api/v1/auth/login", json={"name": name, "password": password}).status_code


def users(client: TestClient) -> dict[str, dict[str, object]]:
    return {u["name"]: u for u in client.get("/api/v1/users").json()}


def audit(client: TestClient) -> list[dict[str, object]]:
    """Entries oldest first."""
    return list(reversed(client.get("/api/v1/audit").json()))


@pytest.mark.parametrize("settings", STORES, indirect=True)
def test_account_lifecycle_end_to_end(client: TestClient) -> None:
    make_user(client, "ada", "admin")  # bob, once admin, is not the last one
    bob = make_user(client, "bob", "viewer")
    browser = tab(client)
    assert login(browser, "bob") == 200
    assert browser.get("/api/v1/tokens").status_code == 403  # a viewer

    # A role change applies to the open session at once.
    promoted = client.patch(f"/api/v1/users/{bob}", json={"role": "admin"})
    assert promoted.status_code == 200, promoted.text
    assert (promoted.json()["role"], promoted.json()["live_sessions"]) == ("admin", 1)
    assert browser.get("/api/v1/tokens").status_code == 200
    assert browser.get("/api/v1/me").json()["role"] == "admin"

    # Disabled: the session stops at once, and sign-in is refused.
    disabled = client.patch(f"/api/v1/users/{bob}", json={"disabled": True}).json()
    assert disabled["disabled_at"] is not None
    assert disabled["live_sessions"] == 0
    ended = browser.get("/api/v1/me")
    assert ended.status_code == 401
    assert ended.json()["detail"] == "Your session has ended: sign in again."
    refused = tab(client).post("/api/v1/auth/login", json={"name": "bob", "password": PASSWORD})
    assert refused.status_code == 403
    assert refused.json()["detail"] == "This account is disabled: ask an admin to enable it."
    wrong = tab(client).post("/api/v1/auth/login", json={"name": "bob", "password": "nope"})
    assert wrong.status_code == 401  # without the password, nothing says it is disabled

    # Enabled again: a new sign-in works (the old session stays ended).
    enabled = client.patch(f"/api/v1/users/{bob}", json={"disabled": False}).json()
    assert enabled["disabled_at"] is None
    assert browser.get("/api/v1/me").status_code == 401
    assert login(browser, "bob") == 200

    # A password reset ends the sessions; the old password is refused, the new one works.
    reset = client.post(f"/api/v1/users/{bob}/password", json={"password": NEW_PASSWORD})
    assert reset.status_code == 200, reset.text
    assert (reset.json()["generated_password"], reset.json()["sessions_ended"]) == (None, 1)
    assert browser.get("/api/v1/me").status_code == 401
    assert login(tab(client), "bob") == 401
    assert login(browser, "bob", NEW_PASSWORD) == 200

    # A generated password is shown once and works.
    generated = client.post(f"/api/v1/users/{bob}/password", json={}).json()["generated_password"]
    assert isinstance(generated, str)
    assert len(generated) >= 20
    assert login(tab(client), "bob", NEW_PASSWORD) == 401
    phone, laptop = tab(client), tab(client)
    assert login(phone, "bob", generated) == login(laptop, "bob", generated) == 200
    assert users(client)["bob"]["live_sessions"] == 2

    # Sign out everywhere.
    logged_out = client.delete(f"/api/v1/users/{bob}/sessions")
    assert logged_out.json() == {"sessions_ended": 2}
    assert phone.get("/api/v1/me").status_code == laptop.get("/api/v1/me").status_code == 401
    assert users(client)["bob"]["live_sessions"] == 0

    # Deleted: the live session stops, the name is free again.
    assert login(phone, "bob", generated) == 200
    assert client.delete(f"/api/v1/users/{bob}").status_code == 204
    assert phone.get("/api/v1/me").status_code == 401
    assert login(tab(client), "bob", generated) == 401
    assert "bob" not in users(client)
    assert client.delete(f"/api/v1/users/{bob}").status_code == 404
    assert client.patch(f"/api/v1/users/{bob}", json={"role": "viewer"}).status_code == 404
    make_user(client, "bob", "viewer")


@pytest.mark.parametrize("settings", STORES, indirect=True)
def test_the_last_active_admin_cannot_be_disabled_demoted_or_deleted(client: TestClient) -> None:
    ada = make_user(client, "ada", "admin")
    vic = make_user(client, "vic", "viewer")
    for method, path, body in (
        ("PATCH", f"/api/v1/users/{ada}", {"disabled": True}),
        ("PATCH", f"/api/v1/users/{ada}", {"role": "viewer"}),
        ("DELETE", f"/api/v1/users/{ada}", None),
    ):
        refused = client.request(method, path, json=body)
        assert refused.status_code == 409, (method, body)
        assert "last active admin" in refused.json()["detail"]
    assert users(client)["ada"]["role"] == "admin"
    assert users(client)["ada"]["disabled_at"] is None
    # A disabled admin does not count: promoting then disabling vic leaves ada the last one.
    assert client.patch(f"/api/v1/users/{vic}", json={"role": "admin"}).status_code == 200
    assert client.patch(f"/api/v1/users/{vic}", json={"disabled": True}).status_code == 200
    assert client.patch(f"/api/v1/users/{ada}", json={"role": "viewer"}).status_code == 409
    # With another active admin, ada may go; then vic is the last one.
    assert client.patch(f"/api/v1/users/{vic}", json={"disabled": False}).status_code == 200
    assert client.patch(f"/api/v1/users/{ada}", json={"role": "viewer"}).status_code == 200
    assert client.delete(f"/api/v1/users/{vic}").status_code == 409
    # A refused change in one PATCH changes nothing of the other field either.
    both = client.patch(f"/api/v1/users/{vic}", json={"disabled": True, "role": "viewer"})
    assert both.status_code == 409
    assert (users(client)["vic"]["role"], users(client)["vic"]["disabled_at"]) == ("admin", None)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"role": "root"}, "Input should be"),
        ({"disabled": "maybe"}, "valid boolean"),
    ],
)
def test_bad_updates_are_refused(client: TestClient, body: dict[str, str], message: str) -> None:
    bob = make_user(client, "bob", "viewer")
    response = client.patch(f"/api/v1/users/{bob}", json=body)
    assert response.status_code == 422
    assert message in response.text
    short = client.post(f"/api/v1/users/{bob}/password", json={"password": "short"})
    assert short.status_code == 422
    assert "at least 10" in short.json()["detail"]
    assert login(tab(client), "bob") == 200  # nothing changed


def test_a_session_is_revoked_by_its_token_id(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_user(client, "bob", "viewer")
    browser = tab(client)
    assert login(browser, "bob") == 200
    from quanta.auth.models import ApiToken, TokenKind

    with session_scope(session_factory) as session:
        session_id = session.scalars(
            select(ApiToken.id).where(ApiToken.kind == TokenKind.SESSION)
        ).one()
    assert client.delete(f"/api/v1/tokens/{session_id}").status_code == 204
    assert browser.get("/api/v1/me").status_code == 401
    assert audit(client)[-1]["detail"] == {
        "name": "bob", "kind": "session", "user_id": users(client)["bob"]["id"],
    }  # fmt: skip


def test_user_actions_are_audited_with_details_and_no_secret(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_user(client, "ada", "admin")
    bob = make_user(client, "bob", "viewer")
    assert login(tab(client), "bob") == 200
    client.patch(f"/api/v1/users/{bob}", json={"role": "admin"})
    client.patch(f"/api/v1/users/{bob}", json={"disabled": True})
    client.patch(f"/api/v1/users/{bob}", json={"disabled": False})
    client.post(f"/api/v1/users/{bob}/password", json={"password": NEW_PASSWORD})
    generated = client.post(f"/api/v1/users/{bob}/password").json()["generated_password"]
    client.delete(f"/api/v1/users/{bob}/sessions")
    with session_scope(session_factory) as session:
        password_hash = session.get_one(User, bob).password_hash
    client.delete(f"/api/v1/users/{bob}")
    who = {"user_id": bob, "name": "bob"}
    assert [(e["action"], e["detail"]) for e in audit(client)[1:]] == [
        ("POST /api/v1/users", {**who, "role": "viewer"}),
        ("PATCH /api/v1/users/{user_id}", {**who, "role": {"old": "viewer", "new": "admin"}}),
        (
            "PATCH /api/v1/users/{user_id}",
            {**who, "disabled": {"old": False, "new": True}, "sessions_ended": 1},
        ),
        ("PATCH /api/v1/users/{user_id}", {**who, "disabled": {"old": True, "new": False}}),
        (
            "POST /api/v1/users/{user_id}/password",
            {**who, "password": "changed", "generated": False, "sessions_ended": 0},
        ),
        (
            "POST /api/v1/users/{user_id}/password",
            {**who, "password": "changed", "generated": True, "sessions_ended": 0},
        ),
        ("DELETE /api/v1/users/{user_id}/sessions", {**who, "sessions_ended": 0}),
        ("DELETE /api/v1/users/{user_id}", {**who, "role": "admin", "sessions_ended": 0}),
    ]
    with session_scope(session_factory) as session:
        stored = json.dumps(
            [[e.actor, e.action, e.target, e.detail] for e in session.scalars(select(AuditEntry))]
        )
    for secret in (PASSWORD, NEW_PASSWORD, generated, password_hash, "$argon2"):
        assert secret not in stored


def test_instance_and_channel_changes_name_the_fields_never_the_secrets(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    instance = client.post("/api/v1/instances", json={"name": "db1", "dsn": DSN}).json()
    url = f"/api/v1/instances/{instance['id']}"
    client.patch(
        url,
        json={
            "example_policy": "masked",
            "allow_broad_privileges": True,
            "execution_target_dsn": TARGET_DSN,
        },
    )
    client.patch(url, json={"dsn": DSN.replace("dsn-secret-pw", "dsn-new-pw"), "name": "db2"})
    client.patch(url, json={"example_policy": "masked"})  # nothing changes
    client.delete(url)
    channel = client.post(
        "/api/v1/channels", json={"name": "ops", "type": "slack", "url": WEBHOOK}
    ).json()
    curl = f"/api/v1/channels/{channel['id']}"
    client.patch(curl, json={"url": WEBHOOK.replace("secretpart", "newsecret"), "enabled": False})
    client.patch(curl, json={"min_load_share": 0.25, "quiet_start_hour": 22, "quiet_end_hour": 6})
    client.delete(curl)
    details = [e["detail"] for e in audit(client)]
    assert details[0] == {
        "instance_id": instance["id"], "name": "db1", "example_policy": "full",
        "allow_broad_privileges": False, "dsn": "set", "sandbox_dsn": None,
        "execution_target_dsn": None,
    }  # fmt: skip
    assert details[1:5] == [
        {
            "name": "db1",
            "changed": {
                "example_policy": {"old": "full", "new": "masked"},
                "allow_broad_privileges": {"old": False, "new": True},
                "execution_target_dsn": "changed",
            },
        },
        {"name": "db2", "changed": {"name": {"old": "db1", "new": "db2"}, "dsn": "changed"}},
        {"name": "db2", "changed": {}},
        {"name": "db2", "purge": False},
    ]
    assert details[5]["url"] == "set"
    assert details[5]["name"] == "ops"
    assert details[6:] == [
        {"name": "ops", "changed": {"url": "changed", "enabled": {"old": True, "new": False}}},
        {
            "name": "ops",
            "changed": {
                "min_load_share": {"old": 0.0, "new": 0.25},
                "quiet_start_hour": {"old": None, "new": 22},
                "quiet_end_hour": {"old": None, "new": 6},
            },
        },
        {"name": "ops"},
    ]
    with session_scope(session_factory) as session:
        stored = json.dumps([e.detail for e in session.scalars(select(AuditEntry))])
    secrets = ("dsn-secret-pw", "dsn-new-pw", "target-pw", "replica1", "secretpart", "newsecret")
    for secret in (*secrets, "hooks.slack"):
        assert secret not in stored


def test_failed_sign_ins_are_recorded_without_the_password(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_user(client, "ada", "admin")
    assert login(tab(client, "203.0.113.9"), "ada", "guess-number-one") == 401
    assert login(tab(client, "203.0.113.9"), "nobody", "guess-number-two") == 401
    assert login(tab(client), "ada") == 200  # a success is not a failure entry
    failed = [e for e in audit(client) if e["action"] == "failed sign-in"]
    assert [(e["actor"], e["target"], e["detail"]) for e in failed] == [
        ("ada", {"user": "ada"}, {"client": "203.0.113.9", "known_user": True}),
        ("nobody", {"user": "nobody"}, {"client": "203.0.113.9", "known_user": False}),
    ]
    assert all(e["at"] for e in failed)
    with session_scope(session_factory) as session:
        stored = json.dumps([[e.target, e.detail] for e in session.scalars(select(AuditEntry))])
    assert "guess-number" not in stored


def test_an_attacker_elsewhere_cannot_lock_the_user_out(
    client: TestClient, settings: Settings
) -> None:
    make_user(client, "ada", "admin")
    limited = settings.model_copy(
        update={"login_rate_limit": "3/minute", "login_address_rate_limit": "5/minute"}
    )
    client.app.state.rate_limiter = RateLimiter(limited)  # type: ignore[attr-defined]
    attacker = tab(client, "198.51.100.7")
    codes = [login(attacker, "ada", f"guess-{i}") for i in range(5)]
    assert codes == [401, 401, 401, 429, 429]  # the attacker is slowed down ...
    assert login(tab(client, "192.0.2.10"), "ada") == 200  # ... the real user is not
    # The attacker's address is also limited across names (password spraying).
    sprayed = [login(attacker, name, "guess") for name in ("bob", "cy", "dee")]
    assert sprayed == [429, 429, 429]  # 5 attempts from this address were counted already
    other = tab(client, "198.51.100.8")
    assert [login(other, f"user{i}", "guess") for i in range(6)] == [401] * 5 + [429]


def test_a_user_whose_session_sent_a_batch_can_be_deleted(client: TestClient) -> None:
    # An ingest batch references the session row that sent it: deleting the user must not
    # trip over that reference (their session rows are revoked and detached, not deleted).
    make_user(client, "ada", "admin")
    bob = make_user(client, "bob", "admin")
    browser = tab(client)
    signed = browser.post("/api/v1/auth/login", json={"name": "bob", "password": PASSWORD})
    event = {"ts": "2026-11-25T10:00:00+00:00", "query": "SELECT 1", "query_time": 0.5}
    body = {"batch_id": "from-a-session", "instance": "db1", "events": [event]}
    sent = browser.post(
        "/api/v1/ingest", json=body, headers={"X-CSRF-Token": signed.json()["csrf_token"]}
    )
    assert sent.status_code == 202, sent.text
    assert client.delete(f"/api/v1/users/{bob}").status_code == 204
    assert browser.get("/api/v1/me").status_code == 401
    assert "bob" not in users(client)
