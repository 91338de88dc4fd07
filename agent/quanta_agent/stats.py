"""Table, index and user statistics: per-interval deltas for load and unused-index findings.

Where ``userstat`` is on (MariaDB, Percona Server) the source is INFORMATION_SCHEMA
TABLE_STATISTICS, INDEX_STATISTICS and USER_STATISTICS; elsewhere it is performance_schema
``table_io_waits_summary_by_index_usage`` (one row per index, plus a NULL-index row for reads
that used none), whose sums per table give the table rows. With performance_schema on, either
way, each account's statement errors come from
``events_statements_summary_by_user_by_event_name`` (USER_STATISTICS has no error count).

Every poll after the baseline sends ``observed``, the interval it covered and whether the
counters were reset in it, even when nothing moved: the server calls an index unused only
over a window of statistics without a break, and an idle interval is not a break.

Deltas follow the performance_schema poller's rules without FIRST_SEEN: the first poll is a
baseline; a row absent from the previous poll appeared since (its whole value is the delta);
a server restart, or a FLUSH that emptied the table (every earlier row gone or lower), makes
every current value the delta; a row whose counter went down was reset on its own. Rows also
vanish one at a time (DROP TABLE), so a row gone alone is no reset; the one case these rules
cannot see is a FLUSH followed, within one interval, by more activity on every remaining
table than in its whole life before (the delta is then too small, never negative).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from quanta.analysis.metrics import MAX_COUNTER
from quanta_agent.config import InstanceSettings
from quanta_agent.mysql import MonitorConnection, MonitorError, ServerClock
from quanta_agent.perfschema import (
    PICOSECONDS_PER_SECOND,
    counters_decreased,
    monitor_connection,
)

log = logging.getLogger(__name__)

SOURCE = "stats"
MICROSECOND_DIGITS = 6
UNKNOWN_VARIABLE = "error 1193"  # ER_UNKNOWN_SYSTEM_VARIABLE
SYSTEM_SCHEMAS = ("mysql", "performance_schema", "information_schema", "sys")
Origin = Literal["userstat", "perfschema"]
Counters = Mapping[str, float]
Key = tuple[str | None, ...]

TABLE_COUNTERS = ("ROWS_READ", "ROWS_CHANGED", "ROWS_CHANGED_X_INDEXES")
INDEX_COUNTERS = ("ROWS_READ",)
# USER_STATISTICS differs between MariaDB and Percona Server: whichever of these exist.
USER_COUNTERS = (
    "TOTAL_CONNECTIONS",
    "TOTAL_SSL_CONNECTIONS",
    "CONNECTED_TIME",
    "BUSY_TIME",
    "CPU_TIME",
    "BYTES_RECEIVED",
    "BYTES_SENT",
    "BINLOG_BYTES_WRITTEN",
    "ROWS_READ",
    "ROWS_SENT",
    "ROWS_FETCHED",
    "TABLE_ROWS_READ",
    "ROWS_DELETED",
    "ROWS_INSERTED",
    "ROWS_UPDATED",
    "SELECT_COMMANDS",
    "UPDATE_COMMANDS",
    "OTHER_COMMANDS",
    "COMMIT_TRANSACTIONS",
    "ROLLBACK_TRANSACTIONS",
    "DENIED_CONNECTIONS",
    "LOST_CONNECTIONS",
    "ACCESS_DENIED",
    "EMPTY_QUERIES",
    "MAX_STATEMENT_TIME_EXCEEDED",
)
USER_GAUGES = ("CONCURRENT_CONNECTIONS",)
# performance_schema per account, next to (or instead of) USER_STATISTICS.
USER_STATEMENT_COUNTERS = ("STATEMENT_ERRORS",)
IO_COUNTERS = (
    "COUNT_STAR",
    "COUNT_READ",
    "COUNT_WRITE",
    "COUNT_FETCH",
    "COUNT_INSERT",
    "COUNT_UPDATE",
    "COUNT_DELETE",
    "SUM_TIMER_WAIT",
    "SUM_TIMER_READ",
    "SUM_TIMER_WRITE",
    "SUM_TIMER_FETCH",
    "SUM_TIMER_INSERT",
    "SUM_TIMER_UPDATE",
    "SUM_TIMER_DELETE",
)
_SYSTEM_FILTER = ", ".join(f"'{s}'" for s in SYSTEM_SCHEMAS)


@dataclass(frozen=True, slots=True)
class RowDelta:
    """How much one row's counters grew in an interval."""

    key: Key
    counters: dict[str, float]
    reset: bool = False


