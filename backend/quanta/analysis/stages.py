"""Production stage profiles: where each query class's time goes, from what performance_schema
already measured on the monitored server, with nothing executed.

performance_schema keeps the last statements of the server in events_statements_history_long,
their stages in events_stages_history_long (each stage's NESTING_EVENT_ID is its statement's
EVENT_ID) and, where enabled, the waits in those stages in events_waits_history_long. They
are ring buffers: a busy server overwrites them within seconds, so what the agent reads is a
sample, and it says how large (sampled executions against the digest table's count).

The pure part, shared by the agent and the server:

* :func:`take_new` picks the statements a poll has not taken before (per-thread EVENT_ID
  watermarks, :class:`HistoryCursor`), statements run inside others (a stored program's)
  together with the statement they run in;
* :func:`fold_statements` folds them per query class: executions sampled, their response
  time, per stage the time and calls, per (stage, wait event) the waits; a statement whose
  stages (or waits) may have been overwritten before the read is not sampled (or its waits
  are not), so a sample is never partial (:class:`Ring`);
* :func:`merge_samples` takes the agent's rows to the server's query ids (grouping rules),
  and :func:`rank_profile` turns the sums over a range into the ranked profile with its
  lost-time row.

Times are picoseconds on the agent (integers: sums are exact), seconds on the wire and in
the store. A statement's lost time is its response time less the time of its stages (the
server's work outside any stage); as in :mod:`quanta.analysis.profile`, a statement whose
stages add up to more than its own timer counts its stage time as its response time, so lost
time is never negative.

Example:
    >>> cursor, new = take_new(HistoryCursor(), top=statements, nested=[])
    >>> samples, counts = fold_statements(new, stages, waits, stage_ring=ring,
    ...                                   wait_ring=None, classify=classify)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

from quanta.analysis.profile import LOST_TIME, stage_state

__all__ = [
    "LOST_TIME",
    "PICOSECONDS_PER_SECOND",
    "READ_OVERLAP_PS",
    "FoldCounts",
    "HistoryCursor",
    "RankedStage",
    "RankedWait",
    "Ring",
    "StageEvent",
    "StageProfile",
    "StageSample",
    "Statement",
    "WaitEvent",
    "fold_statements",
    "merge_samples",
    "rank_profile",
    "take_new",
]

PICOSECONDS_PER_SECOND = 10**12
READ_OVERLAP_PS = PICOSECONDS_PER_SECOND
"""How far before the last statement end it saw the next read starts. A statement's TIMER_END
is taken a moment before its row enters the ring, so a row of another thread that ended just
before may arrive after a read; the watermarks drop what is read twice."""

# A query class: (fingerprint, query_id), as the one fingerprint function gives them.
Classified = tuple[str, str]
# (schema, DIGEST) -> the statement's class, or None when the digest table does not know it.
Classify = Callable[[str | None, str], Classified | None]
_Key = tuple[int, int]  # (THREAD_ID, EVENT_ID)
_K = TypeVar("_K")


@dataclass(frozen=True, slots=True)
class Statement:
    """One row of events_statements_history_long (timers in picoseconds)."""

    thread_id: int
    event_id: int
    # The statement it runs in (NESTING_EVENT_TYPE = 'STATEMENT': a stored program's CALL);
    # None at the top level (no nesting, or a transaction).
    parent_id: int | None
    schema: str | None
    digest: str
    timer_start: int
    timer_end: int
    timer_wait: int


@dataclass(frozen=True, slots=True)
class StageEvent:
    """One row of events_stages_history_long: a stage of the statement ``statement_id``."""

    thread_id: int
    event_id: int
    statement_id: int
    name: str
    timer_wait: int


@dataclass(frozen=True, slots=True)
class WaitEvent:
    """One row of events_waits_history_long nested in a stage (``in_stage``) or, between
    stages, directly in a statement; waits nested in waits are left out (their time is in
    the outer wait's)."""

    thread_id: int
    parent_id: int
    in_stage: bool
    name: str
    timer_wait: int


@dataclass(frozen=True, slots=True)
class Ring:
    """What a history_long ring buffer held when it was read."""

    rows: int
    size: int
    oldest_end: int | None  # TIMER_END of its oldest event, picoseconds
    newest_end: int | None = None  # and of its newest

    def holds(self, start: int, end: int) -> bool:
        """Whether the ring still held every event of a statement that ran from ``start`` to
        ``end`` when it was read.

        Events enter the ring as they end and the oldest is overwritten first: if the ring
        never filled nothing was lost, else what ended before its oldest event may be gone;
        and a statement that ended after the newest event read may have events the read
        missed.

        Example:
            >>> Ring(rows=10_000, size=10_000, oldest_end=500, newest_end=900).holds(400, 800)
            False
        """
        kept = self.rows < self.size or (self.oldest_end is not None and self.oldest_end <= start)
        return kept and (self.newest_end is None or end <= self.newest_end)


@dataclass(frozen=True, slots=True)
class HistoryCursor:
    """Where the previous poll left the statement history.

    ``marks`` holds per thread the EVENT_ID of the last top-level statement taken (a thread's
    EVENT_IDs only grow, across TRUNCATE too; a restart is a new cursor). ``read_from`` is
    the TIMER_END the next read starts from (None: the whole ring): a row that ended before
    it was read by an earlier poll.
    """

    marks: Mapping[int, int] = field(default_factory=dict)
    read_from: int | None = None


def take_new(
    cursor: HistoryCursor, *, top: Sequence[Statement], nested: Sequence[Statement]
) -> tuple[HistoryCursor, list[Statement]]:
    """The statements no earlier poll took, and the cursor after this poll.

    Args:
        cursor: Where the previous poll stopped.
        top: Top-level statements read from ``cursor.read_from`` on.
        nested: Statements run inside others that ended since the earliest start of the new
            top-level ones. One is taken with the top-level statement it runs in: it ends
            first, with a larger EVENT_ID, so it cannot move its thread's mark.

    Returns:
        The cursor to read from next time, and the new statements (top-level and nested).
        Marks are kept only for the threads read: a thread absent from this read has no row
        left that a later read could see again.

    Example:
        >>> cursor, new = take_new(HistoryCursor({7: 40}), top=[s41, s39], nested=[])
        >>> [s.event_id for s in new], dict(cursor.marks)
        ([41], {7: 41})
    """
    marks: dict[int, int] = {}
    taken: dict[_Key, Statement] = {}
    for statement in top:
        thread = statement.thread_id
        mark = cursor.marks.get(thread)
        if mark is None or statement.event_id > mark:
            taken[(thread, statement.event_id)] = statement
        marks[thread] = max(marks.get(thread, 0), mark or 0, statement.event_id)
    read_from = cursor.read_from
    if top:
        last = max(statement.timer_end for statement in top) - READ_OVERLAP_PS
        read_from = last if read_from is None else max(read_from, last)
    inner = {(s.thread_id, s.event_id): s for s in nested}
    new = list(taken.values())
    new.extend(s for s in nested if _outermost(s, inner) in taken)
    return HistoryCursor(marks, read_from), new


def _outermost(statement: Statement, inner: Mapping[_Key, Statement]) -> _Key:
    """The key of the top-level statement ``statement`` runs in (as far as the read goes)."""
    key = (statement.thread_id, statement.event_id)
    seen = {key}
    while statement.parent_id is not None:
        key = (statement.thread_id, statement.parent_id)
        parent = inner.get(key)
        if parent is None or key in seen:
            return key
        seen.add(key)
        statement = parent
    return key


@dataclass(slots=True)
class StageSample:
    """The sampled executions of one query class (in one minute): sums that add up.

    ``stages`` maps a stage to [time, calls]; ``waits`` a (stage, wait event) to [time,
    count]: waits between stages are filed under LOST_TIME. Times are picoseconds on the
    agent, seconds on the server.
    """

    fingerprint: str
    executions_sampled: int = 0
    executions_total: int = 0
    response: float = 0
    waits_sampled: int = 0
    stages: dict[str, list[float]] = field(default_factory=dict)
    waits: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def merge(self, other: StageSample) -> None:
        """Add another sample of the same class and minute to this one."""
        self.executions_sampled += other.executions_sampled
        self.executions_total += other.executions_total
        self.response += other.response
        self.waits_sampled += other.waits_sampled
        _add_all(self.stages, other.stages)
        _add_all(self.waits, other.waits)


def _add_all(into: dict[_K, list[float]], sums: Mapping[_K, Sequence[float]]) -> None:
    for key, (time, count) in sums.items():
        _add(into, key, time, count)


def _add(into: dict[_K, list[float]], key: _K, time: float, count: float) -> None:
    known = into.get(key)
    if known is None:
        into[key] = [time, count]
    else:
        known[0] += time
        known[1] += count


@dataclass(frozen=True, slots=True)
class FoldCounts:
    """What one fold did with the statements it was given."""

    statements: int  # taken this poll
    sampled: int  # their stages were whole: folded
    unclassified: int  # the digest table did not know their digest (it was full)


def fold_statements(
    statements: Iterable[Statement],
    stages: Iterable[StageEvent],
    waits: Iterable[WaitEvent],
    *,
    stage_ring: Ring,
    wait_ring: Ring | None,
    classify: Classify,
) -> tuple[dict[str, StageSample], FoldCounts]:
    """Fold statements with their stages and waits per query id (times in picoseconds).

    A statement is sampled only if the stage ring still held every stage it could have had
    (``stage_ring.holds`` it), and its waits are folded only if the wait ring (None: waits
    are off) held all of its waits; ``waits_sampled`` counts those statements.

    Example:
        >>> samples, counts = fold_statements([s], [st1, st2], [], stage_ring=ring,
        ...                                   wait_ring=None, classify=classify)
        >>> samples[qid].stages["Sending data"]
        [5000000, 1]
    """
    by_statement: dict[_Key, list[StageEvent]] = {}
    stage_names: dict[_Key, str] = {}
    for stage in stages:
        by_statement.setdefault((stage.thread_id, stage.statement_id), []).append(stage)
        stage_names[(stage.thread_id, stage.event_id)] = stage_state(stage.name)
    waits_in: dict[tuple[int, int, bool], list[WaitEvent]] = {}
    for wait in waits:
        waits_in.setdefault((wait.thread_id, wait.parent_id, wait.in_stage), []).append(wait)
    samples: dict[str, StageSample] = {}
    taken = sampled = unclassified = 0
    for statement in statements:
        taken += 1
        query = classify(statement.schema, statement.digest)
        if query is None:
            unclassified += 1
            continue
        if not stage_ring.holds(statement.timer_start, statement.timer_end):
            continue
        sampled += 1
        fingerprint, query_id = query
        sample = samples.get(query_id)
        if sample is None:
            sample = samples[query_id] = StageSample(fingerprint)
        own = by_statement.get((statement.thread_id, statement.event_id), [])
        stage_time = 0
        for stage in own:
            _add(sample.stages, stage_state(stage.name), stage.timer_wait, 1)
            stage_time += stage.timer_wait
        sample.executions_sampled += 1
        sample.response += max(statement.timer_wait, stage_time)
        if wait_ring is not None and wait_ring.holds(statement.timer_start, statement.timer_end):
            sample.waits_sampled += 1
            _fold_waits(sample, statement, own, waits_in, stage_names)
    return samples, FoldCounts(taken, sampled, unclassified)


def _fold_waits(
    sample: StageSample,
    statement: Statement,
    own: Sequence[StageEvent],
    waits_in: Mapping[tuple[int, int, bool], Sequence[WaitEvent]],
    stage_names: Mapping[_Key, str],
) -> None:
    thread = statement.thread_id
    for stage in own:
        name = stage_names[(thread, stage.event_id)]
        for wait in waits_in.get((thread, stage.event_id, True), ()):
            _add(sample.waits, (name, wait.name), wait.timer_wait, 1)
    for wait in waits_in.get((thread, statement.event_id, False), ()):
        _add(sample.waits, (LOST_TIME, wait.name), wait.timer_wait, 1)


# --------------------------------------------------------------------------- the server


class WireStage(Protocol):
    """A stage of a wire sample: its time (seconds) and calls."""

    @property
    def stage(self) -> str: ...
    @property
    def time_s(self) -> float: ...
    @property
    def calls(self) -> int: ...


class WireWait(Protocol):
    """A wait event under a stage of a wire sample: its time (seconds) and count."""

    @property
    def stage(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def time_s(self) -> float: ...
    @property
    def count(self) -> int: ...


class WireSample(Protocol):
    """What the server reads of an agent's sample (quanta.ingest.schemas.StageSampleIn)."""

    @property
    def fingerprint(self) -> str: ...
    @property
    def bucket_start(self) -> datetime: ...
    @property
    def executions_sampled(self) -> int: ...
    @property
    def executions_total(self) -> int: ...
    @property
    def response_s(self) -> float: ...
    @property
    def waits_sampled(self) -> int: ...
    @property
    def stages(self) -> Sequence[WireStage]: ...
    @property
    def waits(self) -> Sequence[WireWait]: ...


def merge_samples(
    rows: Iterable[WireSample], classify: Callable[[str], Classified]
) -> dict[tuple[datetime, str], StageSample]:
    """The agent's samples keyed by (minute, query_id) as the server's grouping rules make
    them: each fingerprint is fingerprinted again (a fingerprint is its own fingerprint), so
    classes the rules join are merged. Times stay in seconds.

    Example:
        >>> merged = merge_samples(batch.stage_samples, fingerprinter)
        >>> sum(s.executions_sampled for s in merged.values())
        12
    """
    merged: dict[tuple[datetime, str], StageSample] = {}
    for row in rows:
        fingerprint, query_id = classify(row.fingerprint)
        sample = StageSample(
            fingerprint,
            row.executions_sampled,
            row.executions_total,
            row.response_s,
            row.waits_sampled,
        )
        for stage in row.stages:
            _add(sample.stages, stage.stage, stage.time_s, stage.calls)
        for wait in row.waits:
            _add(sample.waits, (wait.stage, wait.event), wait.time_s, wait.count)
        key = (row.bucket_start, query_id)
        known = merged.get(key)
        if known is None:
            merged[key] = sample
        else:
            known.merge(sample)
    return merged


@dataclass(frozen=True, slots=True)
class RankedStage:
    """One stage of a production profile."""

    stage: str
    time: float
    share: float  # of the response time
    calls: int
    per_call: float


@dataclass(frozen=True, slots=True)
class RankedWait:
    """One wait event under one stage (LOST_TIME: between stages)."""

    stage: str
    event: str
    time: float
    count: int


@dataclass(frozen=True, slots=True)
class StageProfile:
    """The ranked production profile of a query over a range."""

    executions_sampled: int
    executions_total: int
    response: float
    stages: tuple[RankedStage, ...]
    lost_time: float
    waits_sampled: int
    waits: tuple[RankedWait, ...]


def rank_profile(sample: StageSample) -> StageProfile:
    """A range's summed sample as a ranked profile: stages by time, worst first (ties by
    name), each with its share of the response time, calls and time per call; lost time is
    the response time no stage accounts for; waits under their stage, in the stages' order
    (those between stages last), each stage's by time.

    Example:
        >>> sample = StageSample("select ?", 2, 2, 0.010, 0, {"Sending data": [0.006, 2],
        ...                      "init": [0.001, 2]})
        >>> profile = rank_profile(sample)
        >>> [(s.stage, s.share) for s in profile.stages], round(profile.lost_time, 6)
        ([('Sending data', 0.6), ('init', 0.1)], 0.003)
    """
    response = sample.response
    ranked = sorted(sample.stages.items(), key=lambda item: (-item[1][0], item[0]))
    stages = tuple(
        RankedStage(name, time, time / response if response else 0.0, int(calls),
                    time / calls if calls else 0.0)
        for name, (time, calls) in ranked
    )  # fmt: skip
    stage_time = sum(stage.time for stage in stages)
    order = {stage.stage: n for n, stage in enumerate(stages)}
    waits = sorted(
        sample.waits.items(),
        key=lambda item: (order.get(item[0][0], len(order)), -item[1][0], item[0][1]),
    )
    return StageProfile(
        executions_sampled=sample.executions_sampled,
        executions_total=sample.executions_total,
        response=response,
        stages=stages,
        lost_time=max(response - stage_time, 0.0),
        waits_sampled=sample.waits_sampled,
        waits=tuple(
            RankedWait(stage, event, time, int(count)) for (stage, event), (time, count) in waits
        ),
    )
