"""Stored credentials are encrypted with the configured or the generated key."""

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from quanta.core.config import Settings
from quanta.core.crypto import SECRET_KEY_FILE, SecretUnreadable, decrypt, encrypt


def test_round_trip_with_generated_key_persists_the_key(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    stored = encrypt(settings, "mysql://ro:s3cret@db:3306/")
    assert "s3cret" not in stored
    assert (tmp_path / SECRET_KEY_FILE).stat().st_mode & 0o777 == 0o600
    # A second process with the same data_dir reads the same key.
    assert decrypt(Settings(data_dir=tmp_path), stored) == "mysql://ro:s3cret@db:3306/"


def test_configured_key_wins_and_a_different_key_is_a_clear_error(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()
    stored = encrypt(Settings(data_dir=tmp_path, secret_key=key), "hook")
    assert not (tmp_path / SECRET_KEY_FILE).exists()
    other = Settings(data_dir=tmp_path, secret_key=Fernet.generate_key().decode())
    with pytest.raises(SecretUnreadable, match="QUANTA_SECRET_KEY differs"):
        decrypt(other, stored)


def test_production_requires_a_secret_key() -> None:
    with pytest.raises(ValueError, match="QUANTA_SECRET_KEY is required in production"):
        Settings(env="production", admin_token="x" * 30)
