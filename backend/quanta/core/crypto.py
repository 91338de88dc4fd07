"""Encryption at rest for stored credentials (instance DSNs, chat webhook URLs)."""

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from quanta.core.config import Settings
from quanta.core.files import ensure_data_dir, private_file

SECRET_KEY_FILE = "secret.key"


class SecretUnreadable(Exception):
    """A stored secret cannot be decrypted: the key changed since it was written."""


def _key(settings: Settings) -> bytes:
    """The configured key, else the one generated once into data_dir (API and worker share it)."""
    if settings.secret_key is not None:
        return settings.secret_key.get_secret_value().encode()
    path: Path = settings.data_dir / SECRET_KEY_FILE
    ensure_data_dir(settings)
    if not path.exists():
        try:
            # O_EXCL: when the API and the worker start together, only one key is ever written.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(Fernet.generate_key())
    private_file(path)  # a key written by an older version may be readable by others
    return path.read_bytes().strip()


def encrypt(settings: Settings, plaintext: str) -> str:
    """The stored (encrypted, URL-safe text) form of a secret."""
    return Fernet(_key(settings)).encrypt(plaintext.encode()).decode()


def decrypt(settings: Settings, stored: str) -> str:
    """The secret back from its stored form; SecretUnreadable when the key does not match."""
    try:
        return Fernet(_key(settings)).decrypt(stored.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "A stored credential cannot be decrypted: QUANTA_SECRET_KEY differs from the key "
            "it was encrypted with. Restore that key or enter the credential again."
        ) from exc
