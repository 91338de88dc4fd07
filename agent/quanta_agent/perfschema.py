"""The performance_schema poller: per-digest deltas of events_statements_summary_by_digest.

Each poll reads the digest table (after the first, only the rows whose LAST_SEEN is recent)
and ships, per (schema, digest), how much every ``COUNT_*``/``SUM_*`` column grew since the
previous poll. The rules that keep these deltas
exact (never a lifetime total, never negative):

* The first poll records a baseline and ships nothing, except digests first seen after the
  agent started: all they hold happened since, so their whole value is the delta.
* A digest absent from the previous poll is new if its FIRST_SEEN is not older than that
  poll (whole value); otherwise it only joins the baseline.
* A reset makes the current value the delta: for the whole table when the server restarted
  (its boot time, now - Uptime, moved), or was TRUNCATEd (a digest of the previous poll is
  gone, or every digest's counters went down); for one digest when its FIRST_SEEN changed
  or one of its counters went down (evicted and re-added).
* Timer columns are picoseconds on the server and seconds on the wire.
* Statements the full table could not file under a digest land in its NULL row: they are
  reported as the increase of ``Performance_schema_digest_lost``, not as a digest.

Examples come from events_statements_history(_long) per the instance's example policy, and
MySQL 8.0's events_statements_histogram_by_digest adds latency buckets where it exists.
Where the stage consumers are on, each poll also carries the stage profiles of the statements
the history kept (quanta_agent.stages), with the digest counts of the same interval.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.redact import redact
from quanta_agent.config import InstanceSettings
from quanta_agent.mysql import MonitorConnection, MonitorError, ServerClock
from quanta_agent.stages import StageSampler

log = logging.getLogger(__name__)

SOURCE = "perfschema"
PICOSECONDS_PER_SECOND = 10**12
DIGEST_TABLE = "events_statements_summary_by_digest"
HISTOGRAM_TABLE = "events_statements_histogram_by_digest"

# Columns whose growth is shipped (MariaDB 10.x and MySQL 5.7/8.x; absent ones are skipped):
# the ingest API's digest fields, those the metric registry's perfschema columns among them.
DELTA_COLUMNS = (
    "COUNT_STAR",
    "SUM_TIMER_WAIT",
    "SUM_LOCK_TIME",
    "SUM_CPU_TIME",
    "SUM_ERRORS",
    "SUM_WARNINGS",
    "SUM_ROWS_AFFECTED",
    "SUM_ROWS_SENT",
    "SUM_ROWS_EXAMINED",
    "SUM_CREATED_TMP_DISK_TABLES",
    "SUM_CREATED_TMP_TABLES",
    "SUM_SELECT_FULL_JOIN",
    "SUM_SELECT_FULL_RANGE_JOIN",
    "SUM_SELECT_RANGE",
    "SUM_SELECT_RANGE_CHECK",
    "SUM_SELECT_SCAN",
    "SUM_SORT_MERGE_PASSES",
    "SUM_SORT_RANGE",
    "SUM_SORT_ROWS",
    "SUM_SORT_SCAN",
    "SUM_NO_INDEX_USED",
    "SUM_NO_GOOD_INDEX_USED",
    "COUNT_SECONDARY",
)
# Columns shipped as the server has them: extremes since the digest was first seen or reset.
PASSTHROUGH_COLUMNS = (
    "MIN_TIMER_WAIT",
    "MAX_TIMER_WAIT",
    "MAX_CONTROLLED_MEMORY",
    "MAX_TOTAL_MEMORY",
)
TIMER_COLUMNS = frozenset(
    ("SUM_TIMER_WAIT", "SUM_LOCK_TIME", "SUM_CPU_TIME", "MIN_TIMER_WAIT", "MAX_TIMER_WAIT")
)
# MariaDB keeps LAST_SEEN to the second: read back from a second before the previous poll.
LAST_SEEN_SLACK = timedelta(seconds=1)
_KEY_COLUMNS = ("SCHEMA_NAME", "DIGEST", "DIGEST_TEXT", "FIRST_SEEN", "LAST_SEEN")

DigestKey = tuple[str | None, str | None]  # (SCHEMA_NAME, DIGEST); (None, None) is the NULL row


@dataclass(frozen=True, slots=True)
class Bucket:
    """One histogram bucket: bounds in picoseconds and its statement count."""

    low: int
    high: int
    count: int


@dataclass(frozen=True, slots=True)
class DigestRow:
    """One row of the digest table as read, in server units (picoseconds)."""

    schema: str | None
    digest: str | None
    digest_text: str | None
    counters: Mapping[str, int]
    passthrough: Mapping[str, int]
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    histogram: Mapping[int, Bucket] | None = None

    @property
    def key(self) -> DigestKey:
        """(schema, digest)."""
        return (self.schema, self.digest)


@dataclass(frozen=True, slots=True)
class DigestSnapshot:
    """The whole digest table at one moment of the server's clock."""

    clock: ServerClock
    rows: Mapping[DigestKey, DigestRow]
    digest_lost: int = 0


