import pytest

pytest_plugins = ["tests.fixtures.servers", "tests.fixtures.app"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long`` run first: started last, one would keep a pytest-xdist worker
    busy long after the others ran out of tests (longest first balances the workers)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
