"""Production stage profiles: each poll's new statements of performance_schema's history, with
their stages and waits, folded per query class (the fold is quanta.analysis.stages).

Part of the ``perfschema`` source, with no setting of its own: stages are sampled whenever
the server's consumers keep them (events_statements_history_long and
events_stages_history_long with their parents, and most stage/sql instruments enabled and
timed); waits where events_waits_history_long is on too. Every statement sent is a SELECT
on performance_schema.

Each poll reads the wait ring and the stage ring whole (what each held comes from the same
read), then the statements that ended since the cursor's ``read_from`` and by the newest
stage read, and started after the oldest stage kept, and keeps those above their thread's
EVENT_ID mark (with the statements run inside them). Everything the poll learnt lands in
the minute of the poll interval's midpoint,
as the digest deltas do, with the digest table's count of the same interval beside it
(``executions_total``): how large the sample is, per class, never extrapolated.

The first poll only sets the watermarks (what is in the rings happened before the agent
started); after a server restart (thread and event ids start over) everything in the rings
is new. TRUNCATE of the history tables needs nothing: EVENT_IDs and timers go on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.stages import (
    PICOSECONDS_PER_SECOND,
    FoldCounts,
    HistoryCursor,
    Ring,
    StageEvent,
    StageSample,
    Statement,
    WaitEvent,
    fold_statements,
    take_new,
)
from quanta_agent.mysql import MonitorConnection, ServerClock

log = logging.getLogger(__name__)

STATEMENTS = "performance_schema.events_statements_history_long"
STAGES = "performance_schema.events_stages_history_long"
WAITS = "performance_schema.events_waits_history_long"
# The consumers each kind needs, parents included (a history consumer reads nothing while
# its parent "current" consumer is off).
STAGE_CONSUMERS = (
    "global_instrumentation",
    "thread_instrumentation",
    "events_statements_current",
    "events_statements_history_long",
    "events_stages_current",
    "events_stages_history_long",
)
WAIT_CONSUMERS = ("events_waits_current", "events_waits_history_long")
# What turns them on and off at runtime (quanta-agent check prints them, the bench runs them,
# docs/operations.md has the my.cnf lines that survive a restart). Off leaves the ALTER TABLE
# progress instruments (stage/innodb/%) and the wait/io instruments that feed the table I/O
# statistics as the server's defaults have them.
ENABLE_STAGES = (
    "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' "
    "WHERE NAME LIKE 'stage/%';",
    "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN "
    "('events_statements_current', 'events_statements_history_long', "
    "'events_stages_current', 'events_stages_history_long');",
)
DISABLE_STAGES = (
    "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME IN "
    "('events_stages_current', 'events_stages_history_long');",
    "UPDATE performance_schema.setup_instruments SET ENABLED = 'NO', TIMED = 'NO' "
    "WHERE NAME LIKE 'stage/sql/%';",
)
ENABLE_WAITS = (
    "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' "
    "WHERE NAME LIKE 'wait/io/%' OR NAME LIKE 'wait/lock/%';",
    "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN "
    "('events_waits_current', 'events_waits_history_long');",
)
# What they cost: bench/agent_overhead.py on MariaDB 10.11, 2 shared cores (docs/operations.md).
COST_NOTE = (
    "Measured cost (sysbench oltp_read_only, median of 8 pairs on a shared 2-core machine): "
    "stages on -5.2% throughput (+3.2% server CPU per transaction), their waits on top -5.1% "
    "(+0.5%); the agent's CPU +184 ms per poll at 1,000 statements/s (0.3% of a core at the "
    "60 s poll interval)."
)
DISABLE_WAITS = (
    "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME IN "
    "('events_waits_current', 'events_waits_history_long');",
)
# Entries of a sample's stage or wait list: the ingest API takes at most 1000 per list.
MAX_ENTRIES = 1000

_K = TypeVar("_K")
_STATEMENT_COLUMNS = (
    "THREAD_ID, EVENT_ID, NESTING_EVENT_ID, NESTING_EVENT_TYPE, CURRENT_SCHEMA, DIGEST, "
    "TIMER_START, TIMER_END, TIMER_WAIT"
)


@dataclass(frozen=True, slots=True)
class Collection:
    """Which parts of a production profile the server's consumers keep."""

    stages: bool
    waits: bool

    def to_wire(self) -> dict[str, bool]:
        """The ingest API's ``stage_collection``."""
        return {"stages": self.stages, "waits": self.waits}