@dataclass(frozen=True, slots=True)
class DigestDelta:
    """What one digest did between two polls."""

    row: DigestRow
    counters: Mapping[str, int]
    interval_start: datetime
    interval_end: datetime
    reset: bool = False
    histogram: list[Bucket] | None = None


@dataclass(frozen=True, slots=True)
class DigestDiff:
    """The deltas of one poll and the statements lost for a full digest table."""

    deltas: list[DigestDelta]
    digest_lost: int | None


def diff_snapshots(
    prev: DigestSnapshot | None, cur: DigestSnapshot, *, new_since: datetime
) -> DigestDiff:
    """Per-digest deltas between two polls; ``prev`` None is the first poll.

    ``new_since`` is when the agent started, on the server's clock: on the first poll, only
    digests first seen since then are shipped (with their whole value).

    Example:
        >>> diff = diff_snapshots(earlier, later, new_since=agent_start)
        >>> all(d.counters["COUNT_STAR"] > 0 for d in diff.deltas)
        True
    """
    if prev is None:
        new = [_whole(row, new_since, cur.clock.now) for row in _new_rows(cur, new_since)]
        return DigestDiff(deltas=new, digest_lost=None)
    restarted = cur.clock.restarted_since(prev.clock)
    table_reset = restarted or _table_was_reset(prev.rows, cur.rows)
    start, end = prev.clock.now, cur.clock.now
    deltas: list[DigestDelta] = []
    for key, row in cur.rows.items():
        if key[1] is None:
            continue  # the NULL row: statements counted in digest_lost
        old = prev.rows.get(key)
        if table_reset or (old is not None and _row_was_reset(old, row)):
            delta = _whole(row, start, end, reset=True)
        elif old is None:
            if not _first_seen_since(row, start):
                continue  # missed by the previous poll: it joins the baseline
            delta = _whole(row, start, end)
        else:
            delta = _difference(old, row, start, end)
        if delta.counters.get("COUNT_STAR", 0) > 0:
            deltas.append(delta)
    if restarted or cur.digest_lost < prev.digest_lost:
        lost = cur.digest_lost  # the counter restarted from zero
    else:
        lost = cur.digest_lost - prev.digest_lost
    return DigestDiff(deltas=deltas, digest_lost=lost)


def counters_decreased(old: Mapping[str, float], new: Mapping[str, float]) -> bool:
    """Whether any counter of ``new`` is below its value in ``old`` (a reset)."""
    return any(new.get(name, 0) < value for name, value in old.items())


def _new_rows(cur: DigestSnapshot, since: datetime) -> Iterable[DigestRow]:
    return (r for r in cur.rows.values() if r.digest is not None and _first_seen_since(r, since))


def _first_seen_since(row: DigestRow, moment: datetime) -> bool:
    # MariaDB keeps FIRST_SEEN to the second: a digest created in the second of `moment`
    # but after it reads as earlier, so compare against the start of that second.
    return row.first_seen is not None and row.first_seen >= moment.replace(microsecond=0)


def _table_was_reset(
    prev: Mapping[DigestKey, DigestRow], cur: Mapping[DigestKey, DigestRow]
) -> bool:
    # The server never drops a digest row on its own: a row gone means TRUNCATE.
    if any(key not in cur for key in prev):
        return True
    common = [(prev[key], row) for key, row in cur.items() if key in prev]
    return bool(common) and all(_row_was_reset(old, new) for old, new in common)


def _row_was_reset(old: DigestRow, new: DigestRow) -> bool:
    return new.first_seen != old.first_seen or counters_decreased(old.counters, new.counters)


def _whole(row: DigestRow, start: datetime, end: datetime, *, reset: bool = False) -> DigestDelta:
    histogram = None
    if row.histogram is not None:
        histogram = [b for _, b in sorted(row.histogram.items()) if b.count > 0]
    return DigestDelta(
        row=row,
        counters=dict(row.counters),
        interval_start=start,
        interval_end=end,
        reset=reset,
        histogram=_checked_histogram(histogram, row.counters.get("COUNT_STAR", 0)),
    )


