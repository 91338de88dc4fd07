"""Slow-log batches in the wire format: example policies, truncation, batch limits."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from quanta.analysis.slowlog import parse_slow_log
from quanta.ingest import schemas
from quanta_agent.checkpoint import FileIdentity
from quanta_agent.config import BatchSettings
from quanta_agent.events import slowlog_batch, wire_event
from quanta_agent.payload import to_json
from quanta_agent.policy import ExamplePolicy
from quanta_agent.tailer import PendingBatch, SlowLogEntry, slowlog_batch_id

LOG = b"""# Time: 2024-01-02T03:04:05.000001Z
# User@Host: app[app] @ web1 [10.0.0.5]  Id: 42
# Query_time: 0.250000  Lock_time: 0.000100 Rows_sent: 1  Rows_examined: 1200
use shop;
SET timestamp=1704164645;
SELECT * FROM users WHERE email = 'ann@example.com' AND id IN (1, 2, 3);
"""
NOW = datetime(2026, 1, 1, tzinfo=UTC)
FILE = FileIdentity(dev=2049, ino=131, head_len=4096, head_sha="ab" * 32)


def sent(model: BaseModel) -> dict[str, Any]:
    """A wire model as it travels."""
    result: dict[str, Any] = json.loads(to_json(model))
    return result


def one_event(policy: ExamplePolicy, max_length: int = 1000) -> dict[str, Any]:
    (event,) = parse_slow_log(LOG.splitlines(keepends=True))
    wire = wire_event(event, policy=policy, max_length=max_length, truncated=False, fallback_ts=NOW)
    return sent(wire)


def test_full_policy_batches_are_valid_for_the_api() -> None:
    (parsed,) = parse_slow_log(LOG.splitlines(keepends=True))
    wire = wire_event(
        parsed, policy=ExamplePolicy.FULL, max_length=1000, truncated=False, fallback_ts=NOW
    )
    body = sent(slowlog_batch(
        batch_id=slowlog_batch_id("db1", FILE, 0, len(LOG)), instance="db1", events=[wire],
        policy=ExamplePolicy.FULL,
    ))  # fmt: skip
    event = body["events"][0]
    batch = schemas.IngestBatchIn.model_validate_json(json.dumps(body))
    assert batch.events[0].query == (
        "SELECT * FROM users WHERE email = 'ann@example.com' AND id IN (1, 2, 3)"
    )
    assert (batch.events[0].db, batch.events[0].rows_examined) == ("shop", 1200)
    assert "examples" not in body
    assert "truncated" not in event


def test_masked_and_off_send_the_fingerprint_and_say_so() -> None:
    for policy in (ExamplePolicy.MASKED, ExamplePolicy.OFF):
        (parsed,) = parse_slow_log(LOG.splitlines(keepends=True))
        wire = wire_event(parsed, policy=policy, max_length=1000, truncated=False, fallback_ts=NOW)
        body = sent(slowlog_batch(batch_id="b", instance="db1", events=[wire], policy=policy))
        event = body["events"][0]
        assert event["query"] == "select * from users where email=? and id in(?+)"
        assert body["examples"] == policy.value


def test_long_text_is_cut_and_marked() -> None:
    event = one_event(ExamplePolicy.FULL, max_length=40)
    assert event["query"] == "SELECT * FROM users WHERE email = 'ann@e"
    assert event["truncated"] is True


def test_batch_ids_depend_on_the_file_and_the_range_only() -> None:
    ids = {
        slowlog_batch_id("db1", FILE, 0, 100),
        slowlog_batch_id("db1", FILE, 0, 101),
        slowlog_batch_id("db2", FILE, 0, 100),
        slowlog_batch_id("db1", FileIdentity(2049, 132, 4096, "ab" * 32), 0, 100),
    }
    assert len(ids) == 4
    assert slowlog_batch_id("db1", FILE, 0, 100) == slowlog_batch_id("db1", FILE, 0, 100)


def test_pending_batch_limits() -> None:
    now = [0.0]
    pending = PendingBatch(BatchSettings(max_events=3, max_bytes=1000, max_age=5), lambda: now[0])
    (event,) = parse_slow_log(LOG.splitlines(keepends=True))

    def entry(query: str) -> SlowLogEntry:
        event.query = query
        return SlowLogEntry(event, truncated=False)

    pending.add(entry("x" * 10))
    now[0] = 4.9
    assert (pending.full, pending.due) == (False, False)
    now[0] = 5.0
    assert pending.due
    pending.add(entry("x" * 600))
    assert pending.full  # by size
    assert len(pending.take()) == 2
    assert (len(pending), pending.due) == (0, False)
