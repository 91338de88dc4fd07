"""The agent's minute buckets in the wire format: valid for the API, the same digest back."""

from __future__ import annotations

import base64
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from quanta.analysis.aggregate import digest_buckets, digest_events
from quanta.analysis.buckets import BatchDigest
from quanta.analysis.fingerprint import query_id
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import FoldedBatch, MinuteFolder
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.slowlog import read_slow_log
from quanta.ingest.schemas import IngestBatchIn
from quanta_agent.aggregates import aggregates, attribute_metrics, extended_metrics
from quanta_agent.payload import to_json
from quanta_agent.policy import ExamplePolicy
from tests.analysis.test_quoted_names import STATEMENTS, statement_cases
from tests.analysis.test_slowlog import SECONDS, flavour_entries

DATA = Path(__file__).parents[1] / "analysis" / "data" / "slowlogs"
LOG = "".join(
    f"# Time: 2024-03-01T12:0{n // 4}:{n:02d}.000100Z\n"
    f"# User@Host: app[app] @ web{n % 2} [10.0.0.{n % 2}]  Id: 7\n"
    f"# Query_time: 0.{n + 1:06d}  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: {n}\n"
    f"use shop;\nSET timestamp={1709294400 + n};\nSELECT * FROM orders WHERE id = {n};\n"
    for n in range(12)
).encode()


def folded(data: bytes) -> FoldedBatch:
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for event in read_slow_log(io.BytesIO(data), sink=folder):
        folder.add(event, extended_metrics(event, MAX_COUNTER))
    return folder.fold()


class _Absorbing:
    """The folder as the reader's sink, summing the attribute dicts after every block (as
    the importer does every few thousand entries)."""

    def __init__(self, folder: MinuteFolder) -> None:
        self.folder = folder
        self.groups = folder.groups

    def classify(self, query: str) -> list[list[Any]]:
        return self.folder.classify(query)

    def room(self) -> int:
        return 1 << 62

    def filled(self, count: int) -> None:
        self.folder.absorb()


def folded_as_columns(
    data: bytes, block_size: int = 1 << 20, *, absorb: bool = False
) -> tuple[FoldedBatch, int]:
    """As the importer folds: entries with attributes handed over as columns too; with the
    number of events the reader still yielded."""
    folder = MinuteFolder(Fingerprinter(), random.Random(0), extended=attribute_metrics)
    sink = _Absorbing(folder) if absorb else folder
    yielded = 0
    for event in read_slow_log(io.BytesIO(data), block_size=block_size, sink=sink):
        folder.add(event, extended_metrics(event, MAX_COUNTER))
        yielded += 1
    return folder.fold(), yielded


def body_of(batch: FoldedBatch, policy: ExamplePolicy) -> dict[str, Any]:
    rows = aggregates(batch, policy=policy, max_length=10_000)
    body: dict[str, Any] = json.loads(
        to_json(rows.batch(batch_id="b1", instance="db1", policy=policy))
    )
    return body  # as it travels


def received(body: dict[str, Any]) -> BatchDigest:
    batch = IngestBatchIn.model_validate_json(json.dumps(body))
    return digest_buckets(
        batch.queries, batch.buckets, batch.picks, masked=batch.examples != "full"
    )


def test_the_server_gets_back_the_agents_digest() -> None:
    batch = folded(LOG)
    digest = batch.digest()
    back = received(body_of(batch, ExamplePolicy.FULL))
    assert back.queries == digest.queries
    assert back.examples == digest.examples
    assert back.buckets.keys() == digest.buckets.keys()
    for key, metrics in digest.buckets.items():
        assert back.buckets[key] == metrics
    assert sum(m.count for m in back.buckets.values()) == 12


