"""The counters of a stats batch that the statistics store keeps per bucket of time.

Names are the wire's: the source's column names in lower case (userstat TABLE_STATISTICS,
INDEX_STATISTICS and USER_STATISTICS; performance_schema table I/O), as
quanta.ingest.schemas declares them (tests/backend/test_statistics.py pins the two together).
MariaDB and Percona Server name USER_STATISTICS' columns differently: both layouts are kept as
sent, and ``user_columns.toml`` says how each makes the Users page's figures.
"""

# Tables and indexes: userstat's rows, performance_schema's operation counts...
OBJECT_COUNTS = (
    "rows_read",
    "rows_changed",
    "rows_changed_x_indexes",
    "count_star",
    "count_read",
    "count_write",
    "count_fetch",
    "count_insert",
    "count_update",
    "count_delete",
)
# ...and its wait times, in seconds.
OBJECT_SECONDS = (
    "sum_timer_wait",
    "sum_timer_read",
    "sum_timer_write",
    "sum_timer_fetch",
    "sum_timer_insert",
    "sum_timer_update",
    "sum_timer_delete",
)
# Accounts: USER_STATISTICS in either layout, and the statements' errors performance_schema
# counts per user (events_statements_summary_by_user_by_event_name).
USER_COUNTS = (
    "total_connections",
    "total_ssl_connections",
    "bytes_received",
    "bytes_sent",
    "binlog_bytes_written",
    "rows_read",
    "rows_sent",
    "rows_fetched",
    "table_rows_read",
    "rows_deleted",
    "rows_inserted",
    "rows_updated",
    "select_commands",
    "update_commands",
    "other_commands",
    "commit_transactions",
    "rollback_transactions",
    "denied_connections",
    "lost_connections",
    "access_denied",
    "empty_queries",
    "max_statement_time_exceeded",
    "statement_errors",
)
USER_SECONDS = ("connected_time", "busy_time", "cpu_time")
# Passed through as read, not deltas: a bucket keeps the greatest (column ``<name>_max``).
USER_GAUGES = ("concurrent_connections",)

# Every summed column of a bucket, once each, in a fixed order.
COUNTS: tuple[str, ...] = tuple(dict.fromkeys((*OBJECT_COUNTS, *USER_COUNTS)))
SECONDS: tuple[str, ...] = (*OBJECT_SECONDS, *USER_SECONDS)
GAUGE_COLUMNS: dict[str, str] = {name: f"{name}_max" for name in USER_GAUGES}

# An index's (or a table's) reads, in order of preference: userstat's rows read, then
# performance_schema's read and fetch operations (one per row read).
READ_COUNTERS = ("rows_read", "count_read", "count_fetch")
# Rows written: userstat's rows changed, else performance_schema's write operations.
CHANGE_COUNTERS = ("rows_changed", "count_write")
# performance_schema's table I/O write operations, one per row written.
WRITE_COUNTERS = ("count_insert", "count_update", "count_delete")


def first_of(counters: dict[str, float | None], names: tuple[str, ...]) -> float | None:
    """The first of ``names`` the counters hold (None: none of them).

    Example:
        >>> first_of({"count_read": 4, "count_fetch": 4}, READ_COUNTERS)
        4
    """
    for name in names:
        value = counters.get(name)
        if value is not None:
            return value
    return None
