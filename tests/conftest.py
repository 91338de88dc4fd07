import pytest
from argon2 import PasswordHasher
from hypothesis import HealthCheck, settings

from quanta.auth import service as auth_service

pytest_plugins = ["tests.fixtures.servers", "tests.fixtures.app"]

# Speed is measured by bench/, never by timed tests: no deadline per example and no complaint
# about slow generation, which a machine busy with other passes (make test) would trigger.
settings.register_profile("quanta", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("quanta")

# The least argon2 allows: a hash or a check at Quanta's cost (64 MiB, 3 passes) takes 0.23 s
# of CPU, and the account tests make some hundred of them.
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
CHEAP_DUMMY_HASH = CHEAP_HASHER.hash("quanta-timing-equaliser")


# What a test marked ``long`` takes on a quiet 2-core machine unless its mark says
# (``pytest.mark.long(seconds=N)``).
LONG_SECONDS = 20


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long`` run first, the longest first: started last, one would keep a
    pytest-xdist worker busy long after the others ran out of tests."""

    def seconds(item: pytest.Item) -> float:
        mark = item.get_closest_marker("long")
        return 0 if mark is None else mark.kwargs.get("seconds", LONG_SECONDS)

    items.sort(key=seconds, reverse=True)


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passwords hashed in the test process cost next to nothing; processes the tests start
    (`quanta user`, `quanta run`) keep the real cost, which test_access_login checks. A test
    wanting the real hasher in process calls ``monkeypatch.undo()``."""
    monkeypatch.setattr(auth_service, "_hasher", CHEAP_HASHER)
    monkeypatch.setattr(auth_service, "_DUMMY_HASH", CHEAP_DUMMY_HASH)
