"""UI users: password sign-in with a session cookie, CSRF on cookie writes, roles, sign-out,
expiry and the sign-in rate limit."""

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from quanta.auth.models import ApiToken, TokenKind
from quanta.auth.service import hash_token, purge_ended_sessions
from quanta.core.config import Settings
from quanta.core.db import session_scope, utcnow
from quanta.core.http import RateLimiter

PASSWORD = "correct horse battery"


def make_user(client: TestClient, name: str, role: str) -> None:
    response = client.post("/api/v1/users", json={"name": name, "password": PASSWORD, "role": role})
    assert response.status_code == 201, response.text


def browser(client: TestClient, base_url: str = "http://testserver") -> TestClient:
    """A client without the admin token, like a browser tab."""
    return TestClient(client.app, base_url=base_url)


def sign_in(tab: TestClient, name: str, password: str = PASSWORD) -> str:
    response = tab.post("/api/v1/auth/login", json={"name": name, "password": password})
    assert response.status_code == 200, response.text
    csrf: str = response.json()["csrf_token"]
    return csrf


def test_sign_in_sets_a_strict_httponly_cookie(client: TestClient) -> None:
    make_user(client, "ada", "admin")
    tab = browser(client)
    response = tab.post("/api/v1/auth/login", json={"name": "ada", "password": PASSWORD})
    assert response.status_code == 200
    body = response.json()
    assert body["user"] == "ada"
    assert body["role"] == "admin"
    cookies = {c.split("=", 1)[0]: c for c in response.headers.get_list("set-cookie")}
    session_cookie = cookies["quanta_session"].lower()
    assert "httponly" in session_cookie
    assert "samesite=strict" in session_cookie
    assert "path=/" in session_cookie
    assert "secure" not in session_cookie  # plain http: a Secure cookie would never return
    assert "max-age=43200" in session_cookie
    csrf_cookie = cookies["quanta_csrf"].lower()
    assert "httponly" not in csrf_cookie  # the page reads it
    assert f"quanta_csrf={body['csrf_token']}" in cookies["quanta_csrf"]
    me = tab.get("/api/v1/me").json()
    assert me == {
        "name": "ada", "scopes": ["admin"], "user": "ada", "role": "admin",
        "csrf_token": body["csrf_token"],
    }  # fmt: skip


def test_an_unknown_name_is_verified_against_a_hash_as_costly_as_a_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dummy hash (made ahead, not at import) has the hasher's parameters and verifies."""
    from argon2 import PasswordHasher

    from quanta.auth import service

    monkeypatch.undo()  # Quanta's own hasher, not tests/conftest.py's cheap one
    assert service._hasher.check_needs_rehash(service._PREHASHED_DUMMY) is False
    assert service._DUMMY_HASH == service._PREHASHED_DUMMY
    hasher = PasswordHasher()
    assert not hasher.check_needs_rehash(service._DUMMY_HASH)
    assert hasher.verify(service._DUMMY_HASH, "quanta-timing-equaliser")


def test_cookie_is_secure_over_https(client: TestClient) -> None:
    make_user(client, "ada", "admin")
    tab = browser(client, base_url="https://testserver")
    response = tab.post("/api/v1/auth/login", json={"name": "ada", "password": PASSWORD})
    session_cookie = next(
        c for c in response.headers.get_list("set-cookie") if c.startswith("quanta_session=")
    )
    assert "secure" in session_cookie.lower()
    assert "strict-transport-security" in response.headers
    assert tab.get("/api/v1/me").status_code == 200


def test_wrong_password_and_unknown_user_look_the_same(client: TestClient) -> None:
    make_user(client, "ada", "viewer")
    tab = browser(client)
    wrong = tab.post("/api/v1/auth/login", json={"name": "ada", "password": "nope"})
    unknown = tab.post("/api/v1/auth/login", json={"name": "eve", "password": PASSWORD})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"detail": "Unknown user name or wrong password."}
    assert "set-cookie" not in wrong.headers
    assert tab.get("/api/v1/instances").status_code == 401