def _difference(old: DigestRow, new: DigestRow, start: datetime, end: datetime) -> DigestDelta:
    counters = {name: value - old.counters.get(name, 0) for name, value in new.counters.items()}
    return DigestDelta(
        row=new,
        counters=counters,
        interval_start=start,
        interval_end=end,
        histogram=_checked_histogram(
            _histogram_difference(old.histogram, new.histogram), counters.get("COUNT_STAR", 0)
        ),
    )


def _histogram_difference(
    old: Mapping[int, Bucket] | None, new: Mapping[int, Bucket] | None
) -> list[Bucket] | None:
    if new is None:
        return None
    old = old or {}
    grown = [
        Bucket(b.low, b.high, b.count - old[n].count if n in old else b.count)
        for n, b in sorted(new.items())
    ]
    return [b for b in grown if b.count != 0]


def _checked_histogram(buckets: list[Bucket] | None, count: int) -> list[Bucket] | None:
    # The histogram table can be truncated on its own: ship it only when it adds up.
    if (
        buckets is None
        or any(b.count < 0 for b in buckets)
        or sum(b.count for b in buckets) != count
    ):
        return None
    return buckets


# --------------------------------------------------------------------------- wire format


def delta_to_wire(delta: DigestDelta) -> dict[str, Any]:
    """The ingest API's JSON form of a digest delta (``PerfSchemaDigestIn``)."""
    row = delta.row
    wire: dict[str, Any] = {
        "schema_name": row.schema,
        "digest": row.digest,
        "digest_text": row.digest_text,
        "interval_start": delta.interval_start.isoformat(),
        "interval_end": delta.interval_end.isoformat(),
        "first_seen": row.first_seen.isoformat() if row.first_seen else None,
        "last_seen": row.last_seen.isoformat() if row.last_seen else None,
        "reset": delta.reset,
    }
    for column, value in [*delta.counters.items(), *row.passthrough.items()]:
        wire[column.lower()] = _to_wire_value(column, value)
    if delta.histogram is not None:
        wire["histogram"] = [
            {"low": _seconds(b.low), "high": _seconds(b.high), "count": b.count}
            for b in delta.histogram
        ]
    return wire


def _to_wire_value(column: str, value: int) -> float | int | None:
    if column in TIMER_COLUMNS:
        return _seconds(value)
    return value if value <= MAX_COUNTER else None


def _seconds(picoseconds: int) -> float:
    return picoseconds / PICOSECONDS_PER_SECOND


def mask_example(sql: str, policy: str) -> tuple[str, str] | None:
    """An example as the policy allows it: (text, "full" | "masked"), or None when off.

    A full example has the secret of a credential-bearing statement redacted.

    Example:
        >>> mask_example("SELECT * FROM t WHERE id = 42", "masked")
        ('select * from t where id=?', 'masked')
    """
    if policy == "full":
        return redact(sql), "full"
    if policy == "masked":
        return fingerprint(sql), "masked"
    return None


# --------------------------------------------------------------------------- the collector


@dataclass
class _ServerShape:
    """What a server offers, learnt once per connection."""

    columns: tuple[str, ...]
    has_histogram: bool
    max_sql_text_length: int
    connection: int = 0


