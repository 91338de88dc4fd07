"""Credential redaction: the cases in data/redaction.yaml, and what every case must keep."""

from __future__ import annotations

import random
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.redact import MARKER, might_hold_secret, redact
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
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


# Pieces of credential statements; random sequences of them are hostile, often invalid, SQL.
PIECES = (
    "CREATE USER", "u", "@", "'h'", "IDENTIFIED", "BY", "PASSWORD", "(", ")", "'x'", '"y"',
    "'a''b'", "'c\\'d'", "0x1F", "b'01'", "-", "5", ",", ";", "SET", "FOR", "=", ":=", "AS",
    "USING", "VIA", "OR", "AES_ENCRYPT", "/*!80000", "*/", "/* c */", "-- z\n", "#k\n",
    "master_password", "REPLACE", "_utf8mb4", "N'q'", "`password`", "mysql", ".", "user",
    "INSERT", "UPDATE", "PREPARE", "s", "FROM", "'CREATE USER u IDENTIFIED BY ''p'''",
    "CONNECTION", "'mysql://a:b@c/d'", "\n", "x'AB'", "KDF", "DECODE", "1.5e3", "?",
    "ENCRYPT", "'unterminated",
)  # fmt: skip


def _two_literals_in_a_row(sql: str) -> bool:
    """Literals side by side that the server refuses (only strings concatenate)."""
    tokens = re.findall(r"'(?:[^'\\]|\\.|'')*'?|\S+", sql)
    return any(
        _literal(a) and _literal(b) and not (a[0] == b[0] == "'") for a, b in pairwise(tokens)
    ) or bool(re.search(r"_utf8mb4\s+[\d.-]", sql))


def _literal(token: str) -> bool:
    return token[0] in "'\"0123456789" or token[:2] in ("x'", "b'", "N'")


def test_random_statements_keep_their_fingerprint_and_redact_once() -> None:
    rng = random.Random(7)
    checked = 0
    while checked < 3000:
        sql = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        if _two_literals_in_a_row(sql):
            continue
        redacted = redact(sql)
        assert fingerprint(redacted) == fingerprint(sql), sql
        assert redact(redacted) == redacted, sql
        checked += 1
