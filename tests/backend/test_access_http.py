"""HTTP hardening: security headers, CORS closed by default, body limits, secret keys."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from pydantic import ValidationError

from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.main import create_app
from tests.fixtures.store import migrate_store

ADMIN = {"Authorization": "Bearer qnt_test_admin_token"}


def test_security_headers_on_api_ui_and_errors(client: TestClient) -> None:
    for path in ("/api/v1/instances", "/", "/api/v1/nope", "/healthz"):
        headers = client.get(path).headers
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["x-frame-options"] == "DENY"
        csp = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp
        assert "script-src 'self';" in csp  # no inline or remote scripts for the SPA
        assert "strict-transport-security" not in headers  # plain http
    docs_csp = client.get("/docs").headers["content-security-policy"]
    assert "script-src 'self';" in docs_csp  # Swagger UI and ReDoc are served by the app
    assert "frame-ancestors 'none'" in docs_csp


def test_cors_is_closed_by_default(client: TestClient) -> None:
    origin = {"Origin": "https://evil.example"}
    assert "access-control-allow-origin" not in client.get("/api/v1/me", headers=origin).headers
    preflight = client.options(
        "/api/v1/instances",
        headers={**origin, "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in preflight.headers


@pytest.fixture
def cors_client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        env="test", data_dir=tmp_path / "cors", cors_allow_origins=["https://ui.example"]
    )
    migrate_store(settings)
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token="qnt_test_admin_token")
    with TestClient(app) as test_client:
        yield test_client
    app.state.engine.dispose()


def test_cors_allows_only_listed_origins(cors_client: TestClient) -> None:
    allowed = cors_client.options(
        "/api/v1/instances",
        headers={"Origin": "https://ui.example", "Access-Control-Request-Method": "POST"},
    )
    assert allowed.headers["access-control-allow-origin"] == "https://ui.example"
    assert allowed.headers["access-control-allow-credentials"] == "true"
    other = cors_client.get(
        "/api/v1/instances", headers={**ADMIN, "Origin": "https://evil.example"}
    )
    assert other.status_code == 200
    assert "access-control-allow-origin" not in other.headers


def test_oversized_bodies_are_413_before_auth(client: TestClient, settings: Settings) -> None:
    limit = settings.http_max_body_bytes
    big = b'{"text": "' + b"x" * limit + b'"}'
    anonymous = TestClient(client.app)
    refused = anonymous.post(
        "/api/v1/annotations", content=big, headers={"Content-Type": "application/json"}
    )
    assert refused.status_code == 413
    assert refused.json() == {
        "detail": f"Request body exceeds {limit} bytes: send less per request."
    }
    assert refused.headers["x-content-type-options"] == "nosniff"


def test_streamed_bodies_are_cut_off_at_the_limit(client: TestClient, settings: Settings) -> None:
    limit = settings.http_max_body_bytes
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(4 * limit // 65536):
            sent.append(65536)
            yield b"x" * 65536

    refused = client.post(
        "/api/v1/annotations", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert refused.status_code == 413
    assert "exceeds" in refused.json()["detail"]


def test_ingest_has_its_own_larger_limit(client: TestClient, settings: Settings) -> None:
    # Over the general limit, under the ingest one: it reaches the decoder (422, not 413).
    body = b"x" * (settings.http_max_body_bytes + 1)
    response = client.post("/api/v1/ingest", content=body)
    assert response.status_code == 422
    too_big = client.post("/api/v1/ingest", content=b"x" * (settings.ingest_max_body_bytes + 1))
    assert too_big.status_code == 413


KEY = Fernet.generate_key().decode()


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("change-me-please-change-me-please-change-me=", "placeholder"),
        ("not-a-key", "not a Fernet key"),
        ("A" * 43 + "=", "not random"),
        ("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "not random"),  # hex digits
    ],
)
def test_production_refuses_default_and_placeholder_keys(key: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(env="production", secret_key=key)


def test_production_accepts_a_generated_key_and_development_any() -> None:
    assert Settings(env="production", secret_key=KEY).secret_key is not None
    assert Settings(env="development", secret_key="change-me").secret_key is not None


def test_bad_rate_limits_are_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="login_rate_limit"):
        Settings(login_rate_limit="lots")


def test_default_rate_limits_are_limits() -> None:
    # Defaults skip the validator (it imports `limits` at every start): they must parse.
    from limits import parse

    for name in ("login_rate_limit", "login_address_rate_limit", "ingest_rate_limit"):
        field = Settings.model_fields[name]
        assert field.validate_default is False
        assert parse(field.default).amount > 0
