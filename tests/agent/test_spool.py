"""The on-disk spool: order, durability across reopen, size cap, refusals; checkpoints."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from quanta_agent.checkpoint import (
    Checkpoint,
    FileIdentity,
    load_checkpoint,
    save_checkpoint,
)
from quanta_agent.spool import REJECTED_DIR, Spool

FILE = FileIdentity(dev=2049, ino=1234, head_len=4096, head_sha="ab" * 32)


def checkpoint(offset: int) -> Checkpoint:
    return Checkpoint("/var/log/slow.log", FILE, offset, "# Time: 240102  3:04:05", "shop", 0)


def put(spool: Spool, name: str, size: int = 100, *, offset: int | None = None) -> int:
    return spool.put(
        batch_id=name,
        source="slowlog",
        events=size // 10,
        body=name.encode() * (size // len(name)),
        checkpoint=checkpoint(offset) if offset is not None else None,
    )


def drain(spool: Spool) -> list[str]:
    names = []
    while (entry := spool.take(0)) is not None:
        names.append(entry.batch_id)
        spool.done(entry)
    return names


def test_batches_come_out_in_order_and_survive_a_reopen(tmp_path: Path) -> None:
    save_checkpoint(tmp_path, replace(checkpoint(0), seq=41))  # numbering goes on from it
    spool = Spool(tmp_path, max_bytes=10_000)
    assert [put(spool, f"b{n}", offset=n * 100) for n in range(3)] == [42, 43, 44]
    assert load_checkpoint(tmp_path) == replace(checkpoint(200), seq=44)
    first = spool.take(0)
    assert first is not None
    assert spool.read_body(first) == b"b0" * 50
    spool.done(first)
    reopened = Spool(tmp_path, max_bytes=10_000)
    assert reopened.checkpoint == replace(checkpoint(200), seq=44)
    assert drain(reopened) == ["b1", "b2"]
    assert put(reopened, "b3") == 45
    assert reopened.pending() == (1, (tmp_path / "000000000045.batch").stat().st_size)
    reopened.save_position(checkpoint(7))
    assert load_checkpoint(tmp_path) == replace(checkpoint(7), seq=45)


def test_a_batch_spooled_just_before_a_crash_carries_the_newer_checkpoint(
    tmp_path: Path,
) -> None:
    spool = Spool(tmp_path, max_bytes=10_000)
    put(spool, "b0", offset=100)
    put(spool, "b1", offset=200)
    save_checkpoint(tmp_path, replace(checkpoint(100), seq=1))  # as if the crash came here
    assert Spool(tmp_path, max_bytes=10_000).checkpoint == replace(checkpoint(200), seq=2)


def test_a_write_cut_short_by_a_crash_is_discarded(tmp_path: Path) -> None:
    spool = Spool(tmp_path, max_bytes=10_000)
    put(spool, "whole")
    (tmp_path / ".000000000002.batch.tmp").write_bytes(b'{"batch_id": "half')
    reopened = Spool(tmp_path, max_bytes=10_000)
    assert drain(reopened) == ["whole"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_over_the_cap_the_oldest_are_dropped_loudly_but_not_the_one_in_flight(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = Spool(tmp_path, max_bytes=1200)  # three batches of 300 bytes and their headers
    put(spool, "b0", 300)
    in_flight = spool.take(0)
    with caplog.at_level(logging.ERROR):
        for n in range(1, 6):
            put(spool, f"b{n}", 300)
    assert (spool.dropped_batches, spool.dropped_events) == (3, 90)
    assert caplog.text.count("SPOOL FULL") == 3
    assert "dropped so far: 3 batches, 90 events" in caplog.text
    assert in_flight is not None
    spool.done(in_flight)
    assert [in_flight.batch_id, *drain(spool)] == ["b0", "b4", "b5"]


def test_a_refused_batch_is_kept_aside(tmp_path: Path) -> None:
    spool = Spool(tmp_path, max_bytes=10_000)
    put(spool, "bad")
    put(spool, "good")
    entry = spool.take(0)
    assert entry is not None
    spool.reject(entry, "422: events.0.ts: invalid")
    assert drain(spool) == ["good"]
    assert [p.name for p in (tmp_path / REJECTED_DIR).iterdir()] == ["000000000001.batch"]


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    assert load_checkpoint(tmp_path) is None
    save_checkpoint(tmp_path, checkpoint(12345))
    save_checkpoint(tmp_path, checkpoint(67890))
    assert load_checkpoint(tmp_path) == checkpoint(67890)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.json"]
