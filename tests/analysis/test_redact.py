"""Credential redaction: the cases in data/redaction.yaml, and what every case must keep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.redact import MARKER, might_hold_secret, redact

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "redaction.yaml").read_text(encoding="utf-8")
)
SECRETS = ("sekret", "s3cret", "2470C0C06DEE42FD", "ZIgUREUg5PVg", "0123456789", "736b", "12345")


def test_the_corpus_covers_the_forms() -> None:
    assert len(CASES) >= 70
    assert sum("redacted" in case for case in CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c["form"] for c in CASES])
def test_redaction(case: dict[str, Any]) -> None:
    expected = case.get("redacted", case["sql"])
    assert redact(case["sql"]) == expected


@pytest.mark.parametrize("case", CASES, ids=[c["form"] for c in CASES])
def test_no_secret_survives_and_the_fingerprint_is_unchanged(case: dict[str, Any]) -> None:
    redacted = redact(case["sql"])
    if "redacted" in case:
        assert MARKER in redacted
        assert not any(secret.lower() in redacted.lower() for secret in SECRETS)
    assert fingerprint(redacted) == fingerprint(case["sql"])


@pytest.mark.parametrize("case", CASES, ids=[c["form"] for c in CASES])
def test_redaction_is_idempotent(case: dict[str, Any]) -> None:
    once = redact(case["sql"])
    assert redact(once) == once


def test_a_statement_without_any_credential_word_is_returned_as_is() -> None:
    sql = "SELECT o.id FROM shop.orders o WHERE o.status = 'new' AND o.total > 10"
    assert not might_hold_secret(sql)
    assert redact(sql) is sql
