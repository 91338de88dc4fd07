"""Quanta's own statements (data/own_statements.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.own import is_own
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "own_statements.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["fingerprint"][:50] for c in CASES])
def test_is_own(case: dict[str, Any]) -> None:
    assert is_own(case["fingerprint"]) is case["own"]
