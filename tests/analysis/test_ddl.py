"""The table a DDL statement changes (data/ddl_tables.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.ddl import changed_table
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "ddl_tables.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:40] or "empty" for c in CASES])
def test_changed_table(case: dict[str, Any]) -> None:
    assert changed_table(case["sql"]) == case["table"]