def diff_rows(
    prev: Mapping[Key, Counters] | None, cur: Mapping[Key, Counters], *, restarted: bool
) -> list[RowDelta]:
    """Per-row deltas between two polls (``prev`` None: first poll, a baseline: nothing).

    Rows whose counters did not move are left out.

    Example:
        >>> diff_rows({("a",): {"N": 5}}, {("a",): {"N": 7}, ("b",): {"N": 1}}, restarted=False)
        [RowDelta(key=('a',), counters={'N': 2}, reset=False), RowDelta(key=('b',), ...)]
    """
    if prev is None:
        return []
    table_reset = restarted or _emptied(prev, cur)
    out = []
    for key, row in cur.items():
        old = prev.get(key)
        if table_reset or (old is not None and counters_decreased(old, row)):
            delta = RowDelta(key, dict(row), reset=True)
        elif old is None:
            delta = RowDelta(key, dict(row))
        else:
            delta = RowDelta(key, {name: value - old.get(name, 0) for name, value in row.items()})
        if any(delta.counters.values()):
            out.append(delta)
    return out


def _emptied(prev: Mapping[Key, Counters], cur: Mapping[Key, Counters]) -> bool:
    # Rows also vanish one at a time (DROP TABLE), so only "all gone or lower" is a FLUSH.
    return bool(prev) and all(
        key not in cur or counters_decreased(prev[key], cur[key]) for key in prev
    )


@dataclass(frozen=True, slots=True)
class StatsSnapshot:
    """One reading of the statistics tables."""

    clock: ServerClock
    origin: Origin
    tables: Mapping[Key, Counters]
    indexes: Mapping[Key, Counters]
    users: Mapping[Key, Counters]
    gauges: Mapping[Key, Counters] = field(default_factory=dict)


@dataclass
class StatsCollector:
    """Polls one instance's table/index/user statistics; ``poll()`` gives one batch body."""

    conn: MonitorConnection
    name: str
    source: str = SOURCE
    _prev: StatsSnapshot | None = None
    _warned: bool = False
    _has_userstat: bool | None = None

    def poll(self) -> dict[str, Any]:
        """One poll: ``{"tables": [...], "indexes": [...], "users": [...], "observed": {...}}``,
        or {} for a baseline.

        Raises:
            MonitorError: the server cannot be reached or read (the baseline is kept).
        """
        origin = self._origin()
        if origin is None:
            return {}
        clock, _ = self.conn.server_clock()
        snapshot = self._read_userstat(clock) if origin == "userstat" else self._read_io(clock)
        if self._perfschema_on():
            snapshot = self._with_statement_errors(snapshot)
        prev, self._prev = self._prev, snapshot
        if prev is None or prev.origin != snapshot.origin:
            return {}
        return poll_body(prev, snapshot)

    def close(self) -> None:
        """Close the monitoring connection."""
        self.conn.close()

    def _origin(self) -> Origin | None:
        # SELECT @@var costs far less than SHOW VARIABLES, which builds all ~600 of them.
        if self._userstat_on():
            return "userstat"
        if self._perfschema_on():
            return "perfschema"
        if not self._warned:
            log.warning(
                "%s: neither userstat nor performance_schema is on: no statistics", self.name
            )
            self._warned = True
        return None

    def _perfschema_on(self) -> bool:
        return bool(int(self.conn.query("SELECT @@global.performance_schema AS ps")[0]["ps"]))

    def _with_statement_errors(self, snapshot: StatsSnapshot) -> StatsSnapshot:
        """The snapshot with each account's statement errors (performance_schema) added."""
        rows = self.conn.query(
            "SELECT USER, CAST(SUM(SUM_ERRORS) AS UNSIGNED) AS STATEMENT_ERRORS "
            "FROM performance_schema.events_statements_summary_by_user_by_event_name "
            "WHERE USER IS NOT NULL GROUP BY USER"
        )
        users = {key: dict(counters) for key, counters in snapshot.users.items()}
        for key, counters in _keyed(rows, ("USER",), USER_STATEMENT_COUNTERS).items():
            users[key] = {**users.get(key, {}), **counters}
        return replace(snapshot, users=users)

    def _userstat_on(self) -> bool:
        if self._has_userstat is False:
            return False
        try:
            on = self.conn.query("SELECT @@global.userstat AS on_")[0]["on_"]
        except MonitorError as exc:
            if UNKNOWN_VARIABLE not in str(exc):
                raise
            self._has_userstat = False  # MySQL: no userstat at all
            return False
        self._has_userstat = True
        return bool(int(on))

    def _read_userstat(self, clock: ServerClock) -> StatsSnapshot:
        tables = self.conn.query(
            "SELECT * FROM information_schema.TABLE_STATISTICS "
            f"WHERE TABLE_SCHEMA NOT IN ({_SYSTEM_FILTER})"
        )
        indexes = self.conn.query(
            "SELECT * FROM information_schema.INDEX_STATISTICS "
            f"WHERE TABLE_SCHEMA NOT IN ({_SYSTEM_FILTER})"
        )
        users = self.conn.query("SELECT * FROM information_schema.USER_STATISTICS")
        return StatsSnapshot(
            clock=clock,
            origin="userstat",
            tables=_keyed(tables, ("TABLE_SCHEMA", "TABLE_NAME"), TABLE_COUNTERS),
            indexes=_keyed(indexes, ("TABLE_SCHEMA", "TABLE_NAME", "INDEX_NAME"), INDEX_COUNTERS),
            users=_keyed(users, ("USER",), USER_COUNTERS),
            gauges=_keyed(users, ("USER",), USER_GAUGES),
        )

    def _read_io(self, clock: ServerClock) -> StatsSnapshot:
        rows = self.conn.query(
            f"SELECT OBJECT_SCHEMA, OBJECT_NAME, INDEX_NAME, {', '.join(IO_COUNTERS)} "
            "FROM performance_schema.table_io_waits_summary_by_index_usage "
            f"WHERE OBJECT_TYPE = 'TABLE' AND OBJECT_SCHEMA NOT IN ({_SYSTEM_FILTER})"
        )
        return StatsSnapshot(
            clock=clock,
            origin="perfschema",
            tables={},
            indexes=_keyed(rows, ("OBJECT_SCHEMA", "OBJECT_NAME", "INDEX_NAME"), IO_COUNTERS),
            users={},
        )


