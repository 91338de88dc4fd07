"""No password leaves the host: every path by which the agent ships statement text redacts.

The slow-log tailer (every event's text), ``quanta-agent import`` (class samples and
examples) and performance_schema examples, under the ``full`` policy; the ``masked`` and
``off`` policies send fingerprints, which hold no literal at all.
"""

from __future__ import annotations

import io
import json
import random
from datetime import UTC, datetime

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.slowlog import parse_slow_log, read_slow_log
from quanta_agent.aggregates import aggregates, extended_metrics
from quanta_agent.events import slowlog_batch, wire_event
from quanta_agent.payload import to_json
from quanta_agent.perfschema import mask_example
from quanta_agent.policy import ExamplePolicy

STATEMENTS = (
    "CREATE USER 'monitor'@'%' IDENTIFIED BY 'sekret'",
    "SET PASSWORD FOR 'monitor'@'%' = PASSWORD('sekret')",
    "ALTER USER 'app'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('sekret')",
    "CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='sekret'",
    "INSERT INTO users (login, password) VALUES ('alice', 'sekret')",
)
LOG = "".join(
    f"# Time: 2024-03-01T12:00:{n:02d}.000100Z\n"
    "# User@Host: root[root] @ localhost []  Id: 7\n"
    "# Query_time: 0.010000  Lock_time: 0.000010 Rows_sent: 0  Rows_examined: 0\n"
    f"SET timestamp={1709294400 + n};\n{sql};\n"
    for n, sql in enumerate(STATEMENTS)
).encode()
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_tailed_events_carry_no_password() -> None:
    events = [
        wire_event(e, policy=ExamplePolicy.FULL, max_length=10_000, truncated=False,
                   fallback_ts=NOW)
        for e in parse_slow_log(io.BytesIO(LOG))
    ]  # fmt: skip
    body = to_json(
        slowlog_batch(batch_id="b", instance="db1", events=events, policy=ExamplePolicy.FULL)
    ).decode()
    assert "sekret" not in body
    assert [e["query"] for e in json.loads(body)["events"]] == [
        "CREATE USER 'monitor'@'%' IDENTIFIED BY '<redacted>'",
        "SET PASSWORD FOR 'monitor'@'%' = PASSWORD('<redacted>')",
        "ALTER USER 'app'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('<redacted>')",
        "CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='<redacted>'",
        "INSERT INTO users (login, password) VALUES ('alice', '<redacted>')",
    ]


def test_imported_samples_and_examples_carry_no_password() -> None:
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for event in read_slow_log(io.BytesIO(LOG), sink=folder):
        folder.add(event, extended_metrics(event, MAX_COUNTER))
    rows = aggregates(folder.fold(), policy=ExamplePolicy.FULL, max_length=10_000)
    text = to_json(rows.batch(batch_id="b", instance="db1", policy=ExamplePolicy.FULL)).decode()
    body = json.loads(text)
    assert "sekret" not in text
    samples = sorted(query["sample"] for query in body["queries"])
    assert samples[0] == "ALTER USER 'app'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('<redacted>')"
    assert len(body["picks"]) == len(STATEMENTS)
    assert all("<redacted>" in pick["slowest"]["query"] for pick in body["picks"])


def test_performance_schema_examples_carry_no_password() -> None:
    assert mask_example("UPDATE users SET password = MD5('sekret') WHERE id = 7", "full") == (
        "UPDATE users SET password = MD5('<redacted>') WHERE id = 7",
        "full",
    )
    assert mask_example("SET PASSWORD = PASSWORD('sekret')", "full") == (
        "SET PASSWORD = PASSWORD('<redacted>')",
        "full",
    )
    assert mask_example("SET PASSWORD = PASSWORD('sekret')", "masked") == (
        "set password=password(?)",
        "masked",
    )
