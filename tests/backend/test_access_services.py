"""Access control on the production stores: rate limits shared through a real Redis, and the
access-control migration, sign-in, purge and out-of-range values on a real PostgreSQL."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from fastapi.testclient import TestClient

from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import create_db_engine, session_scope
from quanta.core.http import RateLimiter
from quanta.core.migrate import alembic_config, upgrade_to_head
from quanta.main import create_app
from tests.fixtures.servers import PostgresServer, RedisServer
from tests.fixtures.store import migrate_store

services = pytest.mark.services

ACCESS_REVISION = "c4d8e2a61f07"


@services
def test_redis_counts_are_shared_by_every_api_process(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    settings = Settings(
        env="test", data_dir=tmp_path, redis_url=redis_server.url, login_rate_limit="4/minute"
    )
    first, second = RateLimiter(settings), RateLimiter(settings)  # two API processes
    key = f"addr:{uuid.uuid4()}"
    answers = [limiter.hit("login", key) for limiter in (first, second, first, second, first)]
    assert answers[:4] == [None, None, None, None]
    assert answers[4] is not None
    assert 0 < answers[4] <= 60
    assert second.hit("login", f"addr:{uuid.uuid4()}") is None  # other keys unaffected


def test_a_redis_outage_lets_requests_through(tmp_path: Path) -> None:
    from tests.fixtures.servers import free_port

    dead = Settings(env="test", data_dir=tmp_path, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    limiter = RateLimiter(dead)
    assert [limiter.hit("ingest", "1") for _ in range(3)] == [None, None, None]


@pytest.fixture
def pg_client(tmp_path: Path, postgres_server: PostgresServer) -> Iterator[TestClient]:
    url = postgres_server.create_database(f"access_{uuid.uuid4().hex[:12]}")
    settings = Settings(env="test", data_dir=tmp_path, database_url=url)
    migrate_store(settings)
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token="qnt_test_admin_token")
    with TestClient(app, headers={"Authorization": "Bearer qnt_test_admin_token"}) as client:
        yield client
    app.state.engine.dispose()


@services
def test_access_control_on_postgresql(pg_client: TestClient) -> None:
    made = pg_client.post(
        "/api/v1/users", json={"name": "ada", "password": "correct horse battery", "role": "admin"}
    )
    assert made.status_code == 201
    tab = TestClient(pg_client.app)
    login = tab.post(
        "/api/v1/auth/login", json={"name": "ada", "password": "correct horse battery"}
    )
    assert login.status_code == 200
    csrf = login.json()["csrf_token"]
    created = tab.post(
        "/api/v1/tokens",
        json={"name": "agent", "scopes": ["ingest"], "instances": ["db1"]},
        headers={"X-CSRF-Token": csrf},
    )
    assert created.status_code == 201
    listed = pg_client.get("/api/v1/tokens").json()
    assert [(t["name"], t["instances"]) for t in listed] == [("admin", None), ("agent", ["db1"])]
    assert pg_client.delete("/api/v1/queries/0123456789abcdef").status_code == 404
    audit = pg_client.get("/api/v1/audit").json()
    assert [(e["actor"], e["action"]) for e in audit] == [
        ("ada", "POST /api/v1/tokens"),
        ("admin", "POST /api/v1/users"),
    ]
    # An id PostgreSQL's integer cannot hold is the client's mistake, not a server error.
    huge = pg_client.get(f"/api/v1/instances/{2**70}")
    assert huge.status_code == 422
    assert "out of range" in huge.json()["detail"]


@services
def test_the_migration_goes_down_and_up_on_postgresql(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.create_database(f"access_{uuid.uuid4().hex[:12]}")
    settings = Settings(env="test", data_dir=tmp_path, database_url=url)
    upgrade_to_head(settings)
    config = alembic_config(settings)
    engine = create_db_engine(settings)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, f"{ACCESS_REVISION}@-1")
            command.upgrade(config, "heads")
    finally:
        engine.dispose()


def test_the_migration_goes_down_and_up_on_sqlite(tmp_path: Path) -> None:
    settings = Settings(env="test", data_dir=tmp_path)
    upgrade_to_head(settings)
    config = alembic_config(settings)
    engine = create_db_engine(settings)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, f"{ACCESS_REVISION}@-1")
            command.upgrade(config, "heads")
    finally:
        engine.dispose()
