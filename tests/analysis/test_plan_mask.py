"""Literal values in plans masked by the instance's example policy (data/plan_mask.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.plan_mask import mask_plan, mask_text
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "plan_mask.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_mask_plan(case: dict[str, Any]) -> None:
    assert mask_plan(case["plan"], example=case["example"]) == case["expected"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_masking_twice_changes_nothing(case: dict[str, Any]) -> None:
    once = mask_plan(case["plan"], example=case["example"])
    assert mask_plan(once, example=case["example"]) == once


def test_the_input_is_left_as_it_was() -> None:
    plan = {"attached_condition": "t.a = 'x'"}
    mask_plan(plan, example=None)
    assert plan == {"attached_condition": "t.a = 'x'"}


def test_mask_text_of_a_condition() -> None:
    assert mask_text("t.a = 'x' and t.b = 3", example="SELECT 1 FROM t WHERE b = 3") == (
        "t.a = ? and t.b = 3"
    )
