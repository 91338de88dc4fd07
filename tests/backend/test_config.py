"""Settings: embedded defaults and refusal of placeholder secrets in production."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from quanta.core.config import Settings
from quanta.core.sources import configured


def test_embedded_defaults_live_in_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, database_url=None, redis_url=None)
    assert settings.database_url_resolved == f"sqlite:///{tmp_path.resolve()}/quanta.db"
    assert settings.broker_url == f"sqla+sqlite:///{tmp_path.resolve()}/broker.db"


def test_configured_stores_win(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        database_url="postgresql+psycopg://q@db/q",
        redis_url="redis://cache:6379/0",
    )
    assert settings.database_url_resolved == "postgresql+psycopg://q@db/q"
    assert settings.broker_url == "redis://cache:6379/0"


FERNET_KEY = "kQ0b6bq2m0Yp5oJ1v1Yw6oC0Q2Jk3m9n6Y8o3K3m4uE="


@pytest.mark.parametrize("token", ["short", "change-me-to-a-long-random-token-please"])
def test_production_refuses_placeholder_admin_token(token: str) -> None:
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(env="production", admin_token=token, secret_key=FERNET_KEY)


def test_production_accepts_a_real_token() -> None:
    token = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c"
    settings = Settings(env="production", admin_token=token, secret_key=FERNET_KEY)
    assert settings.admin_token is not None


def test_configured_tells_whether_any_source_may_set_a_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.upper().startswith("QUANTA_"):
            monkeypatch.delenv(name)
    assert not configured()
    # Then every setting has its default: what `quanta digest` uses without loading them.
    assert Settings().grouping_rules == []
    monkeypatch.setenv("quanta_port", "8001")  # pydantic-settings reads any case
    assert configured()
    monkeypatch.delenv("quanta_port")
    (tmp_path / ".env").write_text("OTHER=1\n")
    assert configured()