@dataclass(frozen=True, slots=True)
class HistoryRead:
    """What one poll read of the history: the statements it takes, their stages and waits,
    and the cursor to keep once the poll's batch is built."""

    cursor: HistoryCursor
    statements: list[Statement] = field(default_factory=list)
    stages: list[StageEvent] = field(default_factory=list)
    waits: list[WaitEvent] = field(default_factory=list)
    stage_ring: Ring | None = None
    wait_ring: Ring | None = None
    baseline: bool = False


@dataclass
class _Shape:
    """What the server's session offers, learnt once per connection."""

    connection: int
    own_thread: int | None
    stage_ring_size: int
    wait_ring_size: int


@dataclass
class StageSampler:
    """Samples one instance's statement stages; used by the performance_schema collector."""

    conn: MonitorConnection
    name: str
    fingerprinter: Fingerprinter = field(default_factory=Fingerprinter)
    cursor: HistoryCursor | None = None  # None: no baseline yet
    _clock: ServerClock | None = None
    _shape: _Shape | None = None
    _reported: Collection | None = None

    def collection(self) -> Collection:
        """Whether the consumers and instruments keep stages (and waits) now."""
        enabled = {
            str(r["NAME"]): str(r["ENABLED"]).upper() == "YES"
            for r in self.conn.query("SELECT NAME, ENABLED FROM performance_schema.setup_consumers")
        }
        instruments = {
            str(r["KIND"]): (int(r["timed"] or 0), int(r["n"]))
            for r in self.conn.query(
                "SELECT SUBSTRING_INDEX(NAME, '/', 1) AS KIND, COUNT(*) AS n, "
                "SUM(ENABLED = 'YES' AND TIMED = 'YES') AS timed "
                "FROM performance_schema.setup_instruments "
                "WHERE NAME LIKE 'stage/sql/%' OR NAME LIKE 'wait/%' GROUP BY KIND"
            )
        }
        # The server's own stages (stage/sql) mostly on: a few progress instruments that
        # are on by default do not make a profile.
        timed, count = instruments.get("stage", (0, 0))
        stages = all(enabled.get(c, False) for c in STAGE_CONSUMERS) and 2 * timed >= count > 0
        waits = stages and all(enabled.get(c, False) for c in WAIT_CONSUMERS)
        return Collection(stages=stages, waits=waits and instruments.get("wait", (0, 0))[0] > 0)

    def read(self, clock: ServerClock, collection: Collection) -> HistoryRead | None:
        """Read the history since the last poll (before the digest table, so that the digest
        counts include every statement read); None when stages are not kept.

        The rings are read first, whole (the waits', then the stages'), then the statements
        that ended by the newest stage read and started after the oldest one kept: on a busy
        server the stage ring holds well under a second, and statements read first would
        have lost their stages by the time these were read.
        """
        restarted = self._clock is not None and clock.restarted_since(self._clock)
        self._clock = clock
        if not collection.stages:
            self.cursor = None  # turned off: when on again, start from a baseline
            return None
        shape = self._server_shape()
        baseline = self.cursor is None
        cursor = HistoryCursor() if baseline or restarted else self.cursor
        assert cursor is not None
        waits, wait_ring = self._waits(shape) if collection.waits else ([], None)
        stages, stage_ring = self._stages(shape)
        # Every stage of a statement that ended by the newest stage read is in the read (the
        # waits of those that ended by the newest wait read: Ring.holds).
        newest = stage_ring.newest_end
        if newest is None:
            return HistoryRead(cursor, baseline=baseline)
        oldest = stage_ring.oldest_end if stage_ring.rows >= stage_ring.size else None
        window = (cursor.read_from, newest, oldest)
        top = self._statements(shape, nested=False, window=window)
        after, taken = take_new(cursor, top=top, nested=[])
        if baseline or not taken:
            return HistoryRead(after, baseline=baseline)
        earliest = min(s.timer_start for s in taken)
        nested = self._statements(shape, nested=True, window=(earliest - 1, newest, oldest))
        after, taken = take_new(cursor, top=top, nested=nested)
        return HistoryRead(after, taken, stages, waits, stage_ring, wait_ring)

    def fold(
        self,
        read: HistoryRead | None,
        *,
        texts: Mapping[str, str],
        totals: Mapping[str, int],
        minute: datetime,
    ) -> list[dict[str, Any]]:
        """The wire rows of one poll (``stage_samples``): per query class its sample, and
        ``totals`` (DIGEST_TEXT -> executions the digest table counted in the interval).

        ``texts`` maps a DIGEST to its DIGEST_TEXT (the digest table's): a statement's class
        is the fingerprint of that text, as for the digest deltas, so both agree.
        """
        if read is None or read.baseline:
            return []
        classify = self._classifier(texts)
        samples: dict[str, StageSample] = {}
        counts = FoldCounts(0, 0, 0)
        if read.statements and read.stage_ring is not None:
            samples, counts = fold_statements(
                read.statements,
                read.stages,
                read.waits,
                stage_ring=read.stage_ring,
                wait_ring=read.wait_ring,
                classify=classify,
            )
        for text, executions in totals.items():
            fingerprint, query_id = self.fingerprinter(text)
            sample = samples.get(query_id)
            if sample is None:
                sample = samples[query_id] = StageSample(fingerprint)
            sample.executions_total += executions
        total = sum(totals.values())
        log.debug(
            "%s: stages of %d of %d statements (%d taken, %d with an unknown digest)",
            self.name, counts.sampled, total, counts.statements, counts.unclassified,
        )  # fmt: skip
        return [sample_to_wire(s, minute) for s in samples.values()]

    def keep(self, read: HistoryRead | None) -> None:
        """Move the watermarks past a read whose batch was built."""
        if read is not None:
            self.cursor = read.cursor

    def report(self, collection: Collection, *, shipping: bool) -> dict[str, bool] | None:
        """The ``stage_collection`` to ship: with every batch, and on its own when it
        changed."""
        changed = collection != self._reported
        self._reported = collection
        return collection.to_wire() if shipping or changed else None

    def own_thread(self) -> int | None:
        """The agent's own THREAD_ID on the server (None when performance_schema has none)."""
        return self._server_shape().own_thread

    # ------------------------------------------------------------------ reads

    def _classifier(self, texts: Mapping[str, str]) -> Callable[[str | None, str], Any]:
        def classify(schema: str | None, digest: str) -> tuple[str, str] | None:
            text = texts.get(digest)
            return None if text is None else self.fingerprinter(text)

        return classify

    def _server_shape(self) -> _Shape:
        if self._shape is None or self._shape.connection != self.conn.connections_opened:
            own = self.conn.query(
                "SELECT THREAD_ID FROM performance_schema.threads "
                "WHERE PROCESSLIST_ID = CONNECTION_ID()"
            )
            sizes = self.conn.query(
                "SELECT @@performance_schema_events_stages_history_long_size AS stages, "
                "@@performance_schema_events_waits_history_long_size AS waits"
            )[0]
            self._shape = _Shape(
                connection=self.conn.connections_opened,
                own_thread=int(own[0]["THREAD_ID"]) if own else None,
                stage_ring_size=int(sizes["stages"]),
                wait_ring_size=int(sizes["waits"]),
            )
        return self._shape

    def _statements(
        self, shape: _Shape, *, nested: bool, window: tuple[int | None, int, int | None]
    ) -> list[Statement]:
        """Top-level statements (or statements run inside others) that ended after
        ``window[0]`` (None: any time) and by ``window[1]``, and started at or after
        ``window[2]`` (None: any time); the agent's own left out."""
        after, by, started = window
        where = [
            "TIMER_END IS NOT NULL",
            "THREAD_ID <> %s",
            "TIMER_END <= %s",
            "NESTING_EVENT_TYPE = 'STATEMENT'"
            if nested
            else "(NESTING_EVENT_TYPE IS NULL OR NESTING_EVENT_TYPE <> 'STATEMENT') "
            "AND DIGEST IS NOT NULL",
        ]
        args: list[Any] = [shape.own_thread if shape.own_thread is not None else -1, by]
        if after is not None:
            where.append("TIMER_END > %s")
            args.append(after)
        if started is not None:
            where.append("TIMER_START >= %s")
            args.append(started)
        rows = self.conn.query(
            f"SELECT {_STATEMENT_COLUMNS} FROM {STATEMENTS} WHERE {' AND '.join(where)}", args
        )
        return [statement_of(r) for r in rows]

    def _stages(self, shape: _Shape) -> tuple[list[StageEvent], Ring]:
        """The whole stage ring: its stages, and what it held (from the same read)."""
        rows = self.conn.query(
            "SELECT THREAD_ID, EVENT_ID, NESTING_EVENT_ID, NESTING_EVENT_TYPE, EVENT_NAME, "
            f"TIMER_END, TIMER_WAIT FROM {STAGES}"
        )
        stages = [stage_of(r) for r in rows if r["NESTING_EVENT_TYPE"] == "STATEMENT"]
        return stages, _ring(rows, shape.stage_ring_size)

    def _waits(self, shape: _Shape) -> tuple[list[WaitEvent], Ring]:
        """The whole wait ring: the waits in stages or between them, and what it held."""
        rows = self.conn.query(
            "SELECT THREAD_ID, NESTING_EVENT_ID, NESTING_EVENT_TYPE, EVENT_NAME, TIMER_END, "
            f"TIMER_WAIT FROM {WAITS}"
        )
        waits = [wait_of(r) for r in rows if r["NESTING_EVENT_TYPE"] in ("STAGE", "STATEMENT")]
        return waits, _ring(rows, shape.wait_ring_size)


