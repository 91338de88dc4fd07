"""A real `quanta run` (uvicorn, worker, beat as separate processes): the data directory and
the store are private whatever the umask, and a local client cannot choose its address with
X-Forwarded-For (uvicorn's own proxy headers, which trust 127.0.0.1, are off)."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures.quanta import quanta_run


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # the processes inherit it: a common server default
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("open_umask")
def test_private_files_and_untrusted_forwarded_for(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with quanta_run(data, settings={"QUANTA_LOGIN_RATE_LIMIT": "3/minute"}) as server:
        auth = {"Authorization": f"Bearer {server.token}"}
        # A DSN is stored encrypted: the API generates the secret key file.
        created = httpx.post(
            f"{server.url}/api/v1/instances",
            json={"name": "db1", "dsn": "mysql://quanta:secret@127.0.0.1:9/"},
            headers=auth,
            timeout=30,
        )
        assert created.status_code == 201, created.text
        assert created.headers["cache-control"] == "no-store"

        codes = []
        for i in range(4):
            response = httpx.post(
                f"{server.url}/api/v1/auth/login",
                json={"name": f"user{i}", "password": "not the password"},
                headers={"X-Forwarded-For": f"198.51.100.{i}"},
                timeout=30,
            )
            codes.append(response.status_code)
        assert codes == [401, 401, 401, 429]  # one bucket: the peer's, 127.0.0.1

        modes = {p.name: mode(p) for p in data.iterdir() if p.is_file()}
        assert mode(data) == 0o700
        for name in ("quanta.db", "quanta.db-wal", "quanta.db-shm", "secret.key", "admin-token"):
            assert modes.get(name) == 0o600, (name, modes)
        assert modes.get("broker.db") == 0o600, modes
