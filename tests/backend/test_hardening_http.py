"""Smaller hardening points: private file modes, no-store on API answers, proxy headers
trusted only from QUANTA_TRUSTED_PROXIES, the Secure cookie behind a TLS proxy."""

import ipaddress
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from pydantic import ValidationError

from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import session_scope
from quanta.core.http import RateLimiter, forwarded_client
from quanta.core.migrate import upgrade_to_head
from quanta.main import create_app
from tests.fixtures.app import ADMIN_TOKEN
from tests.fixtures.store import migrate_store

PASSWORD = "correct horse battery"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A permissive umask, as many servers have: modes must not depend on it."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("open_umask")
def test_store_and_secret_key_are_private(tmp_path: Path) -> None:
    settings = Settings(env="test", data_dir=tmp_path / "data")
    upgrade_to_head(settings)
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=ADMIN_TOKEN)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    # While a connection is open SQLite keeps its -wal and -shm files beside the store.
    with TestClient(app, headers=admin) as client, app.state.engine.connect():
        assert client.post("/api/v1/tokens", json={"name": "x", "scopes": ["read"]}).is_success
        encrypt(settings, "mysql://u:p@db1/")  # generates the secret key file
        data = settings.data_dir
        assert mode(data) == 0o700
        assert {p.name: mode(p) for p in data.iterdir() if p.name.startswith("quanta.db")} == {
            "quanta.db": 0o600,
            "quanta.db-wal": 0o600,
            "quanta.db-shm": 0o600,
        }
        assert mode(data / "secret.key") == 0o600
    app.state.engine.dispose()


@pytest.mark.usefixtures("open_umask")
def test_an_older_install_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "quanta.db").touch(mode=0o644)
    (data / "secret.key").write_bytes(Fernet.generate_key())
    (data / "secret.key").chmod(0o644)
    settings = Settings(env="test", data_dir=data)
    upgrade_to_head(settings)
    encrypt(settings, "x")
    assert (mode(data), mode(data / "quanta.db"), mode(data / "secret.key")) == (
        0o700,
        0o600,
        0o600,
    )


def test_a_shared_directory_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    settings = Settings(env="test", data_dir=shared)
    upgrade_to_head(settings)
    assert mode(shared) == 0o1777
    assert mode(shared / "quanta.db") == 0o600


def test_api_answers_are_not_stored(client: TestClient) -> None:
    created = client.post("/api/v1/tokens", json={"name": "ci", "scopes": ["read"]})
    assert created.status_code == 201
    assert created.json()["token"]  # the secret, shown this once
    answers = [
        created,
        client.get("/api/v1/me"),
        client.get("/api/v1/tokens"),
        client.get("/api/v1/instances"),
        client.get("/api/v1/nope"),  # 404
        client.get("/api/v1/instances", headers={"Authorization": "Bearer wrong"}),  # 401
        client.post("/api/v1/auth/login", json={"name": "nobody", "password": PASSWORD}),
    ]
    assert [r.headers.get("cache-control") for r in answers] == ["no-store"] * len(answers)
    assert client.get("/").headers.get("cache-control") != "no-store"  # the UI may be cached


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "proto", "expected"),
    [
        # Untrusted peers: their headers are ignored, whatever they say.
        ("127.0.0.1", "203.0.113.7", "https", ("127.0.0.1", None)),
        ("192.0.2.1", "10.0.0.2", None, ("192.0.2.1", None)),
        ("testclient", "203.0.113.7", None, ("testclient", None)),
        # A trusted proxy: the rightmost address it did not add itself... or its chain's.
        ("10.0.0.2", "203.0.113.7", "https", ("203.0.113.7", "https")),
        ("10.0.0.2", "6.6.6.6, 203.0.113.7", "http", ("203.0.113.7", "http")),
        ("10.0.0.2", "6.6.6.6, 203.0.113.7, 10.0.0.9", None, ("203.0.113.7", None)),
        ("10.0.0.2", "10.0.0.8, 10.0.0.9", None, ("10.0.0.8", None)),
        ("10.0.0.2", None, "https", ("10.0.0.2", "https")),
        ("10.0.0.2", "2001:db8::1", "gopher", ("2001:db8::1", None)),
        ("::1", "203.0.113.7", "HTTPS", ("203.0.113.7", "https")),
    ],
)
def test_forwarded_client(
    peer: str, forwarded_for: str | None, proto: str | None, expected: tuple[str, str | None]
) -> None:
    trusted = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1/128"))
    assert forwarded_client(peer, forwarded_for, proto, trusted) == expected


