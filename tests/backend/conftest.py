"""In-process app fixtures on a migrated SQLite store (no worker, no broker server).

`client` and `session_factory` come from tests/fixtures/app.py on these settings.
"""

from pathlib import Path

import pytest

from quanta.core.config import Settings
from tests.fixtures.app import ADMIN_TOKEN

__all__ = ["ADMIN_TOKEN"]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a private SQLite store and broker file."""
    return Settings(env="test", data_dir=tmp_path / "data", database_url=None, redis_url=None)