@dataclass
class PerfSchemaCollector:
    """Polls one instance's digest table; ``poll()`` gives one batch body per interval."""

    conn: MonitorConnection
    name: str
    example_policy: str = "full"
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    source: str = SOURCE
    _prev: DigestSnapshot | None = None
    _new_since: datetime | None = None
    _shape: _ServerShape | None = None
    _warned_off: bool = False
    _stages: StageSampler | None = None

    def poll(self) -> dict[str, Any]:
        """One poll: ``{"digests": [...], "digest_lost": n}``, with ``stage_samples`` and
        ``stage_collection`` where stages are kept; {} when there is nothing.

        Raises:
            MonitorError: the server cannot be reached or read; the baseline is kept, so the
                next successful poll covers the missed interval.
        """
        if not self._performance_schema_on():
            return {}
        clock, status = self.conn.server_clock("Performance_schema_digest_lost")
        if self._new_since is None:
            self._new_since = self.started_at + clock.offset
        stages = self._stage_sampler()
        collection = stages.collection()
        history = stages.read(clock, collection)  # before the digests: they then count it all
        snapshot = DigestSnapshot(
            clock=clock,
            rows=self._current_rows(),
            digest_lost=int(status.get("performance_schema_digest_lost", 0)),
        )
        diff = diff_snapshots(self._prev, snapshot, new_since=self._new_since)
        body = self._body(diff)
        if self._prev is not None:
            samples = stages.fold(
                history,
                texts={
                    r.digest: r.digest_text
                    for r in snapshot.rows.values()
                    if r.digest and r.digest_text
                },
                totals=_executions(diff.deltas),
                minute=_middle_minute(self._prev.clock.now, clock.now),
            )
            if samples:
                body["stage_samples"] = samples
        report = stages.report(collection, shipping=bool(body))
        if report is not None:
            body["stage_collection"] = report
        stages.keep(history)
        self._prev = snapshot
        return body

    def _stage_sampler(self) -> StageSampler:
        if self._stages is None:
            self._stages = StageSampler(self.conn, self.name)
        return self._stages

    def close(self) -> None:
        """Close the monitoring connection."""
        self.conn.close()

    def _body(self, diff: DigestDiff) -> dict[str, Any]:
        if not diff.deltas and not diff.digest_lost:
            return {}
        digests = [delta_to_wire(d) for d in diff.deltas]
        if digests and self.example_policy != "off":
            self._attach_examples(digests)
        return {"digests": digests, "digest_lost": diff.digest_lost or 0}

    def _performance_schema_on(self) -> bool:
        on = self.conn.query("SELECT @@global.performance_schema AS on_")[0]["on_"]
        if int(on) == 1:
            self._warned_off = False
            return True
        if not self._warned_off:
            log.warning(
                "%s: performance_schema is OFF; no digests to poll (see quanta-agent check)",
                self.name,
            )
            self._warned_off = True
        return False

    def _server_shape(self) -> _ServerShape:
        if self._shape is None or self._shape.connection != self.conn.connections_opened:
            self._shape = _read_shape(self.conn)
        return self._shape

    def _current_rows(self) -> dict[DigestKey, DigestRow]:
        """The whole table, reading only the rows that ran since the previous poll.

        A row whose LAST_SEEN is older than the previous poll has not changed (it would have
        been re-created with a new LAST_SEEN after a reset), so it is carried over; only when
        rows went missing (TRUNCATE, restart) is the whole table read again, for the diff to
        see what is gone.
        """
        prev = self._prev
        if prev is None:
            return self._read_rows()
        total = self.conn.query(f"SELECT COUNT(*) AS n FROM performance_schema.{DIGEST_TABLE}")
        since = prev.clock.now.replace(microsecond=0, tzinfo=None) - LAST_SEEN_SLACK
        fresh = self._read_rows(since)
        new_keys = sum(1 for key in fresh if key not in prev.rows)
        # Counted before the read: rows added in between can only make this look short.
        if int(total[0]["n"]) < len(prev.rows) + new_keys:
            return self._read_rows()
        return {**prev.rows, **fresh}

    def _read_rows(self, since: datetime | None = None) -> dict[DigestKey, DigestRow]:
        shape = self._server_shape()
        select = f"SELECT {', '.join(shape.columns)} FROM performance_schema.{DIGEST_TABLE}"
        if since is None:
            rows = self.conn.query(select)
        else:
            rows = self.conn.query(f"{select} WHERE LAST_SEEN >= %s", [since])
        histograms = self._read_histograms() if shape.has_histogram else {}
        out: dict[DigestKey, DigestRow] = {}
        for r in rows:
            key: DigestKey = (r["SCHEMA_NAME"], r["DIGEST"])
            out[key] = DigestRow(
                schema=r["SCHEMA_NAME"],
                digest=r["DIGEST"],
                digest_text=r["DIGEST_TEXT"],
                counters={c: int(r[c]) for c in DELTA_COLUMNS if c in r},
                passthrough={c: int(r[c]) for c in PASSTHROUGH_COLUMNS if c in r},
                first_seen=_utc(r["FIRST_SEEN"]),
                last_seen=_utc(r["LAST_SEEN"]),
                histogram=histograms.get(key, {}) if shape.has_histogram else None,
            )
        return out

    def _read_histograms(self) -> dict[DigestKey, dict[int, Bucket]]:
        rows = self.conn.query(
            "SELECT SCHEMA_NAME, DIGEST, BUCKET_NUMBER, BUCKET_TIMER_LOW, BUCKET_TIMER_HIGH, "
            f"COUNT_BUCKET FROM performance_schema.{HISTOGRAM_TABLE} WHERE COUNT_BUCKET > 0"
        )
        out: dict[DigestKey, dict[int, Bucket]] = {}
        for r in rows:
            buckets = out.setdefault((r["SCHEMA_NAME"], r["DIGEST"]), {})
            buckets[int(r["BUCKET_NUMBER"])] = Bucket(
                int(r["BUCKET_TIMER_LOW"]), int(r["BUCKET_TIMER_HIGH"]), int(r["COUNT_BUCKET"])
            )
        return out

    def _attach_examples(self, digests: list[dict[str, Any]]) -> None:
        try:
            examples = self._read_examples([d["digest"] for d in digests])
        except MonitorError as exc:  # examples are a bonus: ship the counts without them
            log.warning("%s: no examples this time: %s", self.name, exc)
            return
        for wire in digests:
            sql = examples.get((wire["schema_name"], wire["digest"]))
            shown = mask_example(sql, self.example_policy) if sql else None
            if shown is not None:
                wire["example"], wire["example_literals"] = shown

    def _read_examples(self, digests: list[str]) -> dict[DigestKey, str]:
        """The slowest complete statement text per digest in the statement history."""
        shape = self._server_shape()
        marks = ", ".join(["%s"] * len(digests))
        select = (
            "SELECT CURRENT_SCHEMA, DIGEST, SQL_TEXT, TIMER_WAIT FROM performance_schema.{} "
            f"WHERE DIGEST IN ({marks}) AND SQL_TEXT IS NOT NULL"
        )
        rows = self.conn.query(
            select.format("events_statements_history_long")
            + " UNION ALL "
            + select.format("events_statements_history"),
            [*digests, *digests],
        )
        best: dict[DigestKey, tuple[int, str]] = {}
        for r in rows:
            text = r["SQL_TEXT"]
            if len(text) >= shape.max_sql_text_length:
                continue  # cut off by performance_schema_max_sql_text_length
            key: DigestKey = (r["CURRENT_SCHEMA"], r["DIGEST"])
            wait = int(r["TIMER_WAIT"] or 0)
            if key not in best or wait > best[key][0]:
                best[key] = (wait, text)
        return {key: text for key, (_, text) in best.items()}


