"""Turning parsed events into the ingest wire format."""

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from quanta import wire as schemas
from quanta.analysis.slowlog import SlowLogEvent
from quanta.wire import IngestBatchIn
from quanta_agent import importer
from quanta_agent.events import event_to_wire
from quanta_agent.payload import to_json

FILE_TIME = datetime(2026, 11, 1, tzinfo=UTC)


def event(**overrides: object) -> SlowLogEvent:
    fields: dict[str, object] = {
        "query": "SELECT 1",
        "ts": None,
        "query_time": 0.5,
        "lock_time": 0.0,
        "rows_sent": 1,
        "rows_examined": 2,
        "rows_affected": None,
        "db": "shop",
        "user": "app",
        "host": "10.0.0.1",
        "line": 1,
        "attributes": {},
    }
    return SlowLogEvent(**{**fields, **overrides})  # type: ignore[arg-type]


def wire_of(parsed: SlowLogEvent) -> dict[str, Any]:
    """The event as the agent sends it."""
    sent: dict[str, Any] = json.loads(to_json(event_to_wire(parsed, FILE_TIME)))
    return sent


def test_wire_event_is_valid_for_the_api() -> None:
    wire = wire_of(event())
    assert wire["ts"] == "2026-11-01T00:00:00+00:00"  # undated: the file's time
    parsed = schemas.SlowLogEventIn.model_validate(wire)
    assert (parsed.rows_sent, parsed.rows_examined, parsed.db) == (1, 2, "shop")


def test_wrapped_counters_become_unknown() -> None:
    assert importer.MAX_COUNTER == schemas.MAX_COUNTER
    wire = wire_of(event(rows_examined=18446744073709551508))
    assert wire["rows_examined"] is None
    assert schemas.SlowLogEventIn.model_validate(wire).rows_examined is None


def test_extended_attributes_of_every_flavour_reach_the_wire() -> None:
    percona = event(
        rows_affected=0,
        attributes={
            "Bytes_sent": 5841, "Tmp_tables": 1, "Tmp_disk_tables": 1, "Full_scan": True,
            "Full_join": False, "Filesort": True, "Filesort_on_disk": False, "Merge_passes": 0,
            "InnoDB_IO_r_ops": 1204, "InnoDB_IO_r_bytes": 19726336, "InnoDB_IO_r_wait": 0.417004,
            "InnoDB_rec_lock_wait": 0.0, "InnoDB_queue_wait": 0.0, "Last_errno": 0,
        },
    )  # fmt: skip
    wire = wire_of(percona)
    parsed = schemas.SlowLogEventIn.model_validate(wire)
    assert (parsed.bytes_sent, parsed.tmp_tables, parsed.tmp_disk_tables) == (5841, 1, 1)
    assert (parsed.full_scan, parsed.full_join, parsed.filesort) == (True, False, True)
    assert (parsed.innodb_io_r_ops, parsed.innodb_io_r_bytes) == (1204, 19726336)
    assert (parsed.innodb_io_r_wait, parsed.errors, parsed.rows_affected) == (0.417004, 0, 0)

    mysql8 = event(
        attributes={
            "Errno": 1213, "Bytes_sent": 99, "Sort_merge_passes": 1, "Sort_scan_count": 0,
            "Sort_range_count": 0, "Created_tmp_disk_tables": 0, "Created_tmp_tables": 2,
        },
    )  # fmt: skip
    parsed = schemas.SlowLogEventIn.model_validate(wire_of(mysql8))
    assert (parsed.errors, parsed.merge_passes, parsed.filesort) == (1, 1, False)
    assert (parsed.tmp_tables, parsed.tmp_disk_tables) == (2, 0)
    assert parsed.full_scan is None  # MySQL 8 does not log it: unknown, not "No"

    mariadb = event(
        attributes={"Tmp_table": True, "Tmp_table_on_disk": False, "Pages_read": 3,
                    "Pages_read_time": 0.002, "warnings": "Warning 1292 a\nWarning 1292 b"},
    )  # fmt: skip
    parsed = schemas.SlowLogEventIn.model_validate(wire_of(mariadb))
    assert (parsed.tmp_tables, parsed.tmp_disk_tables) == (1, 0)
    assert (parsed.innodb_io_r_ops, parsed.innodb_io_r_wait, parsed.warnings) == (3, 0.002, 2)

    plain = schemas.SlowLogEventIn.model_validate(wire_of(event()))
    assert (plain.bytes_sent, plain.tmp_tables, plain.errors) == (None, None, None)


class RecordingShipper:
    """Stands in for the server: keeps what would be shipped."""

    def __init__(self) -> None:
        self.instance = "db1"
        self.batches: list[dict[str, Any]] = []

    def ship(self, batch: IngestBatchIn) -> Any:
        self.batches.append(json.loads(to_json(batch)))
        return SimpleNamespace(duplicate=False)


def ten_minute_log(tmp_path: Path) -> Path:
    """Ten minutes, 30 statements each."""
    log = tmp_path / "slow.log"
    log.write_text(
        "".join(
            f"# Time: 2024-03-01T12:{n // 30:02d}:{n % 30 * 2:02d}Z\n"
            f"# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 1\n"
            f"SET timestamp={1709294400 + n * 2};\nSELECT {n};\n"
            for n in range(300)
        )
    )
    return log


def test_import_ships_minute_aligned_batches_of_every_statement(tmp_path: Path) -> None:
    log = ten_minute_log(tmp_path)
    shipper, report = RecordingShipper(), importer.ImportReport()
    importer.import_file(log, shipper=shipper, batch_size=45, report=report)  # type: ignore[arg-type]
    minutes = [set(batch["buckets"]["start"]) for batch in shipper.batches]
    assert report.events == 300 == sum(sum(s["buckets"]["count"]) for s in shipper.batches)
    assert report.batches == len(shipper.batches) > 3
    assert sum(len(m) for m in minutes) == len(set().union(*minutes)) == 10  # none shared


def test_the_first_batch_is_cut_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "FIRST_BATCH_SIZE", 40)
    shipper = RecordingShipper()
    importer.import_file(
        ten_minute_log(tmp_path), shipper=shipper, batch_size=100, report=importer.ImportReport()
    )  # type: ignore[arg-type]
    # Cut at 40 and then every 100 statements, each time before the newest one's minute.
    assert [sum(batch["buckets"]["count"]) for batch in shipper.batches] == [30, 90, 90, 90]
