"""In-process app fixtures on a migrated SQLite store (no worker, no broker server)."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.migrate import upgrade_to_head
from quanta.main import create_app

ADMIN_TOKEN = "qnt_test_admin_token"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a private SQLite store and broker file."""
    return Settings(env="test", data_dir=tmp_path / "data", database_url=None, redis_url=None)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A test client for an app on a freshly migrated store with an admin token."""
    upgrade_to_head(settings)
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=ADMIN_TOKEN)
    with TestClient(app, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as test_client:
        yield test_client
    app.state.engine.dispose()


@pytest.fixture
def session_factory(client: TestClient) -> sessionmaker[Session]:
    """Sessions on the same store as `client`."""
    factory: sessionmaker[Session] = client.app.state.session_factory  # type: ignore[attr-defined]
    return factory
