"""Collector polls are cut into batches the server accepts."""

from __future__ import annotations

from quanta_agent.collectors import split_fields


def test_a_large_poll_is_split_and_nothing_is_lost_or_repeated() -> None:
    digests = [{"digest": str(n)} for n in range(1234)]
    parts = split_fields({"digests": digests, "digest_lost": 3}, 500)
    assert [len(part["digests"]) for part in parts] == [500, 500, 234]
    assert [row for part in parts for row in part["digests"]] == digests
    assert [part.get("digest_lost") for part in parts] == [3, None, None]


def test_lists_of_different_lengths_and_empty_polls() -> None:
    parts = split_fields({"tables": [1, 2], "indexes": [1, 2, 3, 4, 5]}, 2)
    assert parts == [
        {"tables": [1, 2], "indexes": [1, 2]},
        {"tables": [], "indexes": [3, 4]},
        {"tables": [], "indexes": [5]},
    ]
    assert split_fields({}, 2) == []
    assert split_fields({"digests": [], "digest_lost": 1}, 2) == [{"digests": [], "digest_lost": 1}]
