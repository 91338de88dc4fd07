"""Turning parsed events into the ingest wire format."""

from datetime import UTC, datetime

from quanta.analysis.slowlog import SlowLogEvent
from quanta.ingest import schemas
from quanta_agent import importer

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


def test_wire_event_is_valid_for_the_api() -> None:
    wire = importer.event_to_wire(event(), FILE_TIME)
    assert wire["ts"] == "2026-11-01T00:00:00+00:00"  # undated: the file's time
    parsed = schemas.SlowLogEventIn.model_validate(wire)
    assert (parsed.rows_sent, parsed.rows_examined, parsed.db) == (1, 2, "shop")


def test_wrapped_counters_become_unknown() -> None:
    assert importer.MAX_COUNTER == schemas.MAX_COUNTER
    wire = importer.event_to_wire(event(rows_examined=18446744073709551508), FILE_TIME)
    assert wire["rows_examined"] is None
    assert schemas.SlowLogEventIn.model_validate(wire).rows_examined is None
