"""A real `quanta run` (uvicorn, worker, beat as separate processes): the data directory and
the store are private whatever the umask, and a local client cannot choose its address with
X-Forwarded-For (uvicorn's own proxy headers, which trust 127.0.0.1, are off); `quanta
serve` believes it only from QUANTA_TRUSTED_PROXIES."""

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from quanta.core.config import Settings
from tests.fixtures.quanta import VENV_BIN, quanta_run
from tests.fixtures.servers import free_port
from tests.fixtures.store import migrate_store
from tests.helpers import HTTP, wait_until_healthy

pytestmark = pytest.mark.long

START_SECONDS = 60.0


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
    with quanta_run(data, settings={"QUANTA_LOGIN_ADDRESS_RATE_LIMIT": "3/minute"}) as server:
        auth = {"Authorization": f"Bearer {server.token}"}
        # A DSN is stored encrypted: the API generates the secret key file.
        created = HTTP.post(
            f"{server.url}/api/v1/instances",
            json={"name": "db1", "dsn": "mysql://quanta:secret@127.0.0.1:9/"},
            headers=auth,
            timeout=30,
        )
        assert created.status_code == 201, created.text
        assert created.headers["cache-control"] == "no-store"

        # One bucket: the peer's (127.0.0.1), whatever X-Forwarded-For says.
        assert forged_logins(server.url) == [401, 401, 401, 429]

        modes = {p.name: mode(p) for p in data.iterdir() if p.is_file()}
        assert mode(data) == 0o700
        for name in ("quanta.db", "quanta.db-wal", "quanta.db-shm", "secret.key", "admin-token"):
            assert modes.get(name) == 0o600, (name, modes)
        assert modes.get("broker.db") == 0o600, modes


def forged_logins(url: str) -> list[int]:
    """Four failed sign-ins, each for another name and from another forged address."""
    codes = []
    for i in range(4):
        response = HTTP.post(
            f"{url}/api/v1/auth/login",
            json={"name": f"user{i}", "password": "not the password"},
            headers={"X-Forwarded-For": f"198.51.100.{i}"},
            timeout=30,
        )
        codes.append(response.status_code)
    return codes


@pytest.mark.parametrize(
    ("trusted", "codes"),
    [
        (None, [401, 401, 401, 429]),  # default: nobody's X-Forwarded-For is believed
        ('["127.0.0.1"]', [401, 401, 401, 401]),  # a listed proxy: one bucket per client
    ],
)
def test_quanta_serve_trusts_only_listed_proxies(
    tmp_path: Path, trusted: str | None, codes: list[int]
) -> None:
    port = free_port()
    env = {**os.environ, "QUANTA_DATA_DIR": str(tmp_path / "data"), "QUANTA_ENV": "test",
           "QUANTA_PORT": str(port), "QUANTA_LOGIN_ADDRESS_RATE_LIMIT": "3/minute"}  # fmt: skip
    env.pop("QUANTA_TRUSTED_PROXIES", None)
    if trusted:
        env["QUANTA_TRUSTED_PROXIES"] = trusted
    quanta = str(VENV_BIN / "quanta")
    # The store as `quanta migrate` leaves it (that command runs in tests/fixtures/cluster.py).
    migrate_store(Settings(env="test", data_dir=tmp_path / "data"))
    process = subprocess.Popen(
        [quanta, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process, START_SECONDS)
        assert forged_logins(url) == codes
    finally:
        process.terminate()
        process.wait(timeout=15)