def test_trusted_proxies_must_be_addresses() -> None:
    assert Settings(trusted_proxies=[" 10.0.0.0/8", "::1"]).trusted_proxies == ["10.0.0.0/8", "::1"]
    with pytest.raises(ValidationError, match=r"'proxy\.local' is not an IP address or CIDR"):
        Settings(trusted_proxies=["proxy.local"])


@pytest.fixture
def proxied_app(tmp_path: Path) -> Settings:
    """An app whose only trusted proxy is 10.0.0.2; sign-in limited to 3 per minute and
    client address."""
    settings = Settings(
        env="test",
        data_dir=tmp_path / "data",
        trusted_proxies=["10.0.0.2"],
        login_address_rate_limit="3/minute",
    )
    migrate_store(settings)
    return settings


def login_codes(client: TestClient, forwarded: list[str | None]) -> list[int]:
    """Sign-in attempts (each for another user name), one per X-Forwarded-For value."""
    codes = []
    for i, address in enumerate(forwarded):
        headers = {"X-Forwarded-For": address} if address else {}
        body = {"name": f"user{i}", "password": PASSWORD}
        codes.append(client.post("/api/v1/auth/login", json=body, headers=headers).status_code)
    return codes


def test_forged_forwarded_for_gets_no_fresh_bucket(proxied_app: Settings) -> None:
    app = create_app(proxied_app)
    forged = [f"198.51.100.{i}" for i in range(4)]
    with TestClient(app, client=("127.0.0.1", 5000)) as local:
        assert login_codes(local, forged) == [401, 401, 401, 429]
    app.state.rate_limiter = RateLimiter(proxied_app)
    with TestClient(app, client=("10.0.0.2", 5000)) as proxy:
        # Through the trusted proxy each client address has its own bucket...
        assert login_codes(proxy, forged) == [401, 401, 401, 401]
        # ...and one address is limited however many proxies it comes through.
        assert login_codes(proxy, ["203.0.113.7"] * 4) == [401, 401, 401, 429]
    app.state.engine.dispose()


def make_admin_user(app: object, settings: Settings) -> None:
    with TestClient(app, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as admin:  # type: ignore[arg-type]
        body = {"name": "ada", "password": PASSWORD, "role": "admin"}
        assert admin.post("/api/v1/users", json=body).status_code == 201


def session_cookie(client: TestClient, headers: dict[str, str] | None = None) -> str:
    response = client.post(
        "/api/v1/auth/login", json={"name": "ada", "password": PASSWORD}, headers=headers or {}
    )
    assert response.status_code == 200, response.text
    return next(c for c in response.headers.get_list("set-cookie") if c.startswith("quanta_s"))


@pytest.mark.parametrize(
    ("cookie_secure", "peer", "proto", "secure"),
    [
        ("auto", "10.0.0.2", "https", True),  # TLS ends at the trusted proxy
        ("auto", "10.0.0.2", "http", False),
        ("auto", "127.0.0.1", "https", False),  # not a trusted proxy: its header is ignored
        ("true", "127.0.0.1", None, True),
        ("false", "10.0.0.2", "https", False),
    ],
)
def test_secure_cookie_behind_a_tls_proxy(
    tmp_path: Path, cookie_secure: str, peer: str, proto: str | None, secure: bool
) -> None:
    settings = Settings(
        env="test",
        data_dir=tmp_path / "data",
        trusted_proxies=["10.0.0.2"],
        cookie_secure=cookie_secure,  # type: ignore[arg-type]  # as read from the environment
    )
    migrate_store(settings)
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=ADMIN_TOKEN)
    make_admin_user(app, settings)
    with TestClient(app, client=(peer, 5000)) as tab:
        cookie = session_cookie(tab, {"X-Forwarded-Proto": proto} if proto else None)
        assert ("secure" in cookie.lower().split("; ")) is secure, cookie
        hsts = tab.get("/healthz", headers={"X-Forwarded-Proto": proto or ""}).headers
        assert ("strict-transport-security" in hsts) is (proto == "https" and peer == "10.0.0.2")
    app.state.engine.dispose()
