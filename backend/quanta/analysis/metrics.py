"""The metrics summed per bucket: one registry that the store, the wire format and the agent
derive from.

Each :class:`Metric` says what it measures (its :class:`Kind`), which slow-log attributes and
which performance_schema digest columns give it, the column that stores its sum, and the
bound a single statement's value of it cannot exceed on the wire. The order of
:data:`METRICS` is the order of the stored sum columns and of the ingest API's fields.

Besides these, every bucket has a count, query time sum/min/max, the lock time maximum and a
latency histogram: those are not sums of one attribute and are not listed here.

Example:
    >>> METRIC["tmp_tables"].column
    'tmp_tables_sum'
    >>> [m.name for m in METRICS if m.perfschema == ("sum_sort_scan", "sum_sort_range")]
    ['filesort']
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "MAX_COUNTER",
    "MAX_STATEMENT_SECONDS",
    "METRIC",
    "METRICS",
    "PERFSCHEMA_SUMS",
    "SUM_METRICS",
    "Kind",
    "Metric",
]

MAX_COUNTER = 2**53
"""Counters above this are wrapped server counters (MariaDB logs some as 2**64 - n), not data."""

MAX_STATEMENT_SECONDS = 30 * 24 * 3600.0
"""One statement's time (query, lock, InnoDB waits): 30 days. No server runs a statement
that long; a larger value is a clock jump or a forged batch."""


class Kind(StrEnum):
    """What a metric measures; it decides its stored type and its wire type and bound."""

    SECONDS = "seconds"  # a float, stored as a double
    ROWS = "rows"
    BYTES = "bytes"
    COUNT = "count"  # of operations: temporary tables, sort passes, pages, errors...
    FLAG = "flag"  # yes/no per statement (a boolean on the wire), summed as a count of 1s


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric summed per bucket (stored as ``<name>_sum``); see the module docstring.

    Attributes:
        name: The event attribute, wire field and bucket column name.
        kind: What it measures.
        slowlog: Slow-log attributes that give it, first present wins: the Percona Server and
            MariaDB names first, then MySQL 8's ``log_slow_extra`` ones. Empty: no slow log
            gives it.
        slowlog_fallback: Attributes that stand in when none of ``slowlog`` is logged: Yes/No
            flags for a count (MariaDB's ``Tmp_table``), counts for a flag (MySQL 8 logs the
            number of sorts rather than a ``Filesort`` flag; any above 0 means yes).
        event_field: The slow-log reader gives it as a field of its events (``lock_time``,
            ``rows_*``); the others the agent reads from the events' attributes.
        perfschema: events_statements_summary_by_digest columns (lower case) whose sum gives
            it. Empty: performance_schema does not give it.
    """

    name: str
    kind: Kind
    slowlog: tuple[str, ...] = ()
    slowlog_fallback: tuple[str, ...] = ()
    event_field: bool = False
    perfschema: tuple[str, ...] = ()

    @property
    def column(self) -> str:
        """The stored sum's column (buckets and totals)."""
        return f"{self.name}_sum"

    @property
    def counter(self) -> bool:
        """An integer sum (all but the seconds)."""
        return self.kind is not Kind.SECONDS

    @property
    def statement_bound(self) -> float | None:
        """The largest value one statement may send (None: a flag, a boolean)."""
        if self.kind is Kind.FLAG:
            return None
        return MAX_STATEMENT_SECONDS if self.kind is Kind.SECONDS else MAX_COUNTER


METRICS: tuple[Metric, ...] = (
    Metric(
        "lock_time", Kind.SECONDS, ("Lock_time",), event_field=True,
        perfschema=("sum_lock_time",),
    ),
    Metric(
        "rows_sent", Kind.ROWS, ("Rows_sent",), event_field=True,
        perfschema=("sum_rows_sent",),
    ),
    Metric(
        "rows_examined", Kind.ROWS, ("Rows_examined",), event_field=True,
        perfschema=("sum_rows_examined",),
    ),
    Metric(
        "rows_affected", Kind.ROWS, ("Rows_affected",), event_field=True,
        perfschema=("sum_rows_affected",),
    ),
    Metric("bytes_sent", Kind.BYTES, ("Bytes_sent",)),
    Metric(
        "tmp_tables", Kind.COUNT, ("Tmp_tables", "Created_tmp_tables"), ("Tmp_table",),
        perfschema=("sum_created_tmp_tables",),
    ),
    Metric(
        "tmp_disk_tables", Kind.COUNT, ("Tmp_disk_tables", "Created_tmp_disk_tables"),
        ("Tmp_table_on_disk",), perfschema=("sum_created_tmp_disk_tables",),
    ),
    # A statement's sort is counted in one of these two, whichever access it sorted.
    Metric(
        "filesort", Kind.FLAG, ("Filesort",), ("Sort_scan_count", "Sort_range_count"),
        perfschema=("sum_sort_scan", "sum_sort_range"),
    ),
    Metric("filesort_on_disk", Kind.FLAG, ("Filesort_on_disk",)),
    Metric("full_scan", Kind.FLAG, ("Full_scan",), perfschema=("sum_select_scan",)),
    Metric("full_join", Kind.FLAG, ("Full_join",), perfschema=("sum_select_full_join",)),
    Metric(
        "merge_passes", Kind.COUNT, ("Merge_passes", "Sort_merge_passes"),
        perfschema=("sum_sort_merge_passes",),
    ),
    # MariaDB's innodb verbosity reports pages read and their time, the nearest to
    # InnoDB_IO_r_ops/_wait.
    Metric("innodb_io_r_ops", Kind.COUNT, ("InnoDB_IO_r_ops", "Pages_read")),
    Metric("innodb_io_r_bytes", Kind.BYTES, ("InnoDB_IO_r_bytes",)),
    Metric("innodb_io_r_wait", Kind.SECONDS, ("InnoDB_IO_r_wait", "Pages_read_time")),
    Metric("innodb_rec_lock_wait", Kind.SECONDS, ("InnoDB_rec_lock_wait",)),
    Metric("innodb_queue_wait", Kind.SECONDS, ("InnoDB_queue_wait",)),
    # From the slow log, 1 if the statement failed (its error number is not 0).
    Metric("errors", Kind.COUNT, ("Errno", "Last_errno"), perfschema=("sum_errors",)),
    # From the slow log, the lines of MySQL 8's warnings attribute.
    Metric("warnings", Kind.COUNT, ("warnings",), perfschema=("sum_warnings",)),
    Metric("no_index_used", Kind.COUNT, perfschema=("sum_no_index_used",)),
    Metric("no_good_index_used", Kind.COUNT, perfschema=("sum_no_good_index_used",)),
)  # fmt: skip
"""Every metric summed per bucket, in the order of the stored columns."""

METRIC: dict[str, Metric] = {metric.name: metric for metric in METRICS}
"""The metrics by name."""

SUM_METRICS: tuple[str, ...] = tuple(METRIC)
"""Metrics summed per bucket, by their event attribute name (stored as ``<name>_sum``)."""

PERFSCHEMA_SUMS: dict[str, tuple[str, ...]] = {
    metric.name: metric.perfschema for metric in METRICS if metric.perfschema
}
"""performance_schema columns giving each metric (their sum when several)."""