@pytest.mark.parametrize("log", sorted(DATA.glob("*.log")), ids=lambda path: path.stem)
def test_every_sample_log_travels_whole(log: Path) -> None:
    batch = folded(log.read_bytes())
    digest = batch.digest()
    back = received(body_of(batch, ExamplePolicy.FULL))
    assert {k: (m.count, m.sums) for k, m in back.buckets.items()} == {
        k: (m.count, m.sums) for k, m in digest.buckets.items()
    }


def test_masked_and_off_send_no_statement() -> None:
    batch = folded(LOG)
    masked, off = body_of(batch, ExamplePolicy.MASKED), body_of(batch, ExamplePolicy.OFF)
    for body in (masked, off):
        assert "id = 3" not in json.dumps(body)
        assert body["queries"][0]["sample"] == "select * from orders where id=?"
    assert off["picks"] == []
    assert {pick["slowest"]["query"] for pick in masked["picks"]} == {
        "select * from orders where id=?"
    }
    back = received(masked)
    assert all(pick.slowest.masked for pick in back.examples.values())


def bad(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        IngestBatchIn.model_validate_json(json.dumps(body))


def with_bucket(body: dict[str, Any], **first: Any) -> dict[str, Any]:
    """The body with the first bucket's values in some columns changed."""
    columns = {name: [*values] for name, values in body["buckets"].items()}
    for name, value in first.items():
        columns[name][0] = value
    return {**body, "buckets": columns}


def test_inconsistent_buckets_are_refused_with_the_reason() -> None:
    body = body_of(folded(LOG), ExamplePolicy.FULL)
    buckets = body["buckets"]
    bad(with_bucket(body, count=buckets["count"][0] + 1), "bucket 0: histogram holds")
    bad(with_bucket(body, histogram="not base64!"), "not base64")
    garbage = base64.b64encode(b"\x09\x00").decode()
    bad(with_bucket(body, histogram=garbage), "format version")
    late = buckets["start"][0].replace(":00+", ":30+")
    bad(with_bucket(body, start=late), "bucket 0: start must be the start of a minute")
    bad(with_bucket(body, query=99), "refer to query 99")
    bad(with_bucket(body, query_time_min=9.0), "bucket 0: query_time_min is above")
    bad(with_bucket(body, count=0), "greater than or equal to 1")
    bad({**body, "buckets": {**buckets, "db": buckets["db"][1:]}}, "columns differ in length")
    bad({**body, "buckets": {**buckets, "cpu_time": buckets["count"]}}, "Extra inputs")
    pick = body["picks"][0]
    bad({**body, "picks": [{**pick, "start": pick["start"].replace(":00+", ":07+")}]}, "minute")
    event = {"ts": buckets["start"][0], "query": "SELECT 1", "query_time": 0.1}
    bad({**body, "events": [event]}, "events or their aggregates, not both")


def test_a_histogram_travels_as_base64_of_its_stored_form() -> None:
    buckets = body_of(folded(LOG), ExamplePolicy.FULL)["buckets"]
    data = base64.b64decode(buckets["histogram"][0])
    assert LatencyHistogram.from_bytes(data).count == buckets["count"][0]


def test_sum_columns_are_sent_only_when_some_bucket_has_them() -> None:
    buckets = body_of(folded(LOG), ExamplePolicy.FULL)["buckets"]
    assert {"lock_time", "rows_sent", "rows_examined"} <= buckets.keys()
    assert "bytes_sent" not in buckets
    assert "rows_affected" not in buckets
    # One minute (SET timestamp), two client hosts: the even statements and the odd ones.
    assert buckets["host"] == ["web0", "web1"]
    assert buckets["rows_examined"] == [sum(range(0, 12, 2)), sum(range(1, 12, 2))]


def test_flags_count_one_and_wrapped_counters_are_left_out() -> None:
    (event,) = read_slow_log(
        io.BytesIO(
            b"# Query_time: 0.5  Lock_time: 0.0\n# Full_scan: Yes  Bytes_sent: 18446744073709551508"
            b"  Tmp_tables: 2\nSELECT 1;\n"
        )
    )
    assert extended_metrics(event, MAX_COUNTER) == {"tmp_tables": 2, "full_scan": 1}


# -- one query id whichever way a statement arrives (issue 24) ----------------------------------


def slow_log(statements: list[str]) -> bytes:
    return "".join(
        f"# Time: 2024-03-01T12:00:{n % 60:02d}.000000Z\n"
        "# User@Host: app[app] @ web1 [10.0.0.1]  Id: 7\n"
        "# Query_time: 0.100000  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: 1\n"
        f"{sql};\n"
        for n, sql in enumerate(statements)
    ).encode()


def counts(digest: BatchDigest) -> dict[str, int]:
    """query_id -> events counted."""
    by_id: dict[str, int] = {}
    for key, metrics in digest.buckets.items():
        by_id[key.query_id] = by_id.get(key.query_id, 0) + metrics.count
    return by_id


def through_the_agent(data: bytes, policy: ExamplePolicy) -> dict[str, int]:
    """The log folded by the agent, shipped, and classified again by the server."""
    batch = folded(data)
    if not batch.queries:  # a log of comment lines only: the agent ships no batch
        return {}
    return counts(received(body_of(batch, policy)))


def as_events(data: bytes) -> dict[str, int]:
    """The same log shipped as raw events."""
    return counts(digest_events(list(read_slow_log(io.BytesIO(data))), Fingerprinter()))


# Statements a slow log holds whole (a ';' or an open comment would end or swallow one).
LOGGABLE = STATEMENTS.filter(lambda sql: ";" not in sql and "/*" not in sql)


@settings(max_examples=200)
@given(st.lists(LOGGABLE, min_size=1, max_size=8), st.sampled_from(list(ExamplePolicy)))
@example(
    ["SELECT * FROM `shop-prod`.`orders` WHERE id = 5", "SELECT `a b` FROM t1"],
    ExamplePolicy.MASKED,
)
# An entry that is only a comment, or 'ASC', has an empty fingerprint: one class on both paths.
@example(["# only a comment", "ASC", "SELECT 1"], ExamplePolicy.MASKED)
@example(["-- x", "SELECT 1"], ExamplePolicy.FULL)
def test_query_ids_survive_the_agents_buckets_and_the_server(
    statements: list[str], policy: ExamplePolicy
) -> None:
    data = slow_log(statements)
    assert through_the_agent(data, policy) == as_events(data)


@pytest.mark.parametrize("case", statement_cases(), ids=lambda case: f"line{case.line}")
def test_each_quoted_name_case_keeps_its_query_id_through_the_agent(case: Any) -> None:
    data = slow_log([case.sql])
    expected = {query_id(case.expected): 1}
    assert through_the_agent(data, ExamplePolicy.MASKED) == as_events(data) == expected


def _extended_fields_reference(attributes: dict[str, Any], max_counter: int) -> dict[str, Any]:
    """extended_fields as it reads, name by name, each field's first present attribute (the
    rules it remembers per attribute name list): what it must give on any attributes."""
    from quanta_agent import aggregates as module

    def first(names: tuple[str, ...]) -> Any:
        return next((attributes[n] for n in names if attributes.get(n) is not None), None)

    fields: dict[str, Any] = {}
    for name, names in module._COUNTERS.items():
        value = first(names)
        if value is None:
            value = first(module._FLAG_COUNTS[name])
        if isinstance(value, bool):
            fields[name] = int(value)
        elif isinstance(value, int) and value <= max_counter:
            fields[name] = value
    for name, names in module._SECONDS.items():
        value = first(names)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            fields[name] = float(value)
    for name, names in module._FLAGS.items():
        if isinstance(value := first(names), bool):
            fields[name] = value
    if "filesort" not in fields:
        sorts = [attributes.get(name) for name in module._SORT_COUNTS]
        if any(isinstance(n, int) and not isinstance(n, bool) for n in sorts):
            fields["filesort"] = any(isinstance(n, int) and n > 0 for n in sorts)
    errno = first(module._ERRNO)
    if isinstance(errno, int) and not isinstance(errno, bool):
        fields["errors"] = int(errno != 0)
    warnings = attributes.get("warnings")
    if isinstance(warnings, str) and warnings:
        fields["warnings"] = warnings.count("\n") + 1
    return fields


ATTRIBUTE_NAMES = (
    "Bytes_sent", "Tmp_tables", "Created_tmp_tables", "Tmp_disk_tables", "Tmp_table",
    "Tmp_table_on_disk", "Merge_passes", "Sort_merge_passes", "InnoDB_IO_r_ops", "Pages_read",
    "InnoDB_IO_r_bytes", "InnoDB_IO_r_wait", "Pages_read_time", "InnoDB_rec_lock_wait",
    "InnoDB_queue_wait", "Full_scan", "Full_join", "Filesort", "Filesort_on_disk",
    "Sort_scan_count", "Sort_range_count", "Errno", "Last_errno", "warnings", "explain",
    "Thread_id", "QC_hit",
)  # fmt: skip
ATTRIBUTE_VALUES = st.one_of(
    st.booleans(), st.integers(-5, 2**64), st.floats(-1, 1e6, allow_nan=False),
    st.sampled_from(["", "x", "a\nb", "Yes"]),
)  # fmt: skip


@settings(max_examples=400)
@given(st.lists(st.tuples(st.sampled_from(ATTRIBUTE_NAMES), ATTRIBUTE_VALUES), max_size=12))
def test_extended_fields_read_any_attributes_as_the_rules_say(
    pairs: list[tuple[str, Any]],
) -> None:
    from quanta_agent.aggregates import extended_fields

    attributes = dict(pairs)
    expected = _extended_fields_reference(attributes, MAX_COUNTER)
    for _ in range(2):  # the second time with the rules it remembered
        fields = extended_fields(attributes, MAX_COUNTER)
        assert [(k, type(v), v) for k, v in fields.items()] == [
            (k, type(v), v) for k, v in expected.items()
        ]


@pytest.mark.parametrize("absorb", [False, True], ids=["at_fold", "every_block"])
@pytest.mark.parametrize("log", sorted(DATA.glob("*.log")), ids=lambda path: path.stem)
def test_entries_with_attributes_fold_as_columns_as_they_do_as_events(
    log: Path, absorb: bool
) -> None:
    data = log.read_bytes()
    as_columns, _ = folded_as_columns(data, block_size=256, absorb=absorb)
    assert body_of(as_columns, ExamplePolicy.FULL) == body_of(folded(data), ExamplePolicy.FULL)


def test_a_percona_log_stays_on_the_columnar_path() -> None:
    data = (DATA / "percona_5_7_extended.log").read_bytes()
    batch, yielded = folded_as_columns(data)
    events = sum(batch.buckets["count"])
    assert events == len(list(read_slow_log(io.BytesIO(data))))
    assert yielded < events / 2  # before: every entry with attributes became an event
    assert "bytes_sent" in batch.buckets


def rounded(value: Any) -> Any:
    """``value`` with every float in it rounded to 12 significant digits."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


@settings(max_examples=100, deadline=None)
@given(st.lists(flavour_entries(SECONDS), max_size=10), st.sampled_from([64, 1 << 20]))
def test_any_flavour_folds_as_columns_as_it_does_as_events(
    entries: list[tuple[str, bool]], block_size: int
) -> None:
    data = "".join(text for text, _ in entries).encode()
    for absorb in (False, True):
        as_columns, _ = folded_as_columns(data, block_size, absorb=absorb)
        expected = body_of(folded(data), ExamplePolicy.FULL)
        # The two paths add a bucket's floats in different orders: equal to 12 digits.
        assert rounded(body_of(as_columns, ExamplePolicy.FULL)) == rounded(expected)