def _ring(rows: Sequence[Mapping[str, Any]], size: int) -> Ring:
    ends = [int(r["TIMER_END"]) for r in rows if r["TIMER_END"] is not None]
    return Ring(
        rows=len(rows),
        size=size,
        oldest_end=min(ends, default=None),
        newest_end=max(ends, default=None),
    )


def statement_of(row: Mapping[str, Any]) -> Statement:
    """A statement from its events_statements_history_long row (MariaDB and MySQL alike)."""
    return Statement(
        thread_id=int(row["THREAD_ID"]),
        event_id=int(row["EVENT_ID"]),
        parent_id=_parent(row),
        schema=row["CURRENT_SCHEMA"],
        digest=row["DIGEST"],
        timer_start=int(row["TIMER_START"]),
        timer_end=int(row["TIMER_END"]),
        timer_wait=int(row["TIMER_WAIT"] or 0),
    )


def stage_of(row: Mapping[str, Any]) -> StageEvent:
    """A stage from its events_stages_history_long row (untimed: no time)."""
    return StageEvent(
        thread_id=int(row["THREAD_ID"]),
        event_id=int(row["EVENT_ID"]),
        statement_id=int(row["NESTING_EVENT_ID"]),
        name=str(row["EVENT_NAME"]),
        timer_wait=int(row["TIMER_WAIT"] or 0),
    )


