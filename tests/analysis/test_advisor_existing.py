"""Duplicate, redundant and unused existing indexes (pt-duplicate-key-checker's rules)."""

from __future__ import annotations

from typing import Any

import pytest

from quanta.analysis.advisor import parse_schema, review_indexes
from quanta.analysis.advisor.existing import review_table
from quanta.analysis.advisor.schema import Table

COLUMNS = {name: {"type": "int"} for name in ("id", "a", "b", "c")}


def table(
    indexes: list[dict[str, Any]], engine: str = "InnoDB", pk: tuple[str, ...] = ("id",)
) -> Table:
    snapshot = {
        "server": {"flavor": "mariadb", "version": "10.11.6"},
        "tables": {"db.t": {"engine": engine, "columns": COLUMNS, "primary_key": list(pk),
                            "indexes": indexes}},
    }  # fmt: skip
    return parse_schema(snapshot).tables["db.t"]


def findings(t: Table, usage: dict[str, int] | None = None) -> list[tuple[str, str, str]]:
    return [(f.index, f.kind.value, f.covered_by) for f in review_table(t, usage)]


@pytest.mark.parametrize(
    ("indexes", "expected"),
    [
        # Same columns twice: the later one goes.
        ([{"name": "i1", "columns": ["a", "b"]}, {"name": "i2", "columns": ["a", "b"]}],
         [("i2", "duplicate", "i1")]),
        # A unique index never goes for a non-unique duplicate.
        ([{"name": "i1", "columns": ["a"]}, {"name": "u1", "columns": ["a"], "unique": True}],
         [("i1", "duplicate", "u1")]),
        # Left-most prefix: redundant.
        ([{"name": "i1", "columns": ["a"]}, {"name": "i2", "columns": ["a", "b"]}],
         [("i1", "redundant", "i2")]),
        # Not a left-most prefix: both stay.
        ([{"name": "i1", "columns": ["b"]}, {"name": "i2", "columns": ["a", "b"]}], []),
        # A unique prefix enforces a constraint: it stays.
        ([{"name": "u1", "columns": ["a"], "unique": True}, {"name": "i2", "columns": ["a", "b"]}],
         []),
        # Directions differ: different orders, both stay.
        ([{"name": "i1", "columns": [{"name": "a", "desc": True}]},
          {"name": "i2", "columns": ["a", "b"]}], []),
        # A prefix length differs: not the same index.
        ([{"name": "i1", "columns": [{"name": "a", "sub_part": 4}]},
          {"name": "i2", "columns": ["a", "b"]}], []),
        # Implicit primary key suffix: (a) and (a, id) are one index; the longer spelling goes,
        # and only one of the two is reported.
        ([{"name": "i1", "columns": ["a"]}, {"name": "i2", "columns": ["a", "id"]}],
         [("i2", "duplicate", "i1")]),
        # An index on the primary key's own columns.
        ([{"name": "i1", "columns": ["id"]}], [("i1", "duplicate", "primary")]),
        # Ends with the primary key, nothing else like it: redefine without it.
        ([{"name": "i1", "columns": ["a", "b", "id"]}], [("i1", "primary_key_suffix", "primary")]),
        # Fulltext indexes are not B-trees: left alone.
        ([{"name": "f1", "columns": ["a"], "type": "FULLTEXT"},
          {"name": "i2", "columns": ["a", "b"]}], []),
    ],
)  # fmt: skip
def test_duplicates_and_redundant(
    indexes: list[dict[str, Any]], expected: list[tuple[str, str, str]]
) -> None:
    assert findings(table(indexes)) == expected


def test_prefix_of_a_composite_primary_key() -> None:
    # On InnoDB (a) holds (a, b) once the primary key is appended: the primary key itself.
    assert findings(table([{"name": "i1", "columns": ["a"]}], pk=("a", "b"))) == [
        ("i1", "duplicate", "primary")
    ]
    t = table([{"name": "i1", "columns": ["a"]}], "MyISAM", pk=("a", "b"))
    assert findings(t) == [("i1", "redundant", "primary")]


def test_myisam_has_no_implicit_suffix() -> None:
    t = table([{"name": "i1", "columns": ["a"]}, {"name": "i2", "columns": ["a", "id"]}], "MyISAM")
    assert findings(t) == [("i1", "redundant", "i2")]


def test_primary_key_suffix_ddl() -> None:
    [finding] = review_table(table([{"name": "i1", "columns": ["a", "b", "id"]}]))
    assert finding.ddl == "ALTER TABLE db.t DROP INDEX i1, ADD INDEX i1 (a, b)"


def test_duplicate_ddl_and_reason() -> None:
    [finding] = review_table(
        table([{"name": "i1", "columns": ["a"]}, {"name": "i2", "columns": ["a", "id"]}])
    )
    assert finding.ddl == "ALTER TABLE db.t DROP INDEX i2"
    assert finding.reason == (
        "i2 holds the same columns as i1 (InnoDB appends the primary key id to both)."
    )


def test_unused_from_usage_counts() -> None:
    t = table(
        [
            {"name": "used", "columns": ["a"]},
            {"name": "idle", "columns": ["b"]},
            {"name": "missing", "columns": ["c"]},
            {"name": "u1", "columns": ["b", "c"], "unique": True},
        ]
    )
    # Missing from the counts is unused too (INDEX_STATISTICS lists only used indexes); a
    # unique index is a constraint, never reported.
    assert findings(t, {"used": 12, "idle": 0}) == [
        ("idle", "redundant", "u1"),
        ("missing", "unused", ""),
    ]


def test_no_usage_no_unused_findings() -> None:
    assert findings(table([{"name": "i1", "columns": ["a"]}])) == []


def test_review_indexes_over_a_schema() -> None:
    schema = parse_schema(
        {
            "server": {"flavor": "mysql", "version": "8.0.36"},
            "tables": {
                "db.t": {"columns": COLUMNS, "primary_key": ["id"],
                         "indexes": [{"name": "i1", "columns": ["a"]}]},
                "db.u": {"columns": COLUMNS, "primary_key": ["id"],
                         "indexes": [{"name": "j1", "columns": ["b"]}]},
            },
        }
    )  # fmt: skip
    usage = {"db.u": {"j1": 0}}
    assert [(f.table, f.index, f.kind.value) for f in review_indexes(schema, usage=usage)] == [
        ("db.u", "j1", "unused")
    ]
    assert review_indexes(schema, ["db.t"], usage) == []
