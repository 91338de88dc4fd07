"""Grouping rules: parse them strictly, apply them to whole names only."""

from __future__ import annotations

import pytest

from quanta.analysis.grouping import apply_rules, parse_rule, parse_rules


@pytest.mark.parametrize(
    ("rules", "fingerprint", "expected"),
    [
        (["orders_[0-9]+=orders_N"], "select * from orders_17", "select * from orders_N"),
        (["orders_[0-9]+=orders_N"], "select orders_17x from t", "select orders_17x from t"),
        (["orders_[0-9]+=orders_N"], "select * from db.orders_2 join orders_3",
         "select * from db.orders_N join orders_N"),
        ([r"(shop|crm)_v\d+=\1_vN"], "select * from crm_v3.t", "select * from crm_vN.t"),
        (["ORDERS_[0-9]+=orders_N"], "select * from orders_1", "select * from orders_N"),
        (["a_[0-9]=x", "a_[0-9]=y"], "select a_1 from t", "select x from t"),
        ([], "select a_1 from t", "select a_1 from t"),
        (["t_[0-9]+=t_N"], "select ? from t where a in(?+) and b=?",
         "select ? from t where a in(?+) and b=?"),
    ],
)  # fmt: skip
def test_apply_rules(rules: list[str], fingerprint: str, expected: str) -> None:
    assert apply_rules(fingerprint, parse_rules(rules)) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("orders_[0-9]+", "must look like PATTERN=REPLACEMENT"),
        ("=orders_N", "must look like PATTERN=REPLACEMENT"),
        ("orders_(=orders_N", "invalid pattern"),
        ("orders_[0-9]+=orders N", "must be a name"),
        ("orders_[0-9]+=", "must be a name"),
        (r"orders_[0-9]+=orders_\2", "invalid replacement"),
    ],
)
def test_bad_rules_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rule(text)
