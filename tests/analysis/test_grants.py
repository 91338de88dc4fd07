"""Least privilege: SHOW GRANTS lines of MySQL 5.7/8.0 and MariaDB 10.x/11.x (data/grants.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.grants import (
    Grant,
    excess_privileges,
    granted,
    parse_grant,
    unreadable_schemas,
)
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "grants.yaml").read_text(encoding="utf-8")
)


def test_the_cases_cover_every_server_family() -> None:
    servers = {case["server"].split()[0] + " " + case["server"].split()[1][:2] for case in CASES}
    assert {"MySQL 5.", "MySQL 8.", "MariaDB 10", "MariaDB 11"} <= servers


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_excess_privileges(case: dict[str, Any]) -> None:
    assert excess_privileges(case["lines"]) == case["excess"]


def test_column_lists_and_levels() -> None:
    assert parse_grant(
        "GRANT SELECT (id, email), UPDATE (email) ON `shop`.`users` TO 'app'@'%'"
    ) == Grant(("SELECT", "UPDATE"), "`shop`.`users`")
    assert parse_grant("REVOKE INSERT ON `mysql`.* FROM `u`@`%`") is None


def test_granted_lists_what_the_page_shows() -> None:
    lines = [
        "GRANT USAGE ON *.* TO `u`@`%`",
        "GRANT SELECT, PROCESS ON *.* TO `u`@`%`",
        "GRANT `r` TO `u`@`%`",
    ]
    assert granted(lines) == ["SELECT ON *.*", "PROCESS ON *.*", "role `r`"]


def test_an_unparsable_line_raises() -> None:
    with pytest.raises(ValueError, match="not a GRANT line"):
        parse_grant("SHOW ME EVERYTHING")


SCHEMA_CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "schema_grants.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c["name"] for c in SCHEMA_CASES])
def test_unreadable_schemas(case: dict[str, Any]) -> None:
    assert unreadable_schemas(case["privileges"], case["schemas"]) == case["unreadable"]