def _read_shape(conn: MonitorConnection) -> _ServerShape:
    present = {
        str(r["COLUMN_NAME"]).upper()
        for r in conn.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = %s",
            [DIGEST_TABLE],
        )
    }
    wanted = (*_KEY_COLUMNS, *DELTA_COLUMNS, *PASSTHROUGH_COLUMNS)
    histogram = conn.query(
        "SELECT COUNT(*) AS n FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = %s",
        [HISTOGRAM_TABLE],
    )
    length = conn.variables("performance_schema_max_sql_text_length")
    return _ServerShape(
        columns=tuple(c for c in wanted if c in present),
        has_histogram=int(histogram[0]["n"]) > 0,
        max_sql_text_length=int(length.get("performance_schema_max_sql_text_length", 1024)),
        connection=conn.connections_opened,
    )


def _executions(deltas: Iterable[DigestDelta]) -> dict[str, int]:
    """Executions per DIGEST_TEXT over the interval (the stage samples' denominators)."""
    totals: dict[str, int] = {}
    for delta in deltas:
        text = delta.row.digest_text
        if text:
            totals[text] = totals.get(text, 0) + delta.counters.get("COUNT_STAR", 0)
    return totals


def _middle_minute(start: datetime, end: datetime) -> datetime:
    """The minute of an interval's midpoint: where the ingest files a digest delta."""
    return (start + (end - start) / 2).replace(second=0, microsecond=0)


def _utc(value: object) -> datetime | None:
    # Sessions run in UTC; a zero timestamp comes back as a string.
    return value.replace(tzinfo=UTC) if isinstance(value, datetime) else None


def make_perfschema_collector(instance: InstanceSettings) -> PerfSchemaCollector:
    """The performance_schema collector for one configured instance (connects on first poll)."""
    return PerfSchemaCollector(
        conn=monitor_connection(instance),
        name=instance.name,
        example_policy=instance.examples.value,
    )


def monitor_connection(instance: InstanceSettings) -> MonitorConnection:
    """A monitoring connection to a configured instance; raises ValueError without a DSN."""
    if not instance.dsn:
        raise ValueError(f"instance {instance.name} has no dsn: performance_schema needs one")
    return MonitorConnection.from_dsn(instance.dsn, name=instance.name)
