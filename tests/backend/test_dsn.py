"""DSNs to connection options, data-driven (tests/backend/data/dsns.yaml): the one parser
the server and the agent share, both socket spellings, errors that name the wrong part."""

from pathlib import Path
from typing import Any

import pytest

from quanta.core.mysql import ConnectionOptions, InvalidDsn, parse_dsn, redact_dsn
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "dsns.yaml").read_text(encoding="utf-8")
)
DEFAULTS: dict[str, Any] = {"host": "localhost", "user": ""}


def case_id(case: dict[str, Any]) -> str:
    return ("agent " if case.get("agent") else "") + case["dsn"].strip()


def test_the_fixture_covers_both_sides_and_both_spellings() -> None:
    assert len(CASES) >= 20
    assert any(c.get("agent") for c in CASES)
    assert any(not c.get("agent") for c in CASES)
    for spelling in ("?socket=", "?unix_socket="):
        assert any(spelling in c["dsn"] and "options" in c for c in CASES), spelling


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_dsn(case: dict[str, Any]) -> None:
    user_required = not case.get("agent", False)
    if "error" in case:
        with pytest.raises(InvalidDsn, match=case["error"]) as refused:
            parse_dsn(case["dsn"], user_required=user_required)
        assert "secretpw" not in str(refused.value)
        return
    options = parse_dsn(case["dsn"], user_required=user_required)
    assert options == ConnectionOptions(**{**DEFAULTS, **case["options"]})
    if options.password:
        assert options.password not in repr(options)


def test_invalid_dsn_is_a_value_error() -> None:
    """The agent's callers catch ValueError (configuration errors) around the parser."""
    assert issubclass(InvalidDsn, ValueError)


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("mysql://ro:s3cret@db:3306/", "mysql://ro:***@db:3306/"),
        ("mysql://ro@db/", "mysql://ro@db/"),
        ("mysql://ro:p%40ss@/?socket=/tmp/my.sock", "mysql://ro:***@/?socket=/tmp/my.sock"),
    ],
)
def test_redact(dsn: str, shown: str) -> None:
    assert redact_dsn(dsn) == shown


def test_doctests() -> None:
    import doctest

    from quanta.analysis import dsn

    result = doctest.testmod(dsn)
    assert (result.attempted, result.failed) == (3, 0)
