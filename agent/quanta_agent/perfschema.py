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

Tags (key=value pairs in SQL comments, quanta.analysis.tags) come from the SQL_TEXT of
events_statements_history_long, since DIGEST_TEXT has dropped comments. A poll's digest delta
covers the statements that ended before its digest read started, so its tags come from the
statements of the history whose TIMER_END lies in (previous cut, this cut], the cut being the
TIMER_START of the agent's own digest read (read back from its thread's history, in the
server's timer): each statement falls in exactly one interval. Per digest, each tag group
becomes a wire row of its own with the counters its statements measured (:func:`split_by_tags`)
and the untagged row is what remains: per-tag figures are never extrapolated, and what the
ring lost before the agent read it stays untagged. Only the parsed tags leave the agent.
Where the stage consumers are on, each poll also carries the stage profiles of the statements
the history kept (quanta_agent.stages), with the digest counts of the same interval.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.redact import redact
from quanta.analysis.tags import tags_of
from quanta_agent.config import InstanceSettings
from quanta_agent.mysql import MonitorConnection, MonitorError, ServerClock
from quanta_agent.stages import StageSampler

log = logging.getLogger(__name__)

SOURCE = "perfschema"
PICOSECONDS_PER_SECOND = 10**12
DIGEST_TABLE = "events_statements_summary_by_digest"
HISTOGRAM_TABLE = "events_statements_histogram_by_digest"
HISTORY_TABLE = "events_statements_history_long"
# What tags from SQL_TEXT need (a history consumer reads nothing while its parent is off).
TAG_CONSUMERS = ("events_statements_current", "events_statements_history_long")

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
# A digest column's per-statement column in the history: SUM_X is X (SUM_TIMER_WAIT is
# TIMER_WAIT); COUNT_STAR is one per row. COUNT_SECONDARY has none (it stays untagged).
HISTORY_COLUMNS = {c: c.removeprefix("SUM_") for c in DELTA_COLUMNS if c.startswith("SUM_")}
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
    # The canonical tags of the statements this row counts ('' for the untagged rest), and
    # for a tagged row its measured MIN/MAX_TIMER_WAIT (in place of the digest's lifetime ones).
    tags: str = ""
    extremes: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class HistoryStatement:
    """One tagged statement of events_statements_history_long, in server units.

    ``counters`` holds its values under the digest table's column names (``SUM_ROWS_SENT``
    for ROWS_SENT, ``SUM_TIMER_WAIT`` for TIMER_WAIT): those the history has.
    """

    schema: str | None
    digest: str
    tags: str
    counters: Mapping[str, int]

    @property
    def key(self) -> DigestKey:
        """(schema, digest), as the digest table keys it."""
        return (self.schema, self.digest)


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


def split_by_tags(delta: DigestDelta, statements: Iterable[HistoryStatement]) -> list[DigestDelta]:
    """One digest's delta as its tagged rows and the untagged rest.

    ``statements`` are the digest's statements of the interval that the history kept; each
    group of equal tags (other than '') becomes a row whose counters are what its statements
    measured (COUNT_STAR their number, SUM_X the sum of their X, min/max timer wait theirs,
    a histogram by bucketing their TIMER_WAIT into the delta's buckets). The untagged row is
    the delta minus the tagged rows, each counter clamped at 0, and is left out when it
    counts no statement. A column the history lacks stays whole in the untagged row.

    Example:
        >>> rows = split_by_tags(delta, [HistoryStatement(None, "d1", "team=web", {...})])
        >>> [r.tags for r in rows]
        ['', 'team=web']
    """
    groups: dict[str, list[HistoryStatement]] = {}
    for statement in statements:
        if statement.tags:
            groups.setdefault(statement.tags, []).append(statement)
    if not groups:
        return [delta]
    rest = dict(delta.counters)
    rest_buckets = {b.low: b for b in delta.histogram} if delta.histogram is not None else None
    tagged: list[DigestDelta] = []
    for tags, group in sorted(groups.items()):
        counters = _measured(group, delta.counters)
        for name, value in counters.items():
            rest[name] = max(0, rest[name] - value)
        histogram = None
        if delta.histogram is not None:
            histogram = _checked_histogram(_bucketed(group, delta.histogram), len(group))
            if histogram is None or rest_buckets is None:
                rest_buckets = None  # a wait past the delta's buckets: no histogram
            else:
                for b in histogram:
                    old = rest_buckets[b.low]
                    rest_buckets[b.low] = Bucket(old.low, old.high, old.count - b.count)
        waits = [s.counters.get("SUM_TIMER_WAIT", 0) for s in group]
        extremes = {"MIN_TIMER_WAIT": min(waits), "MAX_TIMER_WAIT": max(waits)}
        tagged.append(
            replace(delta, counters=counters, histogram=histogram, tags=tags, extremes=extremes)
        )
    if rest.get("COUNT_STAR", 0) <= 0:
        return tagged
    histogram = None
    if rest_buckets is not None:
        histogram = _checked_histogram(
            [b for b in rest_buckets.values() if b.count != 0], rest["COUNT_STAR"]
        )
    return [replace(delta, counters=rest, histogram=histogram), *tagged]