def test_cookie_writes_need_the_csrf_header(client: TestClient) -> None:
    make_user(client, "ada", "admin")
    tab = browser(client)
    csrf = sign_in(tab, "ada")
    assert tab.get("/api/v1/instances").status_code == 200  # reads need no header
    missing = tab.post("/api/v1/instances", json={"name": "db1"})
    assert missing.status_code == 403
    assert "X-CSRF-Token" in missing.json()["detail"]
    wrong = tab.post("/api/v1/instances", json={"name": "db1"}, headers={"X-CSRF-Token": "x"})
    assert wrong.status_code == 403
    made = tab.post("/api/v1/instances", json={"name": "db1"}, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201
    # The audit log names the user; their annotations are attributed to them too.
    assert client.get("/api/v1/audit").json()[0]["actor"] == "ada"
    note = tab.post("/api/v1/annotations", json={"text": "deploy"}, headers={"X-CSRF-Token": csrf})
    assert note.status_code == 201, note.text


def test_viewer_reads_but_cannot_administer(client: TestClient) -> None:
    make_user(client, "vic", "viewer")
    tab = browser(client)
    csrf = sign_in(tab, "vic")
    assert tab.get("/api/v1/me").json()["role"] == "viewer"
    assert tab.get("/api/v1/queries").status_code == 200
    refused = tab.post("/api/v1/instances", json={"name": "x"}, headers={"X-CSRF-Token": csrf})
    assert refused.status_code == 403
    # Told in a user's terms (a role), not a token's: they signed in with a password.
    assert refused.json()["detail"] == (
        "Signed in as 'vic' (viewer): this needs the 'admin' permission, which admins have. "
        "An admin can change your role."
    )
    assert tab.get("/api/v1/tokens").status_code == 403


def test_sign_out_ends_the_session(client: TestClient) -> None:
    make_user(client, "ada", "admin")
    tab = browser(client)
    sign_in(tab, "ada")
    stolen = tab.cookies.get("quanta_session")
    out = tab.post("/api/v1/auth/logout")
    assert out.status_code == 204
    cleared = sorted(c.split("=", 1)[0] for c in out.headers.get_list("set-cookie"))
    assert cleared == ["quanta_csrf", "quanta_session"]
    assert all("Max-Age=0" in c for c in out.headers.get_list("set-cookie"))
    replay = browser(client)
    replay.cookies.set("quanta_session", stolen or "")
    ended = replay.get("/api/v1/instances")
    assert ended.status_code == 401
    assert ended.json()["detail"] == "Your session has ended: sign in again."


def test_sessions_expire_and_are_not_listed_as_tokens(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_user(client, "ada", "admin")
    tab = browser(client)
    sign_in(tab, "ada")
    assert [t["name"] for t in client.get("/api/v1/tokens").json()] == ["admin"]
    with session_scope(session_factory) as session:
        session.execute(
            update(ApiToken)
            .where(ApiToken.kind == TokenKind.SESSION)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    assert tab.get("/api/v1/instances").status_code == 401


def test_ended_sessions_are_purged_and_live_ones_kept(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_user(client, "ada", "admin")
    signed_out, expiring, live = browser(client), browser(client), browser(client)
    for tab in (signed_out, expiring, live):
        sign_in(tab, "ada")
    assert signed_out.post("/api/v1/auth/logout").status_code == 204
    expiring_secret = expiring.cookies.get("quanta_session") or ""
    with session_scope(session_factory) as session:
        session.execute(
            update(ApiToken)
            .where(ApiToken.token_hash == hash_token(expiring_secret))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    with session_scope(session_factory) as session:
        assert purge_ended_sessions(session=session, now=utcnow()) == 2
    with session_scope(session_factory) as session:
        kinds = sorted(session.scalars(select(ApiToken.kind)))
        assert kinds == [TokenKind.API, TokenKind.SESSION]  # the admin token and the live one
        assert purge_ended_sessions(session=session, now=utcnow()) == 0
    assert live.get("/api/v1/instances").status_code == 200
    assert [t["name"] for t in client.get("/api/v1/tokens").json()] == ["admin"]


def test_an_api_token_in_the_session_cookie_is_refused(client: TestClient) -> None:
    tab = browser(client)
    tab.cookies.set("quanta_session", "qnt_test_admin_token")
    assert tab.get("/api/v1/instances").status_code == 401


def test_sign_in_is_rate_limited(client: TestClient, settings: Settings) -> None:
    make_user(client, "ada", "admin")
    limited = settings.model_copy(update={"login_rate_limit": "3/minute"})
    client.app.state.rate_limiter = RateLimiter(limited)  # type: ignore[attr-defined]
    tab = browser(client)
    codes = [
        tab.post("/api/v1/auth/login", json={"name": "ada", "password": "wrong"}).status_code
        for _ in range(3)
    ]
    blocked = tab.post("/api/v1/auth/login", json={"name": "ada", "password": PASSWORD})
    assert codes == [401, 401, 401]
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) >= 1
    assert "Too many login requests" in blocked.json()["detail"]


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        ({"name": "ada", "password": PASSWORD, "role": "root"}, 422, "Input should be 'viewer'"),
        ({"name": "bob", "password": "short", "role": "viewer"}, 422, "at least 10"),
        ({"name": "ada", "password": PASSWORD, "role": "viewer"}, 409, "exists already"),
    ],
)
def test_bad_users_are_refused(
    client: TestClient, payload: dict[str, str], status: int, message: str
) -> None:
    make_user(client, "ada", "admin")
    response = client.post("/api/v1/users", json=payload)
    assert response.status_code == status
    assert message in response.text
    assert [u["name"] for u in client.get("/api/v1/users").json()] == ["ada"]


def test_a_cross_site_form_cannot_sign_in(client: TestClient) -> None:
    # A form on another site can POST text/plain without a preflight, never JSON: sign-in
    # only reads a JSON body, so a forged sign-in (into the attacker's account) fails.
    make_user(client, "ada", "admin")
    forged = browser(client).post(
        "/api/v1/auth/login",
        content=f'{{"name": "ada", "password": "{PASSWORD}"}}',
        headers={"Content-Type": "text/plain"},
    )
    assert forged.status_code == 422
    assert "set-cookie" not in forged.headers


def test_sign_in_options_say_whether_password_sign_in_works_yet(client: TestClient) -> None:
    tab = browser(client)  # not signed in: the sign-in page asks
    assert tab.get("/api/v1/auth/options").json() == {"password": False}
    make_user(client, "ann", "viewer")
    assert tab.get("/api/v1/auth/options").json() == {"password": True}
    user_id = next(u["id"] for u in client.get("/api/v1/users").json() if u["name"] == "ann")
    disabled = client.patch(f"/api/v1/users/{user_id}", json={"disabled": True})
    assert disabled.status_code == 200, disabled.text
    assert tab.get("/api/v1/auth/options").json() == {"password": False}
