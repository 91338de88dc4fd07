"""Stage profiles' pure part: which statements are new, what a ring still holds, the fold,
the server's merge and the ranked profile."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.grouping import parse_rules
from quanta.analysis.stages import (
    LOST_TIME,
    READ_OVERLAP_PS,
    HistoryCursor,
    Ring,
    StageEvent,
    StageSample,
    Statement,
    WaitEvent,
    fold_statements,
    merge_samples,
    rank_profile,
    take_new,
)

MS = 10**9  # picoseconds


def statement(
    thread: int, event: int, end: int, *, parent: int | None = None, wait: int = 10 * MS
) -> Statement:
    return Statement(thread, event, parent, "shop", f"d{event}", end - wait, end, wait)


def ids(statements: list[Statement]) -> list[tuple[int, int]]:
    return sorted((s.thread_id, s.event_id) for s in statements)


def test_a_statement_is_taken_once_across_polls() -> None:
    first = [statement(1, 10, 100 * MS), statement(2, 5, 101 * MS)]
    cursor, new = take_new(HistoryCursor(), top=first, nested=[])
    assert ids(new) == [(1, 10), (2, 5)]
    assert cursor.marks == {1: 10, 2: 5}
    assert cursor.read_from == 101 * MS - READ_OVERLAP_PS
    # The next read starts a second before the last end: both come back, with a new one.
    second = [*first, statement(1, 14, 2_000 * MS)]
    cursor, new = take_new(cursor, top=second, nested=[])
    assert ids(new) == [(1, 14)]
    assert cursor.marks == {1: 14, 2: 5}


def test_marks_are_kept_only_for_threads_read() -> None:
    cursor = HistoryCursor({1: 10, 2: 5, 3: 99}, read_from=50 * MS)
    cursor, new = take_new(cursor, top=[statement(1, 12, 6_000 * MS)], nested=[])
    assert ids(new) == [(1, 12)]
    assert cursor.marks == {1: 12}
    assert cursor.read_from == 6_000 * MS - READ_OVERLAP_PS


def test_read_from_never_goes_back() -> None:
    cursor = HistoryCursor({1: 10}, read_from=5_000 * MS)
    cursor, _ = take_new(cursor, top=[statement(1, 10, 4_500 * MS)], nested=[])
    assert cursor.read_from == 5_000 * MS
    cursor, _ = take_new(cursor, top=[], nested=[])
    assert cursor.read_from == 5_000 * MS


def test_a_nested_statement_comes_with_the_statement_it_runs_in() -> None:
    # CALL (event 20) runs a statement (21) that runs another (22): both end before the CALL.
    call = statement(1, 20, 300 * MS, wait=200 * MS)
    inner = statement(1, 21, 250 * MS, parent=20)
    innermost = statement(1, 22, 240 * MS, parent=21)
    # A poll while the CALL runs: its inner statements are not taken, nothing is marked.
    cursor, new = take_new(HistoryCursor({1: 19}), top=[], nested=[inner, innermost])
    assert new == []
    # The CALL ended: all three are taken, and the mark is the CALL's.
    cursor, new = take_new(cursor, top=[call], nested=[inner, innermost])
    assert ids(new) == [(1, 20), (1, 21), (1, 22)]
    assert cursor.marks == {1: 20}
    # Read again (their ids are above the mark): nothing twice.
    _, new = take_new(cursor, top=[call], nested=[inner, innermost])
    assert new == []


def test_a_ring_holds_what_ran_between_its_oldest_and_newest_events() -> None:
    assert Ring(rows=50, size=100, oldest_end=900).holds(0, 10)  # never filled
    full = Ring(rows=100, size=100, oldest_end=900, newest_end=2000)
    assert full.holds(900, 2000)
    assert not full.holds(899, 1000)  # its first events may be gone
    assert not full.holds(1000, 2001)  # it ended after the read
    assert not Ring(rows=100, size=100, oldest_end=None).holds(10**15, 10**15)


def test_fold_sums_stages_waits_and_lost_time() -> None:
    s = Statement(7, 40, None, "shop", "abc", 1_000 * MS, 1_012 * MS, 12 * MS)
    stages = [
        StageEvent(7, 41, 40, "stage/sql/starting", 1 * MS),
        StageEvent(7, 42, 40, "stage/sql/Sending data", 8 * MS),
        StageEvent(7, 50, 40, "stage/sql/Sending data", 2 * MS),
        StageEvent(8, 42, 40, "stage/sql/Sending data", 99 * MS),  # another thread's
    ]
    waits = [
        WaitEvent(7, 42, True, "wait/io/table/sql/handler", 5 * MS),
        WaitEvent(7, 50, True, "wait/io/table/sql/handler", 1 * MS),
        WaitEvent(7, 40, False, "wait/io/socket/sql/client_connection", MS // 2),
    ]
    samples, counts = fold_statements(
        [s],
        stages,
        waits,
        stage_ring=Ring(1, 10, 0),
        wait_ring=Ring(3, 10, 0),
        classify=lambda schema, digest: ("select ?", "Q1"),
    )
    sample = samples["Q1"]
    assert counts.statements == counts.sampled == 1
    assert sample.executions_sampled == sample.waits_sampled == 1
    assert sample.response == 12 * MS
    assert sample.stages == {"starting": [1 * MS, 1], "Sending data": [10 * MS, 2]}
    assert sample.waits == {
        ("Sending data", "wait/io/table/sql/handler"): [6 * MS, 2],
        (LOST_TIME, "wait/io/socket/sql/client_connection"): [MS // 2, 1],
    }
    profile = rank_profile(sample)
    assert [(r.stage, r.time, r.calls) for r in profile.stages] == [
        ("Sending data", 10 * MS, 2),
        ("starting", 1 * MS, 1),
    ]
    assert profile.lost_time == 1 * MS
    assert [(w.stage, w.event) for w in profile.waits] == [
        ("Sending data", "wait/io/table/sql/handler"),
        (LOST_TIME, "wait/io/socket/sql/client_connection"),
    ]


def test_statements_whose_stages_may_be_gone_are_not_sampled() -> None:
    early = Statement(1, 10, None, None, "a", 100, 200, 100)
    late = Statement(1, 20, None, None, "a", 600, 700, 100)
    unknown = Statement(1, 30, None, None, "zz", 800, 900, 100)
    samples, counts = fold_statements(
        [early, late, unknown],
        [StageEvent(1, 21, 20, "stage/sql/init", 100)],
        [],
        stage_ring=Ring(rows=10, size=10, oldest_end=500),
        wait_ring=Ring(rows=10, size=10, oldest_end=650),  # late's waits may be gone
        classify=lambda schema, digest: None if digest == "zz" else ("f", "Q"),
    )
    assert (counts.statements, counts.sampled, counts.unclassified) == (3, 1, 1)
    assert samples["Q"].executions_sampled == 1
    assert samples["Q"].waits_sampled == 0


def test_a_statement_whose_stages_outlast_it_has_no_negative_lost_time() -> None:
    s = Statement(1, 10, None, None, "a", 0, 100, 100)
    samples, _ = fold_statements(
        [s],
        [StageEvent(1, 11, 10, "stage/sql/init", 103)],
        [],
        stage_ring=Ring(1, 10, 0),
        wait_ring=None,
        classify=lambda schema, digest: ("f", "Q"),
    )
    assert samples["Q"].response == 103
    assert rank_profile(samples["Q"]).lost_time == 0


def wire(fingerprint: str, sampled: int, **stages: float) -> SimpleNamespace:
    return SimpleNamespace(
        fingerprint=fingerprint,
        bucket_start=datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
        executions_sampled=sampled,
        executions_total=sampled * 10,
        response_s=sum(stages.values()) + 0.001,
        waits_sampled=0,
        stages=[SimpleNamespace(stage=k, time_s=v, calls=sampled) for k, v in stages.items()],
        waits=[],
    )


def test_the_servers_grouping_rules_merge_samples() -> None:
    grouped = Fingerprinter(parse_rules(["shard_[0-9]+=shard_N"]))
    rows = [
        wire("select * from shard_1", 2, init=0.01),
        wire("select * from shard_2", 3, init=0.02),
    ]
    merged = merge_samples(rows, grouped)
    assert len(merged) == 1
    (sample,) = merged.values()
    assert sample.executions_sampled == 5
    assert sample.executions_total == 50
    assert sample.stages["init"] == pytest.approx([0.03, 5])


def test_rank_profile_of_nothing() -> None:
    profile = rank_profile(StageSample("f", executions_total=12))
    assert profile.stages == ()
    assert profile.lost_time == 0
    assert profile.executions_total == 12
