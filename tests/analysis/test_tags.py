"""Query tags from comments: the cases in data/tags.yaml, the caps, and that tags never change
a fingerprint (over every case of data/fingerprints.txt)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from quanta.analysis.fingerprint import edge_comments, fingerprint, query_id
from quanta.analysis.tags import (
    MAX_KEY_CHARS,
    MAX_TAGS_CHARS,
    MAX_VALUE_CHARS,
    OTHER,
    TagCap,
    _block_comments,
    _lone_trailing_comment,
    bounded,
    canonical,
    from_canonical,
    parse_tags,
)
from tests.analysis.test_fingerprint import CASES as FINGERPRINT_CASES

DATA = Path(__file__).parent / "data"
CASES: list[dict[str, Any]] = yaml.safe_load((DATA / "tags.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:60] for c in CASES])
def test_tags(case: dict[str, Any]) -> None:
    tags = {k: str(v) for k, v in case["tags"].items()}
    assert parse_tags(case["sql"]) == tags
    assert from_canonical(canonical(tags)) == tags


def test_comments_leave_fingerprints_and_ids_alone() -> None:
    """Every fingerprint case, with tags before and after it, has the same fingerprint and
    query_id, and the tags are read from it."""
    tags = {"action": "checkout", "route": "/cart,x", "team": "pay"}
    commenter = "/*action='checkout',route='%2Fcart%2Cx',team='pay'*/"
    checked = 0
    for case in FINGERPRINT_CASES:
        expected = fingerprint(case.sql)
        probes = (f"{case.sql} /*'*/", f"/**/ {case.sql}")
        if case.sql.count("'") % 2 or any(fingerprint(probe) != expected for probe in probes):
            continue  # a cut text (open string, DIGEST_TEXT's "..."): anything appended counts
        checked += 1
        for tagged in (
            f"{case.sql} {commenter}",
            f"/* team=pay, action:checkout */ {case.sql}",
        ):
            assert fingerprint(tagged) == expected, tagged
            assert query_id(fingerprint(tagged)) == query_id(expected)
        if "/*" not in case.sql and "#" not in case.sql and "--" not in case.sql:
            assert parse_tags(f"{case.sql} {commenter}") == tags
    assert checked > 0.9 * len(FINGERPRINT_CASES)


def test_keys_and_values_are_length_capped() -> None:
    tags = parse_tags(f"SELECT 1 /* {'k' * 80}={'v' * 500} */")
    assert tags == {"k" * MAX_KEY_CHARS: "v" * MAX_VALUE_CHARS}
    many = {f"key{n:03}": "v" * MAX_VALUE_CHARS for n in range(20)}
    assert len(canonical(many)) <= MAX_TAGS_CHARS


def test_bounded_keeps_keys_and_caps_values() -> None:
    cap = TagCap({"team": {"a"}}, limit=2)
    assert bounded("request=1,team=a", {"team"}, cap) == "team=a"
    assert bounded("team=b", {"team"}, cap) == "team=b"
    assert bounded("team=c", {"team"}, cap) == f"team={OTHER}"
    assert bounded("team=b", {"team"}, cap) == "team=b"
    assert cap.added == [("team", "b")]
    assert bounded("", {"team"}, cap) == ""


def test_the_fast_reading_of_block_comments_is_the_tokenizers() -> None:
    """Without line comments, the comments are found without tokenizing (per statement in
    the agent): the same as the fingerprint's tokenizer finds, over every case here and
    every fingerprint case with comments added."""
    statements = [case["sql"] for case in CASES]
    for case in FINGERPRINT_CASES:
        statements += [
            case.sql,
            f"{case.sql} /*a='1'*/",
            f"/* b=2 */ {case.sql} ;",
            f"/* b=2 */ /*c:3*/ {case.sql} /*a='1'*/ ;\n",
        ]
    statements += [
        "/* only */", "/* a=1 */ /*", "SELECT 1 /*+ hint */", "SELECT '*/'",
        "SELECT 1 /*/ a=1 /* b=2 */", "SELECT '/*' /* a=1 */", "SELECT '*/' /*a=1*/",
        "SELECT 1 /* x /* a=1 */", "SELECT 1 /*!50000 a=1 */", "SELECT '/*', '*/' /*a=1*/",
    ]  # fmt: skip
    compared = lone = 0
    for sql in statements:
        if "#" in sql or "--" in sql or "/*" not in sql:
            continue
        compared += 1
        assert _block_comments(sql) == edge_comments(sql), sql
        trailing = _lone_trailing_comment(sql)
        if trailing is not None:
            lone += 1
            assert [trailing] == edge_comments(sql), sql
    assert compared > 900
    assert lone > 250