def _keyed(
    rows: list[dict[str, Any]], key_columns: Sequence[str], counters: Sequence[str]
) -> dict[Key, Counters]:
    return {tuple(r[k] for k in key_columns): {c: r[c] for c in counters if c in r} for r in rows}


def poll_body(prev: StatsSnapshot, cur: StatsSnapshot) -> dict[str, Any]:
    """The batch fields of the interval between two readings: rows whose counters moved,
    and ``observed``, the interval and whether its counters were reset."""
    restarted = cur.clock.restarted_since(prev.clock)
    common = {
        "origin": cur.origin,
        "interval_start": prev.clock.now.isoformat(),
        "interval_end": cur.clock.now.isoformat(),
    }
    flushed = _emptied(prev.tables, cur.tables) or _emptied(prev.indexes, cur.indexes)
    index_deltas = diff_rows(prev.indexes, cur.indexes, restarted=restarted)
    table_deltas = (
        diff_rows(prev.tables, cur.tables, restarted=restarted)
        if cur.origin == "userstat"
        else _tables_from_indexes(index_deltas)
    )
    body = {
        "tables": [_stat_wire(d, common, ("schema_name", "table_name")) for d in table_deltas],
        "indexes": [
            _stat_wire(d, common, ("schema_name", "table_name", "index_name")) for d in index_deltas
        ],
        "users": [
            _user_wire(d, cur.gauges.get(d.key, {}), common)
            for d in diff_rows(prev.users, cur.users, restarted=restarted)
        ],
    }
    reset = "restart" if restarted else "flush" if flushed else None
    return {**body, "observed": {**common, "reset": reset}}


def _tables_from_indexes(index_deltas: list[RowDelta]) -> list[RowDelta]:
    # P_S I/O per table is the sum over its index rows (the NULL-index row included).
    totals: dict[Key, dict[str, float]] = {}
    resets: set[Key] = set()
    for delta in index_deltas:
        table = delta.key[:2]
        sums = totals.setdefault(table, {})
        for name, value in delta.counters.items():
            sums[name] = sums.get(name, 0) + value
        if delta.reset:
            resets.add(table)
    return [RowDelta(key, sums, reset=key in resets) for key, sums in totals.items()]


def _stat_wire(delta: RowDelta, common: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    wire: dict[str, Any] = {**common, **dict(zip(names, delta.key, strict=True))}
    wire["reset"] = delta.reset
    for column, value in delta.counters.items():
        wire[column.lower()] = _wire_value(column, value)
    return wire


def _user_wire(delta: RowDelta, gauges: Counters, common: dict[str, Any]) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "user": delta.key[0],
        "interval_start": common["interval_start"],
        "interval_end": common["interval_end"],
        "reset": delta.reset,
    }
    for column, value in [*delta.counters.items(), *gauges.items()]:
        wire[column.lower()] = _wire_value(column, value)
    return wire


def _wire_value(column: str, value: float) -> float | int | None:
    if column.startswith("SUM_TIMER_"):
        return value / PICOSECONDS_PER_SECOND
    if isinstance(value, float):
        # BUSY_TIME/CPU_TIME seconds: a difference of doubles, to the microsecond.
        return round(max(value, 0.0), MICROSECOND_DIGITS)
    return value if value <= MAX_COUNTER else None


def make_stats_collector(instance: InstanceSettings) -> StatsCollector:
    """The table/index statistics collector for one configured instance."""
    return StatsCollector(conn=monitor_connection(instance), name=instance.name)
