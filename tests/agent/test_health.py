"""The agent's own health: what a status report and a progress line say."""

from datetime import UTC, datetime

import quanta_agent
from quanta_agent.health import InstanceHealth, progress_line


def test_a_status_report_says_what_the_source_and_the_delivery_went_through() -> None:
    health = InstanceHealth(["slowlog", "perfschema"], host="db-host")
    health.read("slowlog", None)
    health.read("perfschema", OSError("connection refused"))
    health.refused("server refused the batch (422): bad")
    status = health.status("perfschema", interval=60, spooled=(4, 8192), dropped=2)
    assert status.version == quanta_agent.__version__
    assert (status.host, status.interval) == ("db-host", 60)
    assert (status.read_at, status.read_failing) == (None, True)
    assert (status.spooled, status.spooled_bytes, status.dropped) == (4, 8192, 2)
    assert status.rejected == 1
    assert status.last_error == "the server refused a batch: server refused the batch (422): bad"
    slowlog = health.status("slowlog", interval=60, spooled=(0, 0), dropped=0)
    assert slowlog.read_failing is False
    assert slowlog.read_at is not None
    assert slowlog.read_at <= datetime.now(UTC)
    # A read that works again clears the failure, not the last error.
    health.read("perfschema", None)
    again = health.status("perfschema", interval=60, spooled=(0, 0), dropped=0)
    assert (again.read_failing, again.last_error) == (False, status.last_error)


def test_an_error_is_cut_to_what_the_server_keeps() -> None:
    health = InstanceHealth(["slowlog"], host="h")
    health.delivery_failed("x" * 2000)
    status = health.status("slowlog", interval=60, spooled=(0, 0), dropped=0)
    assert len(status.last_error) == 500


def test_progress_counts_what_was_shipped_since_the_previous_line() -> None:
    health = InstanceHealth(["slowlog"], host="h")
    health.shipped(100)
    health.shipped(50)
    now = datetime.now(UTC)
    first = health.progress(spooled=(1, 4096), dropped=0)
    assert (first.batches, first.events) == (2, 150)
    line = progress_line("db1", first, seconds=300, now=now)
    assert line == (
        "db1: shipped 2 batches (150 statements/rows) in the last 5 min; "
        "spool: 1 batches (4 KB); slowlog read never"
    )
    assert (health.progress(spooled=(0, 0), dropped=0).batches, health.shipped_batches) == (0, 2)