def wait_of(row: Mapping[str, Any]) -> WaitEvent:
    """A wait from its events_waits_history_long row (nested in a stage or a statement)."""
    return WaitEvent(
        thread_id=int(row["THREAD_ID"]),
        parent_id=int(row["NESTING_EVENT_ID"]),
        in_stage=row["NESTING_EVENT_TYPE"] == "STAGE",
        name=str(row["EVENT_NAME"]),
        timer_wait=int(row["TIMER_WAIT"] or 0),
    )


def _parent(row: Mapping[str, Any]) -> int | None:
    if row["NESTING_EVENT_TYPE"] != "STATEMENT" or row["NESTING_EVENT_ID"] is None:
        return None
    return int(row["NESTING_EVENT_ID"])


def sample_to_wire(sample: StageSample, minute: datetime) -> dict[str, Any]:
    """The ingest API's JSON form of one class's sample (``StageSampleIn``), seconds."""
    stages = _largest(sample.stages)
    waits = _largest(sample.waits)
    return {
        "fingerprint": sample.fingerprint,
        "bucket_start": minute.isoformat(),
        "executions_sampled": sample.executions_sampled,
        "executions_total": sample.executions_total,
        "response_s": _seconds(sample.response),
        "waits_sampled": sample.waits_sampled,
        "stages": [
            {"stage": name, "time_s": _seconds(time), "calls": int(calls)}
            for name, (time, calls) in stages
        ],
        "waits": [
            {"stage": stage, "event": event, "time_s": _seconds(time), "count": int(count)}
            for (stage, event), (time, count) in waits
        ],
    }


def _largest(sums: Mapping[_K, Sequence[float]]) -> list[tuple[_K, Sequence[float]]]:
    """The entries with the most time, at most MAX_ENTRIES of them."""
    entries = list(sums.items())
    if len(entries) > MAX_ENTRIES:
        entries = sorted(entries, key=lambda item: -item[1][0])[:MAX_ENTRIES]
    return entries


def _seconds(picoseconds: float) -> float:
    return picoseconds / PICOSECONDS_PER_SECOND
