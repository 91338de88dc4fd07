"""The table a DDL statement changes (data/ddl_tables.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from quanta.analysis.ddl import changed_table

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "ddl_tables.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:40] or "empty" for c in CASES])
def test_changed_table(case: dict[str, Any]) -> None:
    assert changed_table(case["sql"]) == case["table"]