def _measured(group: list[HistoryStatement], columns: Iterable[str]) -> dict[str, int]:
    """The digest counters of a group of statements: those the history has for them all."""
    out: dict[str, int] = {}
    for name in columns:
        if name == "COUNT_STAR":
            out[name] = len(group)
        elif all(name in s.counters for s in group):
            out[name] = sum(s.counters[name] for s in group)
    return out


def _bucketed(group: list[HistoryStatement], buckets: list[Bucket]) -> list[Bucket] | None:
    """The group's TIMER_WAITs counted into the delta's buckets (low <= wait < high); None
    when one falls in none of them."""
    counts = dict.fromkeys(range(len(buckets)), 0)
    for statement in group:
        wait = statement.counters.get("SUM_TIMER_WAIT", 0)
        found = next((n for n, b in enumerate(buckets) if b.low <= wait < b.high), None)
        if found is None:
            return None
        counts[found] += 1
    return [Bucket(b.low, b.high, counts[n]) for n, b in enumerate(buckets) if counts[n]]


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
    if delta.tags:
        wire["tags"] = delta.tags
    passthrough = row.passthrough if delta.extremes is None else delta.extremes
    for column, value in [*delta.counters.items(), *passthrough.items()]:
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
    history_columns: tuple[str, ...] = ()  # HISTORY_COLUMNS' values the history table has


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
    # The TIMER_START of the digest read of the previous poll (tags' window starts after it),
    # and that of this poll's, as read; None: unknown (no tags for the interval).
    _cut: int | None = None
    _cut_read: int | None = None
    _tagging: bool = False
    _warned_no_cut: bool = False

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
        self._tagging = self._tags_kept()
        self._cut_read = None
        snapshot = DigestSnapshot(
            clock=clock,
            rows=self._current_rows(),
            digest_lost=int(status.get("performance_schema_digest_lost", 0)),
        )
        diff = diff_snapshots(self._prev, snapshot, new_since=self._new_since)
        cut = self._cut_read
        body = self._body(diff, self._tagged_statements(clock, cut))
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
        self._cut = cut
        return body

    def _stage_sampler(self) -> StageSampler:
        if self._stages is None:
            self._stages = StageSampler(self.conn, self.name)
        return self._stages

    def close(self) -> None:
        """Close the monitoring connection."""
        self.conn.close()

    def _body(
        self, diff: DigestDiff, tagged: Mapping[DigestKey, list[HistoryStatement]]
    ) -> dict[str, Any]:
        if not diff.deltas and not diff.digest_lost:
            return {}
        digests = [
            delta_to_wire(part)
            for delta in diff.deltas
            for part in split_by_tags(delta, tagged.get(delta.row.key, ()))
        ]
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

    def _tags_kept(self) -> bool:
        """Whether the statement history is kept (tags from SQL_TEXT need it)."""
        marks = ", ".join(["%s"] * len(TAG_CONSUMERS))
        rows = self.conn.query(
            f"SELECT NAME, ENABLED FROM performance_schema.setup_consumers WHERE NAME IN ({marks})",
            list(TAG_CONSUMERS),
        )
        on = {str(r["NAME"]) for r in rows if str(r["ENABLED"]).upper() == "YES"}
        if on < set(TAG_CONSUMERS):
            return False
        # Known before the digest read, so that nothing runs between it and the cut's read.
        return self._stage_sampler().own_thread() is not None

    def _read_cut(self, select: str) -> int | None:
        """The TIMER_START of the digest read just run (``select``): the last statement of
        the agent's own thread in the history; None when it is not there."""
        own = self._stage_sampler().own_thread()
        try:
            rows = self.conn.query(
                "SELECT TIMER_START, SQL_TEXT FROM performance_schema."
                f"{HISTORY_TABLE} WHERE THREAD_ID = %s ORDER BY EVENT_ID DESC LIMIT 1",
                [own],
            )
        except MonitorError as exc:
            log.warning("%s: no tags this time: %s", self.name, exc)
            return None
        text = str(rows[0]["SQL_TEXT"] or "") if rows else ""
        if not text or not select.startswith(text[:40]) or rows[0]["TIMER_START"] is None:
            if not self._warned_no_cut:
                log.warning(
                    "%s: the agent's own statements are not in %s (is its thread "
                    "instrumented?): no tags from performance_schema",
                    self.name,
                    HISTORY_TABLE,
                )
                self._warned_no_cut = True
            return None
        return int(rows[0]["TIMER_START"])

    def _tagged_statements(
        self, clock: ServerClock, cut: int | None
    ) -> dict[DigestKey, list[HistoryStatement]]:
        """The statements with tags that ended in (previous cut, ``cut``], per digest.

        Not the stage sampler's read of the same table: its window follows the stage ring
        (statements whose stages it holds, from the stage consumers' on), this one the
        digest reads, whatever the stage consumers; they differ, so each keeps its own.
        """
        after = self._cut
        if self._prev is not None and clock.restarted_since(self._prev.clock):
            after = 0  # timers start over: all the history holds is of this interval
        if cut is None or after is None or self._prev is None:
            return {}  # the first interval with a cut: it only sets where the next starts
        if cut < after:
            after = 0  # a restart that the Uptime did not show: timers went back
        shape = self._server_shape()
        columns = "".join(f", {c}" for c in shape.history_columns)
        try:
            rows = self.conn.query(
                f"SELECT CURRENT_SCHEMA, DIGEST, SQL_TEXT{columns} "
                f"FROM performance_schema.{HISTORY_TABLE} "
                "WHERE TIMER_END > %s AND TIMER_END <= %s AND DIGEST IS NOT NULL "
                "AND THREAD_ID <> %s AND (SQL_TEXT LIKE %s OR SQL_TEXT LIKE %s "
                "OR SQL_TEXT LIKE %s)",
                [after, cut, self._stage_sampler().own_thread(), "%/*%", "%#%", "%--%"],
            )
        except MonitorError as exc:  # tags are a bonus: the counts go untagged
            log.warning("%s: no tags this time: %s", self.name, exc)
            return {}
        names = {column: name for name, column in HISTORY_COLUMNS.items()}
        out: dict[DigestKey, list[HistoryStatement]] = {}
        for r in rows:
            tags = tags_of(r["SQL_TEXT"] or "")
            if not tags:
                continue
            statement = HistoryStatement(
                schema=r["CURRENT_SCHEMA"],
                digest=r["DIGEST"],
                tags=tags,
                counters={names[c]: int(r[c] or 0) for c in shape.history_columns},
            )
            out.setdefault(statement.key, []).append(statement)
        return out

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
        if self._tagging:  # right after the read, before anything else runs on the thread
            self._cut_read = self._read_cut(select)
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
            examples = self._read_examples(list(dict.fromkeys(d["digest"] for d in digests)))
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
    in_history = {
        str(r["COLUMN_NAME"]).upper()
        for r in conn.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = %s",
            [HISTORY_TABLE],
        )
    }
    return _ServerShape(
        columns=tuple(c for c in wanted if c in present),
        has_histogram=int(histogram[0]["n"]) > 0,
        max_sql_text_length=int(length.get("performance_schema_max_sql_text_length", 1024)),
        connection=conn.connections_opened,
        history_columns=tuple(
            column
            for name, column in HISTORY_COLUMNS.items()
            if column in in_history and name in present
        ),
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
